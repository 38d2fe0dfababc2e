"""The executor's goal checks on hostile JSON (pure: the functions its action servers call before
accepting a goal). A goal that breaks them is rejected; nothing it holds may end the node."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from cookwala_ros.ros.executor_node import goal_problem, node_goal_problem
from executor_recipes import boil_recipe, request_for

HOSTILE = {
    "nested arrays": "[" * 1000 + "]" * 1000,
    "nested objects": '{"a":' * 1000 + "1" + "}" * 1000,
    "a 100,000-digit number": '{"servings": ' + "9" * 100_000 + "}",
    "not JSON": "{'core': '0.2.0'}",
    "an array": "[1, 2]",
    "empty": "",
}


def recipe_goal(request_json: str) -> SimpleNamespace:
    return SimpleNamespace(request_json=request_json, recipe_ref="", recipe_hash="", idempotency_key="", servings=0.0)


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_request_json_is_a_reason_to_reject_never_an_exception(text):
    problem = goal_problem(recipe_goal(text))
    assert problem and problem.startswith("request_json"), problem


def node_goal(node_json: str, target_json: str = "", envelope_json: str = "") -> SimpleNamespace:
    return SimpleNamespace(node_json=node_json, target_json=target_json, envelope_json=envelope_json)


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_node_json_is_a_reason_to_reject_never_an_exception(text):
    problem = node_goal_problem(node_goal(text))
    assert problem and problem.startswith("node_json"), problem


SIMMER = {"id": "s1", "op": "cw.op.simmer", "until": {"minTime": "PT7M", "maxTime": "PT20M"}}
TARGET = {"sensor": "cw.sense.liquid_temp", "value": 90, "unit": "degC", "tolerance": 4}


@pytest.mark.parametrize("node, target, message", [
    ({**SIMMER, "params": 5}, TARGET, "node_json/params"),  # once a TypeError in the executor
    ({**SIMMER, "until": "x"}, None, "node_json/until: must be object"),  # once a ValueError from the engine
    ({**SIMMER, "until": {"all": 5, "maxTime": "PT1M"}}, None, "node_json/until/all"),  # once a TypeError per tick
    ({**SIMMER, "until": {"minTime": 5}}, None, "node_json/until/minTime"),
    ({**SIMMER, "onTimeout": 5}, None, "node_json/onTimeout"),
    (SIMMER, {"value": "hot"}, "target_json"),
    (SIMMER, [1], "target_json: must be a JSON object"),
    ({"id": 5, "op": "cw.op.simmer"}, None, "node_json must be a recipe Node"),
])
def test_a_node_of_the_wrong_shape_is_a_reason_to_reject(node, target, message):
    problem = node_goal_problem(node_goal(json.dumps(node), json.dumps(target) if target is not None else ""))
    assert problem and message in problem, problem


def test_a_well_formed_node_goal_passes():
    assert node_goal_problem(node_goal(json.dumps(SIMMER), json.dumps(TARGET), "{}")) is None


def test_a_well_formed_goal_passes_and_a_deep_one_says_how_deep():
    assert goal_problem(recipe_goal(json.dumps(request_for(boil_recipe())))) is None
    assert "1000 levels" in goal_problem(recipe_goal(HOSTILE["nested arrays"]))


@pytest.mark.parametrize("node, target", [({**SIMMER, "params": 5}, TARGET), ({**SIMMER, "until": "x"}, None)])
def test_start_node_answers_a_bad_shape_with_a_service_error(service, node, target):
    """What the action's result carries when a goal gets past the goal check (issue 15)."""
    from cookwala_ros.executor.service import ServiceError

    with pytest.raises(ServiceError) as caught:
        service().start_node(node, target)
    assert caught.value.code == "invalid_request" and caught.value.pointer.startswith("/node_json/")


def test_a_node_the_engine_cannot_read_is_an_invalid_request_with_nothing_stored(device_config, kitchen):
    from cookwala_ros.executor.service import ExecutorService, ServiceError
    from executor_kitchen import KitchenPorts

    def engine_refuses(*_):
        raise ValueError("/process/nodes/0/until: the engine cannot read it")

    svc = ExecutorService(device_config(), KitchenPorts(kitchen), clock=lambda: kitchen.now, run_factory=engine_refuses)
    try:
        with pytest.raises(ServiceError, match="the engine cannot read it") as caught:
            svc.start_node(SIMMER, TARGET, idempotency_key="k1")
        assert caught.value.code == "invalid_request"
        assert svc.store.idempotency("node", "k1") is None  # the key stays free for a corrected node
    finally:
        svc.close()
