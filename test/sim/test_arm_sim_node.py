"""arm_sim over real topics: JointTrajectory in, JointState out, on a test-driven /clock."""

from __future__ import annotations

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from cookwala_ros.robot.joint_trajectory import HoldBuilder, jtc_problems
from cookwala_ros.ros import qos
from cookwala_ros.ros.arm_sim_node import ArmSimNode
from cookwala_ros.ros.convert import halt_trajectory_msg, trajectory_data
from cookwala_ros.ros.params import ParameterError
from ros_helpers import RosHarness

PERIOD_NS = 10_000_000  # arm_sim's default publish period (100 Hz)
T0_NS = 1_000 * 1_000_000_000


def stamp_ns(msg) -> int:
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def trajectory(names, positions, seconds):
    msg = JointTrajectory()
    msg.joint_names = list(names)
    if positions is not None:
        point = JointTrajectoryPoint()
        point.positions = [float(x) for x in positions]
        sec = int(seconds)
        point.time_from_start = Duration(sec=sec, nanosec=int(round((seconds - sec) * 1e9)))
        msg.points = [point]
    return msg


class ManualClock:
    """The test owns /clock: sim time moves only when told, in lock-step with the arm."""

    def __init__(self, ros, probe, states):
        self.ros, self.states, self.now_ns = ros, states, T0_NS
        self.publisher = probe.create_publisher(Clock, "/clock", qos.clock())

    def publish(self):
        msg = Clock()
        msg.clock.sec, msg.clock.nanosec = divmod(self.now_ns, 1_000_000_000)
        self.publisher.publish(msg)

    def advance(self, total_ns: int, step_ns: int = PERIOD_NS):
        """Advance by total_ns, waiting after each step for the arm's state at the new time."""
        end = self.now_ns + total_ns
        while self.now_ns < end:
            self.now_ns = min(self.now_ns + step_ns, end)
            assert self._publish_until_seen(self.now_ns), f"arm_sim published no state for sim time {self.now_ns}"

    def _publish_until_seen(self, target: int) -> bool:
        # /clock is best effort: re-send until the arm's state shows it has seen it
        for _ in range(250):
            self.publish()
            if self.ros.wait_for(lambda: self.states and stamp_ns(self.states[-1]) >= target, timeout=0.02,
                                 interval=0.0005):
                return True
        return False


@pytest.fixture
def scene():
    with RosHarness() as ros:
        arm_node = ros.add(ArmSimNode(context=ros.context, parameter_overrides=[Parameter("use_sim_time", value=True)]))
        probe = ros.node("arm_probe", sim_time=True)
        states = ros.collect(probe, JointState, "/joint_states")
        commands = probe.create_publisher(JointTrajectory, "/arm_controller/joint_trajectory", qos.command())
        clock = ManualClock(ros, probe, states)
        clock.publish()
        assert ros.wait_for(lambda: commands.get_subscription_count() >= 1 and states, timeout=10.0)
        assert ros.wait_for_subscribers(clock.publisher)
        clock.advance(PERIOD_NS)
        yield ros, arm_node, clock, commands, states


def send_and_wait(ros, commands, states, msg, at_ns):
    """Publish a command while sim time stands still; the arm acknowledges with a state at that time."""
    before = sum(1 for s in states if stamp_ns(s) == at_ns)
    commands.publish(msg)
    assert ros.wait_for(lambda: sum(1 for s in states if stamp_ns(s) == at_ns) > before, timeout=5.0)


def drive_at_velocity_limits(ros, clock, commands, states, arm):
    names = arm.joint_names
    start = arm.lower * 0.9
    send_and_wait(ros, commands, states, trajectory(names, start, 3.0), clock.now_ns)
    clock.advance(4_000_000_000, step_ns=500_000_000)
    np.testing.assert_allclose(states[-1].position, start, atol=1e-6)
    # every joint at its velocity limit along a straight line
    send_and_wait(ros, commands, states, trajectory(names, start + arm.max_velocity * 1.5, 1.5), clock.now_ns)
    clock.advance(500_000_000)
    assert list(states[-1].name) == list(names)
    np.testing.assert_allclose(states[-1].velocity, arm.max_velocity, rtol=1e-9)


def test_the_hold_halt_stops_every_joint_from_its_velocity_limit(scene):
    ros, arm_node, clock, commands, states = scene
    arm = arm_node.arm
    drive_at_velocity_limits(ros, clock, commands, states, arm)
    stop_ns = clock.now_ns
    halt = halt_trajectory_msg(HoldBuilder.from_arm(arm), states[-1])  # what the monitor and the executor send
    assert jtc_problems(trajectory_data(halt), arm.joint_names) == []
    send_and_wait(ros, commands, states, halt, stop_ns)
    bound_ns = int(np.max(arm.max_velocity / arm.max_acceleration) * 1e9) + 5 * PERIOD_NS
    clock.advance(bound_ns + 20 * PERIOD_NS)
    after = [s for s in states if stamp_ns(s) > stop_ns]
    stopped = [s for s in after if np.all(np.abs(s.velocity) < 0.01)]
    assert stopped, "the arm never stopped"
    assert stamp_ns(stopped[0]) - stop_ns <= bound_ns
    clock.advance(20 * PERIOD_NS)
    np.testing.assert_allclose(states[-1].position, halt.points[0].positions, atol=1e-6)  # and it holds there
    np.testing.assert_array_equal(states[-1].velocity, np.zeros(6))
    assert arm_node.rejected == 0


