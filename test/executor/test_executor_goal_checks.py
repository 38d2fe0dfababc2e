"""The executor's goal checks on hostile JSON (pure: the functions its action servers call before
accepting a goal). A goal that breaks them is rejected; nothing it holds may end the node."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from cookwala_ros.ros.executor_node import _is_json_object, goal_problem
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


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_node_json_is_not_a_json_object(text):
    assert _is_json_object(text) is False


def test_a_well_formed_goal_passes_and_a_deep_one_says_how_deep():
    assert goal_problem(recipe_goal(json.dumps(request_for(boil_recipe())))) is None
    assert "1000 levels" in goal_problem(recipe_goal(HOSTILE["nested arrays"]))
