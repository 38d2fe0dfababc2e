"""The halts the safety monitor and the executor publish are ones a JointTrajectoryController accepts.

The contract followed is ros2_controllers 5.17.0 (kilted) `validate_trajectory_msg` (the same in
4.42.1/jazzy and 6.9.0/master; see cookwala_ros/robot/joint_trajectory.py). arm_sim applies it
to every trajectory, so a halt it rejected would leave the arm moving: each test drives the arm
at speed, lets the real node publish its halt, checks the message with `jtc_problems` and that
arm_sim accepted it and stood still where the halt said.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.lifecycle import TransitionCallbackReturn
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from cookwala_msgs.srv import Stop
from cookwala_ros.core.run_types import Commands, HeatCommand
from cookwala_ros.device import load_device_config
from cookwala_ros.robot.joint_trajectory import jtc_problems
from cookwala_ros.ros import qos
from cookwala_ros.ros.arm_sim_node import ArmSimNode
from cookwala_ros.ros.convert import trajectory_data
from cookwala_ros.ros.executor_io import DeviceIO
from cookwala_ros.ros.executor_params import PARAMETERS as EXECUTOR_PARAMETERS
from cookwala_ros.ros.heater_sim_node import HeaterSimNode
from cookwala_ros.ros.safety_monitor_node import SafetyMonitorNode
from ros_helpers import RosHarness

STILL = 0.01  # rad/s


@pytest.fixture
def kitchen():
    with RosHarness() as ros:
        arm = ros.add(ArmSimNode(context=ros.context))
        ros.add(HeaterSimNode(context=ros.context, parameter_overrides=[Parameter("command_timeout_s", value=0.0)]))
        probe = ros.node("halt_probe")
        received = []  # (steady receipt time, JointTrajectory)
        probe.create_subscription(JointTrajectory, "/arm_controller/joint_trajectory",
                                  lambda m: received.append((time.monotonic(), m)), qos.command())
        states = ros.collect(probe, JointState, "/joint_states")
        drive = probe.create_publisher(JointTrajectory, "/arm_controller/joint_trajectory", qos.command())
        assert ros.wait_for(lambda: drive.get_subscription_count() >= 2 and states)  # arm_sim and the probe
        yield ros, arm, probe, drive, states, received


def sweep(ros, arm, drive, states):
    """Every joint moving fast towards the far side of its range."""
    names = arm.arm.joint_names
    target = np.clip(np.array(states[-1].position) + 3.0, arm.arm.lower, arm.arm.upper)
    point = JointTrajectoryPoint(positions=[float(x) for x in target], time_from_start=Duration(sec=1))
    drive.publish(JointTrajectory(joint_names=list(names), points=[point]))
    assert ros.wait_for(lambda: max(abs(v) for v in states[-1].velocity) > 1.0, timeout=5.0)


def check_halt(ros, arm, states, received, since):
    """The halts published after `since` pass the JTC's checks, and arm_sim stops and holds there."""
    assert ros.wait_for(lambda: any(t > since for t, _ in received), timeout=5.0)
    halts = [m for t, m in received if t > since]
    for halt in halts:
        assert jtc_problems(trajectory_data(halt), arm.arm.joint_names) == [], halt
        assert list(halt.joint_names) == list(arm.arm.joint_names) and len(halt.points) == 1
        assert not any(halt.points[0].velocities) and halt.points[0].time_from_start.nanosec > 0
    assert ros.wait_for(lambda: max(abs(v) for v in states[-1].velocity) < STILL, timeout=5.0)
    time.sleep(0.3)  # at rest where the last halt put it
    last = [m for t, m in received if t > since][-1]
    np.testing.assert_allclose(states[-1].position, last.points[0].positions, atol=1e-3)
    assert arm.rejected == 0


def test_the_monitors_halt_is_accepted_by_the_controller(kitchen, tmp_path):
    ros, arm, probe, drive, states, received = kitchen
    monitor = SafetyMonitorNode(context=ros.context, parameter_overrides=[
        Parameter("autostart", value=False), Parameter("state_dir", value=str(tmp_path))])
    ros.add(monitor)
    ros.add(monitor.stop_inputs)
    assert monitor.trigger_configure() == TransitionCallbackReturn.SUCCESS, monitor.config_error
    assert ros.wait_for(lambda: monitor._halt_joints is not None, timeout=5.0)  # it has heard the arm
    sweep(ros, arm, drive, states)
    client = probe.create_client(Stop, "/safety_monitor/stop", callback_group=ReentrantCallbackGroup())
    assert client.wait_for_service(timeout_sec=5.0)
    since = time.monotonic()
    future = client.call_async(Stop.Request(requested_by="test", reason="halt contract"))
    assert ros.wait_for(future.done, timeout=5.0) and future.result().accepted
    check_halt(ros, arm, states, received, since)


def test_the_executors_halt_is_accepted_by_the_controller(kitchen):
    ros, arm, probe, drive, states, received = kitchen
    device = load_device_config()
    node = ros.node("executor_io_probe")
    values = {spec.name: spec.default for spec in EXECUTOR_PARAMETERS}  # the executor node's defaults
    io = DeviceIO(node, device, values, ReentrantCallbackGroup())
    assert ros.wait_for(lambda: io.joints is not None, timeout=5.0)
    sweep(ros, arm, drive, states)
    since = time.monotonic()
    io.apply(Commands(heater=HeatCommand.off(), arm_halt=True))
    check_halt(ros, arm, states, received, since)
