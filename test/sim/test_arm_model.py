"""The simulated arm follows trajectories like a JointTrajectoryController within joint limits."""

from __future__ import annotations

import numpy as np
import pytest

from cookwala_ros.robot.joint_trajectory import DECEL_FRACTION, HoldBuilder, JtcOptions
from cookwala_ros.sim.arm_model import ArmFaults, ArmModel, Trajectory, TrajectoryError, TrajectoryPoint
from cookwala_ros.robot.description import load_arm, load_poses

PERIOD = 0.01


@pytest.fixture(scope="module")
def arm(repo_root):
    return load_arm(repo_root / "config" / "robot" / "kitchen_arm.urdf")


@pytest.fixture(scope="module")
def poses(repo_root, arm):
    return load_poses(repo_root / "config" / "robot" / "poses.yaml", arm)


@pytest.fixture
def model(arm, poses):
    return ArmModel(arm.joint_names, arm.max_velocity, arm.max_acceleration, arm.lower, arm.upper,
                    arm.positions_vector(poses["home"]), control_period=PERIOD)


def move_to(arm, positions, seconds):
    return Trajectory(arm.joint_names, (TrajectoryPoint(seconds, tuple(positions)),))


def run(model, seconds, record=False):
    samples = []
    for _ in range(int(round(seconds / PERIOD))):
        model.step(PERIOD)
        if record:
            samples.append((model.q.copy(), model.v.copy()))
    return samples


def test_reaches_a_named_pose_and_holds_it(model, arm, poses):
    target = arm.positions_vector(poses["above_hob"])
    assert model.command(move_to(arm, target, 2.0))
    run(model, 3.0)
    np.testing.assert_allclose(model.q, target, atol=1e-6)
    assert model.at_rest and not model.following
    run(model, 1.0)
    np.testing.assert_allclose(model.q, target, atol=1e-6)


def test_never_exceeds_velocity_or_acceleration_limits(model, arm, poses):
    # an impossible request (a big move in 0.1 s) is followed as fast as the limits allow
    target = arm.positions_vector(poses["serve"])
    model.command(move_to(arm, target, 0.1))
    samples = run(model, 3.0, record=True)
    v = np.array([s[1] for s in samples])
    assert np.all(np.abs(v) <= arm.max_velocity + 1e-9)
    accel = np.diff(v, axis=0) / PERIOD
    assert np.all(np.abs(accel) <= arm.max_acceleration + 1e-6)
    assert np.any(np.isclose(np.abs(v), arm.max_velocity).any(axis=0))
    np.testing.assert_allclose(model.q, target, atol=1e-6)


def test_follows_a_feasible_spline_closely(model, arm, poses):
    a, b = arm.positions_vector(poses["home"]), arm.positions_vector(poses["above_hob"])
    mid = (a + b) / 2
    vel = (b - a) / 3.0  # peak velocity well inside the limits
    points = (
        TrajectoryPoint(1.0, tuple(a + (mid - a) * 0.3), tuple(vel * 0.6)),
        TrajectoryPoint(2.0, tuple(mid + (b - mid) * 0.3), tuple(vel * 0.6)),
        TrajectoryPoint(3.5, tuple(b), tuple(np.zeros(6))),
    )
    model.command(Trajectory(arm.joint_names, points))
    run(model, 2.0)
    assert np.max(np.abs(model.q - np.array(points[1].positions))) < 0.05
    run(model, 2.0)
    np.testing.assert_allclose(model.q, b, atol=1e-4)


def drive_at_velocity_limits(model, arm, how):
    if how == "set_state":
        model.set_state(np.zeros(6), arm.max_velocity)
    else:  # drive every joint at its velocity limit along a long linear trajectory
        start = arm.lower * 0.95
        model.set_state(start)
        model.command(Trajectory(arm.joint_names, (TrajectoryPoint(10.0, tuple(start + arm.max_velocity * 10.0)),)))
        run(model, 0.5)
        np.testing.assert_allclose(model.v, arm.max_velocity)


