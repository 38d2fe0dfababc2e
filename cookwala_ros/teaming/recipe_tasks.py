"""A recipe's process nodes as contract-net tasks (the jobs a team plan schedules).

One task per node, id `recipeId#nodeId` (the bare node id when the recipe has no id), its op,
and its predecessors from the recipe graph exactly as the dry run orders nodes
(`core.dryrun.node_predecessors`: explicit edges, and inputs or `into` naming another node's
output). Its duration is the node's planning time: `until.nominalTime` ("typical duration for
planning"), else `until.minTime`, else `until.maxTime`, else an ISO 8601 `params.duration`,
else the op's vocabulary default, else DEFAULT_TASK_S, named in the plan's assumptions.
Its needs: the classes of the node's non-optional equipment, and `attended` when the recipe
itself asks for a person at the node (its supervision level or `neverLeave`). Its resources: the
recipe's vessels, heat appliances and cutting boards it uses (REASONING.md §5.3: "burners, oven
cavities, vessels and counter zones"), as `recipeId#ref`: one pot, one hob, whoever holds it, so
no two tasks use them at once (tools such as a spoon are each robot's own). Nodes a robot may
not do (`assignment.allowed` without robot or any) are listed separately: no robot bids for them.
Malformed input raises ValueError naming the JSON pointer of the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cookwala_ros.core import dryrun
from cookwala_ros.core.conditions import UntilTracker, format_duration, parse_duration
from cookwala_ros.teaming.bidder import default_duration_s
from cookwala_ros.teaming.types import Answer, Decline, Task, TaskNeeds

DEFAULT_TASK_S = 60.0  # a node with no time window and no vocabulary default
SHARED_CLASSES = ("cw.eq.vessel.", "cw.eq.heat.", "cw.eq.tool.cutting_board")  # equipment two tasks cannot share at once
ROBOT_ROLES = {"robot", "any"}


@dataclass(frozen=True)
class RecipeTasks:
    tasks: tuple[Task, ...]
    node_of: dict[str, str]  # task id -> node id
    robot_forbidden: frozenset[str]  # task ids whose node allows no robot
    assumptions: tuple[str, ...]


def _strings(value: Any, pointer: str) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{pointer}: must be an array of strings")


def _check_shape(recipe: dict, nodes: list[dict]) -> dict[str, dict]:
    """Shape checks the graph helpers rely on; the recipe's equipment catalogue (ref -> item)."""
    edges = recipe["process"].get("edges")
    if edges is not None and edges != "implicit-from-inputs" and not isinstance(edges, list):
        raise ValueError('/process/edges: must be an array of edges or "implicit-from-inputs"')
    for i, edge in enumerate(edges if isinstance(edges, list) else []):
        if not isinstance(edge, dict) or not isinstance(edge.get("from"), str) or not isinstance(edge.get("to"), str):
            raise ValueError(f"/process/edges/{i}: must be an object with string from and to")
    equipment = recipe.get("equipment", [])
    if not isinstance(equipment, list):
        raise ValueError("/equipment: must be an array")
    catalogue = {}
    for i, item in enumerate(equipment):
        if not isinstance(item, dict) or not isinstance(item.get("ref"), str):
            raise ValueError(f"/equipment/{i}/ref: required string")
        if "class" in item and not isinstance(item["class"], str):
            raise ValueError(f"/equipment/{i}/class: must be a string")
        catalogue[item["ref"]] = item
    safety = recipe.get("safety", {})
    if not isinstance(safety, dict):
        raise ValueError("/safety: must be an object")
    for i, node in enumerate(nodes):
        at = f"/process/nodes/{i}"
        if not node["id"]:
            raise ValueError(f"{at}/id: must not be empty")
        for key in ("inputs", "equipment"):
            if key in node:
                _strings(node[key], f"{at}/{key}")
        for key in ("output", "into"):
            if key in node and not isinstance(node[key], str):
                raise ValueError(f"{at}/{key}: must be a string")
        for ref in node.get("equipment", []):
            if ref not in catalogue:
                raise ValueError(f"{at}/equipment: {ref!r} is not in the recipe's equipment")
        assignment = node.get("assignment", {})
        if not isinstance(assignment, dict):
            raise ValueError(f"{at}/assignment: must be an object")
        if "allowed" in assignment:
            _strings(assignment["allowed"], f"{at}/assignment/allowed")
    return catalogue


def _duration(node: dict, at: str) -> float | None:
    window = UntilTracker(node.get("until"), f"{at}/until").window
    if window.expected_s is not None:
        return window.expected_s
    duration = (node.get("params") or {}).get("duration")
    if duration is not None:
        return parse_duration(duration, f"{at}/params/duration")
    return default_duration_s(node["op"])


def recipe_tasks(recipe: Any) -> RecipeTasks:
    """The tasks of `recipe` in recipe order; ValueError naming the field when it is malformed."""
    nodes = dryrun.recipe_nodes(recipe)
    catalogue = _check_shape(recipe, nodes)
    predecessors = dryrun.node_predecessors(recipe)
    recipe_id = recipe.get("id")
    prefix = f"{recipe_id}#" if isinstance(recipe_id, str) and recipe_id else ""
    tasks, node_of, forbidden, assumptions = [], {}, set(), []
    for i, node in enumerate(nodes):
        at = f"/process/nodes/{i}"
        task_id = prefix + node["id"]
        duration = _duration(node, at)
        if duration is None:
            duration = DEFAULT_TASK_S
            assumptions.append(f"{node['id']} ({node['op']}) gives no duration: planned as {format_duration(duration)}")
        required = [ref for ref in node.get("equipment", []) if not catalogue[ref].get("optional")]
        classes = [catalogue[ref]["class"] for ref in required if catalogue[ref].get("class")]
        resources = [prefix + ref for ref in required
                     if str(catalogue[ref].get("class", "")).startswith(SHARED_CLASSES)]
        attended = dryrun._recipe_presence_reason(recipe, node["id"]) is not None
        try:
            task = Task(task_id, node["op"], duration, tuple(prefix + p for p in predecessors[node["id"]]),
                        TaskNeeds(tuple(dict.fromkeys(classes)), (), attended), tuple(dict.fromkeys(resources)))
        except ValueError as error:
            raise ValueError(f"{at}/{error}") from None
        allowed = set(node.get("assignment", {}).get("allowed") or ["any"])
        if not allowed & ROBOT_ROLES:
            forbidden.add(task_id)
        tasks.append(task)
        node_of[task_id] = node["id"]
    return RecipeTasks(tuple(tasks), node_of, frozenset(forbidden), tuple(assumptions))


def enforce_assignment(recipe: RecipeTasks, answer: Answer) -> Answer:
    """A robot's answer for a node the recipe keeps from robots (`robot_forbidden`) becomes its
    decline (`other`, naming the node): the bidder judges a task, not the recipe around it."""
    if answer.task_id not in recipe.robot_forbidden:
        return answer
    node = recipe.node_of.get(answer.task_id, answer.task_id)
    return Decline(answer.cfp_id, answer.actor_id, answer.task_id, "other",
                   f"the recipe does not let a robot do node {node} (assignment.allowed)")
