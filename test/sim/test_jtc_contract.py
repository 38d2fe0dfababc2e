"""The JointTrajectoryController's contract for incoming trajectories, and the halt that meets it.

Follows ros2_controllers 5.17.0 (kilted branch, commit 77a4bcf), joint_trajectory_controller
`validate_trajectory_msg`: the same rules in 4.42.1 (jazzy) and 6.9.0 (master); 2.54.0 (humble)
differs in effort fields and the default of allow_nonzero_velocity_at_trajectory_end.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from cookwala_ros.robot.joint_trajectory import (DECEL_FRACTION, HOLD_MIN_TIME_S, JTC_VERSION, NEW_PLAN_AFTER_S,
                                                 HaltPlan, HoldBuilder, JtcOptions, PointData, TrajectoryData,
                                                 jtc_problems)
from cookwala_ros.ros.convert import halt_trajectory_msg, trajectory_data, trajectory_msg
from cookwala_ros.robot.description import default_arm

ARM = default_arm()
NAMES = ARM.joint_names
N = len(NAMES)


def traj(names=NAMES, times=(1.0,), positions=None, **fields) -> TrajectoryData:
    points = tuple(PointData(t, tuple(positions if positions is not None else [0.1] * len(names)),
                             **{k: tuple(v) for k, v in fields.items()}) for t in times)
    return TrajectoryData(tuple(names), points)


def test_the_version_followed_is_named():
    assert "5.17.0" in JTC_VERSION and "kilted" in JTC_VERSION
    assert "5.17.0" in jtc_problems.__doc__


def test_a_plain_full_trajectory_is_accepted():
    assert jtc_problems(traj(), NAMES) == []
    assert jtc_problems(traj(times=(0.5, 1.0, 2.0), velocities=[0.0] * N, accelerations=[0.0] * N), NAMES) == []
    assert jtc_problems(traj(times=(0.0,)), NAMES) == []  # the JTC does not check the first point's time


@pytest.mark.parametrize("case, expected", [
    (TrajectoryData((), ()), "empty"),  # ROS 1's stop: rejected by every ROS 2 JTC
    (TrajectoryData(NAMES, ()), "empty trajectory received"),  # names but no points
    (traj(names=()), "empty joint names"),
    (traj(names=NAMES[:-1]), "don't match the controller joints"),  # partial goal, not allowed by default
    (traj(names=NAMES[:-1] + ("knee_joint",)), "knee_joint"),
    (traj(times=(1.0, 1.0)), "not strictly increasing"),
    (traj(times=(2.0, 1.0)), "not strictly increasing"),
    (traj(positions=[0.0] * (N - 1)), "positions"),
    (TrajectoryData(NAMES, (PointData(1.0),)), "positions"),  # positions are required
    (traj(velocities=[0.0] * (N + 1)), "velocities"),
    (traj(accelerations=[0.0]), "accelerations"),
    (traj(effort=[0.0] * N), "effort"),
    (traj(velocities=[0.0] * (N - 1) + [0.2]), "last trajectory point"),
])
def test_what_the_controller_rejects(case, expected):
    problems = jtc_problems(case, NAMES)
    assert problems and expected in problems[0] + " ".join(problems)


def test_controller_parameters_change_the_verdict():
    partial = traj(names=NAMES[:2])
    assert jtc_problems(partial, NAMES, options=JtcOptions(allow_partial_joints_goal=True)) == []
    moving_end = traj(velocities=[0.3] * N)
    assert jtc_problems(moving_end, NAMES, options=JtcOptions(allow_nonzero_velocity_at_trajectory_end=True)) == []
    effort = traj(effort=[1.0] * N)
    assert jtc_problems(effort, NAMES, options=JtcOptions(effort_command_interface=True)) == []
    assert jtc_problems(effort, NAMES, options=JtcOptions(effort_command_interface=True, humble=True))
    velocity_only = TrajectoryData(NAMES, (PointData(1.0, velocities=(0.0,) * N),))
    assert jtc_problems(velocity_only, NAMES)
    assert jtc_problems(velocity_only, NAMES, options=JtcOptions(allow_integration_in_goal_trajectories=True)) == []


def test_a_stamped_trajectory_must_not_end_in_the_past():
    late = TrajectoryData(NAMES, traj().points, stamp_s=100.0)
    assert jtc_problems(late, NAMES, now_s=100.5) == []  # ends at 101
    assert "ends in the past" in jtc_problems(late, NAMES, now_s=101.5)[0]
    assert jtc_problems(traj(), NAMES, now_s=1e9) == []  # stamp zero = start now


# ------------------------------------------------------------------ the halt

HOLD = HoldBuilder.from_arm(ARM)


def test_hold_at_rest_is_the_measured_position_after_a_short_positive_time():
    q = dict(zip(NAMES, [0.1, -0.2, 0.3, 0.0, 0.5, -0.6]))
    halt = HOLD.hold(q)
    assert halt.stamp_s == 0.0 and halt.joint_names == NAMES
    (point,) = halt.points
    assert point.positions == tuple(q[n] for n in NAMES)
    assert point.velocities == (0.0,) * N
    assert point.time_from_start == HOLD_MIN_TIME_S > 0
    assert jtc_problems(halt, NAMES) == []


def test_a_moving_arm_comes_to_rest_within_its_acceleration_limits():
    q = np.zeros(N)
    v = ARM.max_velocity * np.array([1, -1, 0.5, 0, 1, -1])
    halt = HOLD.hold(dict(zip(NAMES, q)), dict(zip(NAMES, v)))
    (point,) = halt.points
    duration = point.time_from_start
    assert duration == pytest.approx(np.max(np.abs(v) / (DECEL_FRACTION * ARM.max_acceleration)))
    # constant deceleration v/T over T covers v*T/2, never harder than (a share of) the joint's limit
    np.testing.assert_allclose(point.positions, q + v * duration / 2)
    assert np.all(np.abs(v) / duration <= DECEL_FRACTION * ARM.max_acceleration + 1e-9)
    assert 0.5 <= DECEL_FRACTION < 1.0
    assert jtc_problems(halt, NAMES) == []


def test_position_limits_win_over_the_stopping_distance():
    q = ARM.upper - 0.01
    v = ARM.max_velocity
    (point,) = HOLD.hold(dict(zip(NAMES, q)), dict(zip(NAMES, v))).points
    assert np.all(np.array(point.positions) <= ARM.upper)
    beyond = dict(zip(NAMES, ARM.upper + 0.1))  # a faulty reading beyond the limit is not pulled back
    (point,) = HOLD.hold(beyond, dict(zip(NAMES, v))).points
    np.testing.assert_allclose(point.positions, ARM.upper + 0.1)


def test_no_hold_without_every_joint_measured():
    with pytest.raises(ValueError, match="wrist_3_joint"):
        HOLD.hold(dict(zip(NAMES[:-1], [0.0] * (N - 1))))
    with pytest.raises(ValueError, match="elbow_joint"):
        HOLD.hold({**dict(zip(NAMES, [0.0] * N)), "elbow_joint": math.nan})
    nan_speed = HOLD.hold(dict(zip(NAMES, [0.0] * N)), {"elbow_joint": math.nan})
    assert nan_speed.points[0].positions == (0.0,) * N
    with pytest.raises(ValueError):
        HoldBuilder(NAMES, (1.0,) * N, (-1.0,) * N, (1.0,) * N, min_time_s=0.0)


def joint_state(names, positions, velocities=()) -> JointState:
    return JointState(name=list(names), position=[float(x) for x in positions], velocity=[float(x) for x in velocities])


def test_the_halt_message_passes_the_controller_checks():
    order = list(reversed(NAMES))  # a driver may publish the joints in any order
    state = joint_state(order, [0.2] * N, [1.0] * N)
    msg = halt_trajectory_msg(HOLD, state)
    assert isinstance(msg, JointTrajectory)
    assert list(msg.joint_names) == list(NAMES) and len(msg.points) == 1
    assert msg.header.stamp.sec == 0 and msg.header.stamp.nanosec == 0
    assert not msg.points[0].effort and list(msg.points[0].velocities) == [0.0] * N
    assert jtc_problems(trajectory_data(msg), NAMES) == []
    assert trajectory_data(trajectory_msg(trajectory_data(msg))) == trajectory_data(msg)


@pytest.mark.parametrize("state", [None, joint_state(NAMES[:3], [0.0] * 3), joint_state(NAMES, [0.0] * (N - 1))])
def test_without_a_full_measurement_the_fallback_commands_no_motion(state):
    msg = halt_trajectory_msg(HOLD, state)
    assert list(msg.joint_names) == list(NAMES) and not msg.points
    assert jtc_problems(trajectory_data(msg), NAMES)  # rejected by the JTC: it moves nothing


def test_the_hold_accounts_for_how_far_the_arm_moved_since_it_was_measured():
    q, v = dict(zip(NAMES, [0.0] * N)), dict(zip(NAMES, [1.0] + [0.0] * (N - 1)))
    fresh = HOLD.hold(q, v).points[0]
    later = HOLD.hold(q, v, age_s=0.02).points[0]
    assert later.positions[0] == pytest.approx(fresh.positions[0] + 0.02)
    assert later.time_from_start == fresh.time_from_start
    for nonsense in (-1.0, 5.0):  # a clock mismatch or a stale state: no extrapolation
        assert HOLD.hold(q, v, age_s=nonsense).points[0] == fresh
    state = joint_state(NAMES, [0.0] * N, [1.0] + [0.0] * (N - 1))
    state.header.stamp.sec, state.header.stamp.nanosec = 100, 0
    msg = halt_trajectory_msg(HOLD, state, now_s=100.02)
    assert msg.points[0].positions[0] == pytest.approx(fresh.positions[0] + 0.02)


def test_re_sent_halts_keep_the_rest_point_of_the_first():
    plan = HaltPlan(HOLD)
    q, v = dict(zip(NAMES, [0.0] * N)), dict(zip(NAMES, [2.0] + [0.0] * (N - 1)))
    first = plan.halt(q, v, 0.0, now_s=10.0).points[0]
    assert first == HOLD.hold(q, v).points[0]
    # 0.1 s later, from a state that still shows full speed (late): same rest point, the time left
    again = plan.halt(dict(q, shoulder_pan_joint=0.2), v, 0.0, now_s=10.1).points[0]
    assert again.positions == first.positions
    assert again.time_from_start == pytest.approx(first.time_from_start - 0.1)
    assert jtc_problems(TrajectoryData(NAMES, (again,)), NAMES) == []
    # the plan has run out and the arm rests there: a plain hold of the same point
    rest = dict(zip(NAMES, first.positions))
    held = plan.halt(rest, None, 0.0, now_s=10.0 + first.time_from_start + 0.05).points[0]
    assert held.positions == first.positions and held.time_from_start == HOLD_MIN_TIME_S
    # somebody moved the arm away meanwhile: a new plan from where it is
    moved = dict(rest, elbow_joint=rest["elbow_joint"] + 0.3)
    replanned = plan.halt(moved, None, 0.0, now_s=10.0 + first.time_from_start + 0.15).points[0]
    assert replanned.positions == tuple(moved[n] for n in NAMES)


def test_a_late_state_from_while_the_arm_braked_does_not_start_a_new_plan():
    """The plan has run out, but the only joint state at hand was measured while the arm still
    braked (away from the rest point, moving): it says nothing about where the arm is now, and a
    new plan from it would send a resting arm on."""
    plan = HaltPlan(HOLD)
    q, v = dict(zip(NAMES, [0.0] * N)), dict(zip(NAMES, [2.0] + [0.0] * (N - 1)))
    first = plan.halt(q, v, 0.0, now_s=10.0).points[0]
    braking = dict(zip(NAMES, first.positions), shoulder_pan_joint=first.positions[0] - 0.1)
    after = 10.0 + first.time_from_start + 0.05
    late = plan.halt(braking, v, after - 10.02, now_s=after).points[0]  # measured 0.02 s into the plan
    assert late.positions == first.positions and late.time_from_start == HOLD_MIN_TIME_S
    # measured after the plan ran out and still away: somebody moved it, a new plan from there
    moved = plan.halt(braking, None, 0.01, now_s=after + 0.05).points[0]
    assert moved.positions == tuple(braking[n] for n in NAMES)


def test_re_sends_are_timed_on_the_steady_clock_where_the_caller_has_one():
    """The monitor re-sends every 0.1 s of steady time; at a real-time factor of 20 that is 2 s of
    sim time, which alone would make every re-send a new plan (NEW_PLAN_AFTER_S)."""
    plan = HaltPlan(HOLD)
    q, v = dict(zip(NAMES, [0.0] * N)), dict(zip(NAMES, [2.0] + [0.0] * (N - 1)))
    first = plan.halt(q, v, 0.0, now_s=10.0, steady_s=500.0).points[0]
    near = dict(zip(NAMES, first.positions), shoulder_pan_joint=first.positions[0] + 0.005)  # within tolerance
    again = plan.halt(near, None, 0.0, now_s=12.0, steady_s=500.1).points[0]
    assert again.positions == first.positions and again.time_from_start == HOLD_MIN_TIME_S  # kept: a plain hold
    sim_only = HaltPlan(HOLD)  # the same re-sends timed by the sim clock: a new plan from the measurement
    sim_only.halt(q, v, 0.0, now_s=10.0)
    assert sim_only.halt(near, None, 0.0, now_s=12.0).points[0].positions == tuple(near[n] for n in NAMES)
    later = dict(zip(NAMES, [1.0] * N))
    fresh = plan.halt(later, None, 0.0, now_s=13.0, steady_s=500.1 + NEW_PLAN_AFTER_S + 0.01).points[0]
    assert fresh.positions == tuple(later[n] for n in NAMES)  # long after on the steady clock: a new plan


def test_a_halt_long_after_the_last_starts_a_new_plan():
    plan = HaltPlan(HOLD)
    q, v = dict(zip(NAMES, [0.0] * N)), dict(zip(NAMES, [2.0] + [0.0] * (N - 1)))
    first = plan.halt(q, v, 0.0, now_s=10.0).points[0]
    later = dict(zip(NAMES, [1.0] * N))
    fresh = plan.halt(later, None, 0.0, now_s=10.0 + NEW_PLAN_AFTER_S + 0.01).points[0]
    assert fresh.positions == tuple(later[n] for n in NAMES) != first.positions
    assert plan.halt(later, None, 0.0, now_s=5.0).points[0].positions == fresh.positions  # clock went back


def test_the_message_from_a_plan_keeps_its_rest_point():
    plan = HaltPlan(HOLD)
    moving = joint_state(NAMES, [0.0] * N, [1.0] * N)
    first = halt_trajectory_msg(plan, moving, now_s=1.0)
    later = halt_trajectory_msg(plan, joint_state(NAMES, [0.05] * N, [1.0] * N), now_s=1.05)
    assert list(later.points[0].positions) == list(first.points[0].positions)
    assert jtc_problems(trajectory_data(later), NAMES) == []