def run_until_still(model, bound):
    elapsed = 0.0
    while np.any(np.abs(model.v) >= 0.01):
        model.step(PERIOD)
        elapsed += PERIOD
        assert elapsed <= bound + 1e-9, f"still moving after {elapsed:.3f} s: {model.v}"
    return elapsed


@pytest.mark.parametrize("how", ["set_state", "trajectory"])
def test_the_hold_halt_stops_every_joint_from_its_velocity_limit_in_time(model, arm, how):
    drive_at_velocity_limits(model, arm, how)
    measured = model.measured()
    halt = HoldBuilder.from_arm(arm).hold(dict(zip(arm.joint_names, measured.positions)),
                                          dict(zip(arm.joint_names, measured.velocities)))
    assert model.command(Trajectory.from_data(halt))
    # the hold point is timed so that the slowest joint brakes at its planned share of the limit:
    # it is at rest by then
    # (plus the tracking loop's settling)
    run_until_still(model, np.max(arm.max_velocity / (DECEL_FRACTION * arm.max_acceleration)) + 5 * PERIOD)
    run(model, 1.0)
    np.testing.assert_allclose(model.q, halt.points[0].positions, atol=1e-6)
    held = model.q.copy()
    run(model, 1.0)
    np.testing.assert_array_equal(model.q, held)


@pytest.mark.parametrize("how", ["set_state", "trajectory"])
def test_a_goal_cancel_stops_every_joint_from_its_velocity_limit_in_time(model, arm, how):
    drive_at_velocity_limits(model, arm, how)
    assert model.stop()
    run_until_still(model, np.max(arm.max_velocity / arm.max_acceleration) + PERIOD)
    held = model.q.copy()
    run(model, 1.0)
    np.testing.assert_array_equal(model.q, held)
    assert model.stopping and model.at_rest


def test_the_empty_trajectory_is_rejected_and_the_arm_keeps_moving(model, arm):
    drive_at_velocity_limits(model, arm, "trajectory")
    for empty in (Trajectory(arm.joint_names, ()), Trajectory((), ())):
        with pytest.raises(TrajectoryError, match="empty"):
            model.command(empty)
    run(model, 0.5)
    np.testing.assert_allclose(model.v, arm.max_velocity)


def test_new_trajectory_replaces_the_old_one_from_the_current_state(model, arm, poses):
    model.command(move_to(arm, arm.positions_vector(poses["serve"]), 2.0))
    run(model, 0.5)
    moving = model.v.copy()
    assert np.any(np.abs(moving) > 0.1)
    target = arm.positions_vector(poses["dispense"])
    model.command(move_to(arm, target, 3.0))
    model.step(PERIOD)
    assert np.all(np.abs(model.v - moving) <= arm.max_acceleration * PERIOD + 1e-9)  # no velocity jump
    run(model, 4.0)
    np.testing.assert_allclose(model.q, target, atol=1e-6)


def test_partial_trajectory_moves_named_joints_only_where_the_controller_allows_it(model, arm):
    before = model.q.copy()
    with pytest.raises(TrajectoryError, match="don't match the controller joints"):
        model.command(Trajectory(("elbow_joint",), (TrajectoryPoint(1.0, (1.0,)),)))  # the JTC's default
    model.jtc_options = JtcOptions(allow_partial_joints_goal=True)
    model.command(Trajectory(("elbow_joint",), (TrajectoryPoint(1.0, (1.0,)),)))
    run(model, 2.0)
    i = arm.joint_names.index("elbow_joint")
    assert model.q[i] == pytest.approx(1.0, abs=1e-6)
    others = np.arange(6) != i
    np.testing.assert_array_equal(model.q[others], before[others])


