"""One recipe node as an execution (ROS ExecuteNode): the node wrapped in a one-node recipe.

A hub that splits a recipe across robots sends single nodes; the executor still applies every
per-node check of its own (decision 4) and runs the node with the same engine, so the result
(envelope held, rung, summary, deviation) comes from the same ExecutionLog step record.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

from cookwala_ros import CORE_VERSION
from cookwala_ros.core.dryrun import PrecheckResult, precheck
from cookwala_ros.core.request_checks import RequestContext
from cookwala_ros.core.trust import document_hash
from cookwala_ros.executor.events import rfc3339


def node_problem(node: Any, target: Any) -> tuple[str, str] | None:
    """(pointer, message) of the first reason `node` with `target` cannot be run, or None.

    The wrapped node is checked against the Recipe schema, as a library recipe's nodes are: the
    engine reads `until`, `params` and `onTimeout` trusting that shape (issue 15)."""
    if not isinstance(node, dict) or not isinstance(node.get("id"), str) or not isinstance(node.get("op"), str):
        return "/node_json", "node_json must be a recipe Node with string id and op"
    if target is not None and not isinstance(target, dict):
        return "/target_json", "target_json must be a Target object"
    if target and not isinstance(node.get("params", {}), dict):
        return "/node_json/params", "node_json/params must be an object to take target_json"
    from cookwala_ros.core import schemas

    prefix = "/process/nodes/0"
    for issue in schemas.validate(recipe_for(with_target(node, target)), "Recipe"):
        if issue.pointer == prefix or issue.pointer.startswith(prefix + "/"):
            rest = issue.pointer[len(prefix):]
            if target and rest.startswith("/params/target"):
                pointer = "/target_json" + rest[len("/params/target"):]
            else:
                pointer = "/node_json" + rest
            return pointer, f"{pointer[1:]}: {issue.message}"
    return None


def with_target(node: dict, target: dict | None) -> dict:
    node = copy.deepcopy(node)
    if target:
        node.setdefault("params", {})
        node["params"]["target"] = target
    node.pop("inputs", None)  # the other nodes are not here; ingredients come with the hub's plan
    node.pop("equipment", None)  # equipment refs point into a recipe this device does not have
    return node


def recipe_for(node: dict) -> dict:
    return {"cookwala": CORE_VERSION, "id": f"node-{node['id']}", "revision": 1,
            "dish": {"names": {"en": f"node {node['id']}"}}, "yield": {"servings": 1},
            "ingredients": [], "equipment": [], "process": {"nodes": [node]},
            "safety": {"hazards": [], "supervision": {"default": "unattended_ok"}}}


def request_for(recipe: dict, key: str | None) -> dict:
    request = {"core": CORE_VERSION, "kind": "ExecuteRequest", "id": f"node-req-{uuid.uuid4().hex[:12]}",
               "recipe": recipe["id"], "recipeHash": document_hash(recipe), "requestedBy": "ros:execute_node"}
    if key is not None:
        request["idempotencyKey"] = key
    return request


def precheck_node(recipe: dict, config, *, busy: bool, human_present: bool, demoted: set, now_s: float,
                  limits: dict | None = None, safety_hold: str | None = None) -> PrecheckResult:
    now = rfc3339(now_s)
    ctx = RequestContext(busy=busy, safety_hold=safety_hold, now=now)
    return precheck(recipe, config.capabilities, limits=limits if limits is not None else config.limits,
                    human_present=human_present,
                    altitude_m=config.altitude_m, now=now, request=ctx, demoted_sensors=demoted)