def rejected_messages(names):
    named_empty = JointTrajectory(joint_names=list(names))  # the monitor's old halt
    with_effort = trajectory(names, [0.0] * len(names), 1.0)
    with_effort.points[0].effort = [1.0] * len(names)
    not_increasing = trajectory(names, [0.0] * len(names), 1.0)
    not_increasing.points.append(JointTrajectoryPoint(positions=[0.1] * len(names),
                                                      time_from_start=Duration(sec=1)))
    no_names = trajectory(names, [0.0] * len(names), 1.0)
    no_names.joint_names = []
    return {"empty": JointTrajectory(), "named empty": named_empty, "effort": with_effort,
            "times not increasing": not_increasing, "no joint names": no_names}


@pytest.mark.parametrize("case", sorted(rejected_messages(("a",))))
def test_what_the_real_controller_rejects_is_rejected_and_the_arm_keeps_moving(scene, case):
    """As ros2_controllers 5.17.0 (kilted) validate_trajectory_msg: rejected, current motion kept."""
    ros, arm_node, clock, commands, states = scene
    arm = arm_node.arm
    msg = rejected_messages(arm.joint_names)[case]
    assert jtc_problems(trajectory_data(msg), arm.joint_names)
    drive_at_velocity_limits(ros, clock, commands, states, arm)
    commands.publish(msg)
    assert ros.wait_for(lambda: arm_node.rejected == 1, timeout=5.0)
    clock.advance(100_000_000)
    np.testing.assert_allclose(states[-1].velocity, arm.max_velocity, rtol=1e-9)  # still at full speed


def test_trajectory_reaches_a_pose_and_bad_ones_are_rejected(scene):
    ros, arm_node, clock, commands, states = scene
    names = arm_node.arm.joint_names
    target = [0.3, 0.2, 1.0, 1.0, 0.5, -0.5]
    send_and_wait(ros, commands, states, trajectory(names, target, 1.0), clock.now_ns)
    bad = trajectory(["elbow_joint", "no_such_joint"], [0.0, 0.0], 1.0)
    commands.publish(bad)  # rejected: must not disturb the running trajectory
    clock.advance(2_000_000_000, step_ns=100_000_000)
    np.testing.assert_allclose(states[-1].position, target, atol=1e-6)
    np.testing.assert_array_equal(states[-1].velocity, np.zeros(6))


def test_faults_are_injected_with_set_parameters(scene):
    ros, arm_node, clock, commands, states = scene
    names = arm_node.arm.joint_names
    result = arm_node.set_parameters([Parameter("fault.stuck_joints", value="elbow_joint")])
    assert result[0].successful
    refused = arm_node.set_parameters([Parameter("fault.stuck_joints", value="elbow_joint,knee_joint")])
    assert not refused[0].successful and "knee_joint" in refused[0].reason
    before = np.array(states[-1].position)
    send_and_wait(ros, commands, states, trajectory(names, before + 0.2, 0.5), clock.now_ns)
    clock.advance(1_000_000_000, step_ns=100_000_000)
    moved = np.array(states[-1].position) - before
    elbow = names.index("elbow_joint")
    assert moved[elbow] == 0.0 and np.all(np.abs(np.delete(moved, elbow) - 0.2) < 1e-6)
    assert arm_node.set_parameters([Parameter("fault.frozen_encoder", value=True)])[0].successful
    frozen = list(states[-1].position)
    send_and_wait(ros, commands, states, trajectory(names, before, 0.5), clock.now_ns)
    clock.advance(1_000_000_000, step_ns=100_000_000)
    assert list(states[-1].position) == frozen


@pytest.mark.parametrize(
    "name, value, expected",
    [
        ("initial_pose", "nowhere", "initial_pose"),
        ("publish_rate_hz", 0.0, "publish_rate_hz"),
        ("fault.stuck_joints", "knee_joint", "fault.stuck_joints"),
        ("robot_description_file", "/nonexistent/arm.urdf", "robot_description_file"),
    ],
)
def test_bad_parameters_stop_the_node_naming_the_parameter(name, value, expected):
    with RosHarness() as ros:
        with pytest.raises(ParameterError, match=f"parameter '{expected}'"):
            ArmSimNode(context=ros.context, parameter_overrides=[Parameter(name, value=value)])