def test_future_start_time_holds_until_then(model, arm, poses):
    before = model.q.copy()
    model.command(Trajectory(arm.joint_names, (TrajectoryPoint(1.0, tuple(arm.positions_vector(poses["stir"]))),),
                             start_time=model.time + 1.0))
    run(model, 0.9)
    np.testing.assert_array_equal(model.q, before)
    run(model, 2.0)
    np.testing.assert_allclose(model.q, arm.positions_vector(poses["stir"]), atol=1e-6)


def test_position_limits_are_hard_stops(model, arm):
    i = arm.joint_names.index("wrist_2_joint")
    target = model.q.copy()
    target[i] = 10.0
    model.command(move_to(arm, target, 1.0))
    run(model, 4.0)
    assert model.q[i] == arm.upper[i] and model.v[i] == 0.0


def full(positions, seconds=1.0, velocities=()):
    return TrajectoryPoint(seconds, tuple(positions), tuple(velocities))


SIX = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint")


@pytest.mark.parametrize(
    "trajectory, field",
    [
        (Trajectory(SIX[:-1] + ("elbow_joint",), (full([0.0] * 6),)), "duplicates"),
        (Trajectory(SIX[:-1] + ("gripper_joint",), (full([0.0] * 6),)), "gripper_joint"),
        (Trajectory(SIX, (full([0.0] * 5),)), "positions"),
        (Trajectory(SIX, (full([0.0] * 6), full([1.0] * 6))), "not strictly increasing"),
        (Trajectory(SIX, (full([float("nan")] * 6),)), "non-finite"),
        (Trajectory(SIX, (full([0.0] * 6, velocities=[1.0, 2.0]),)), "velocities"),
        (Trajectory(SIX, (full([0.0] * 6, velocities=[0.5] * 6),)), "last trajectory point"),
        (Trajectory(SIX, ()), "empty trajectory"),
        (Trajectory((), (full([]),)), "empty joint names"),
    ],
)
def test_invalid_trajectories_are_rejected_and_change_nothing(model, arm, poses, trajectory, field):
    target = arm.positions_vector(poses["above_hob"])
    model.command(move_to(arm, target, 2.0))
    with pytest.raises(TrajectoryError, match=field):
        model.command(trajectory)
    run(model, 3.0)
    np.testing.assert_allclose(model.q, target, atol=1e-6)


def test_frozen_encoder_reports_stale_state_while_the_arm_moves(model, arm, poses):
    model.set_faults(ArmFaults(frozen_encoder=True))
    reported = model.measured().positions
    model.command(move_to(arm, arm.positions_vector(poses["stir"]), 1.0))
    run(model, 2.0)
    np.testing.assert_array_equal(model.measured().positions, reported)
    assert not np.allclose(model.q, reported)
    model.set_faults(ArmFaults())
    np.testing.assert_array_equal(model.measured().positions, model.q)


def test_stuck_joint_does_not_move(model, arm, poses):
    model.set_faults(ArmFaults(stuck_joints=frozenset({"shoulder_lift_joint"})))
    i = arm.joint_names.index("shoulder_lift_joint")
    before = model.q[i]
    target = arm.positions_vector(poses["stir"])
    model.command(move_to(arm, target, 1.0))
    run(model, 2.0)
    assert model.q[i] == before and model.v[i] == 0.0
    others = np.arange(6) != i
    np.testing.assert_allclose(model.q[others], target[others], atol=1e-6)
    with pytest.raises(ValueError, match="stuck_joints"):
        model.set_faults(ArmFaults(stuck_joints=frozenset({"nope"})))


def test_ignored_commands_include_stop(model, arm, poses):
    target = arm.positions_vector(poses["serve"])
    model.command(move_to(arm, target, 2.0))
    run(model, 0.5)
    model.set_faults(ArmFaults(ignore_commands=True))
    assert model.stop() is False
    run(model, 0.5)
    assert np.any(np.abs(model.v) > 0.1)  # still on its way: the stop was dropped
    run(model, 3.0)
    np.testing.assert_allclose(model.q, target, atol=1e-6)
