"""One recipe node as an execution (ROS ExecuteNode): the node wrapped in a one-node recipe.

A hub that splits a recipe across robots sends single nodes; the executor still applies every
per-node check of its own (decision 4) and runs the node with the same engine, so the result
(envelope held, rung, summary, deviation) comes from the same ExecutionLog step record.
"""

from __future__ import annotations

import copy
import uuid

from cookwala_ros import CORE_VERSION
from cookwala_ros.core.dryrun import PrecheckResult, precheck
from cookwala_ros.core.request_checks import RequestContext
from cookwala_ros.core.trust import document_hash
from cookwala_ros.executor.events import rfc3339


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
