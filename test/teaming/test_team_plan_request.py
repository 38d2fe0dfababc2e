"""The coordinator's plan requests: what it accepts, and a refusal naming the field otherwise."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("rclpy")

from cookwala_ros.ros.team.coordinator_node import BadRequest, PlanRequest  # noqa: E402

BASE = {"requestId": "r1", "recipe": {"id": "soup"}}


def test_a_plan_only_request_and_one_to_carry_out():
    plain = PlanRequest.parse(json.dumps(BASE))
    assert (plain.execute, plain.executors, plain.robots, plain.window_s) == (False, (), (), None)
    run = PlanRequest.parse(json.dumps({**BASE, "execute": True, "robots": ["robot:b", "robot:a", "robot:b"],
                                        "executors": {"robot:b": "/robot_b/executor/execute_node",
                                                      "robot:a": "/robot_a/executor/execute_node"}}))
    assert run.execute and run.robots == ("robot:b", "robot:a")
    assert run.executors == (("robot:a", "/robot_a/executor/execute_node"), ("robot:b", "/robot_b/executor/execute_node"))


@pytest.mark.parametrize("extra, pointer", [
    ({"execute": "yes"}, "/execute"),
    ({"execute": 1}, "/execute"),
    ({"executors": ["/robot_a/executor/execute_node"]}, "/executors"),
    ({"executors": {"robot:a": "robot_a/executor"}}, "/executors/robot:a"),  # not fully qualified
    ({"executors": {"robot:a": "/robot a/executor"}}, "/executors/robot:a"),
    ({"executors": {"robot:a": "/robot_a//executor"}}, "/executors/robot:a"),
    ({"executors": {"robot:a": 7}}, "/executors/robot:a"),
    ({"windowS": 0}, "/windowS"),
    ({"robots": "robot:a"}, "/robots"),
])
def test_a_bad_field_is_named(extra, pointer):
    with pytest.raises(BadRequest) as error:
        PlanRequest.parse(json.dumps({**BASE, **extra}))
    assert str(error.value).startswith(pointer + ":"), error.value
