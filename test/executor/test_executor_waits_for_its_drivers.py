"""No cook starts before the executor hears the drivers its device has (real rclpy, in-process).

Its first heat step would otherwise find no temperature and give up the sensor at once (a
kitchen that just came up on a busy host: each pair of processes discovers the other on its own).
The executor refuses `busy` with the reason and says on /diagnostics whether it would cook.
"""

from __future__ import annotations

import json

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

from executor_recipes import boil_recipe, request_for
from cookwala_msgs.msg import HeaterState
from cookwala_ros.ros import qos
from cookwala_ros.ros.executor_node import ExecutorNode
from cookwala_ros.ros.readiness import executor_readiness
from ros_helpers import RosHarness


@pytest.mark.timeout(90)
def test_a_cook_is_refused_until_the_heater_and_the_arm_were_heard(tmp_path):
    recipe = boil_recipe()
    (tmp_path / "data" / "recipes").mkdir(parents=True)
    (tmp_path / "data" / "recipes" / "boil.cookwala.json").write_text(json.dumps(recipe))
    values = {"data_dir": str(tmp_path / "data"), "http_port": 0, "safety_monitor_node": "none",
              "presence_default": True}
    with RosHarness() as ros:
        node = ros.add(ExecutorNode(context=ros.context,
                                    parameter_overrides=[Parameter(k, value=v) for k, v in values.items()]))
        probe = ros.node("readiness_probe")
        said: list[tuple[bool, str]] = []
        probe.create_subscription(DiagnosticArray, "/diagnostics",
                                  lambda m: said.append(executor_readiness(m)) if executor_readiness(m) else None,
                                  qos.sensor())
        assert ros.wait_for(lambda: said, timeout=30), "no readiness on /diagnostics"
        assert said[-1][0] is False and "no heater state on heater/state yet" in said[-1][1], said[-1]

        refused, _ = node.service.start_execution(request_for(recipe))
        assert refused["state"] == "refused", refused
        assert refused["refusal"]["reason"] == "busy" and "heater driver" in refused["refusal"]["detail"], refused

        heater = probe.create_publisher(HeaterState, "/heater/state", qos.sensor())
        joints = probe.create_publisher(JointState, "/joint_states", qos.sensor())
        assert ros.wait_for_subscribers(heater, timeout=30)
        heater.publish(HeaterState(medium_temp_c=20.0, pan_surface_temp_c=20.0, medium_sensor_ok=True,
                                   pan_sensor_ok=True))
        assert ros.wait_for(lambda: said[-1][0] is False and "no joint states" in said[-1][1], timeout=10), said[-1]
        assert ros.wait_for_subscribers(joints, timeout=30)
        joints.publish(JointState(name=["j1"], position=[0.0], velocity=[0.0]))
        assert ros.wait_for(lambda: said[-1] == (True, ""), timeout=10), said[-1]
        accepted, _ = node.service.start_execution(request_for(recipe))
        assert accepted["state"] != "refused", accepted
