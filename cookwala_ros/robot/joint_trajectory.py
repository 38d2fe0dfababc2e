"""What a JointTrajectoryController accepts, and the halt it accepts: pure data, no ROS.

Integrators' arms run ros2_controllers' joint_trajectory_controller (JTC). It silently keeps
its current motion when it rejects a trajectory (it only logs an error), so a stop it rejects is
no stop at all. The empty JointTrajectory (no points) that ROS 1 read as "stop" is rejected by
every ROS 2 JTC ("Empty trajectory received"). The halt here is what the JTC accepts: all joint
names and one point at rest (the measured position, or where the arm comes to rest decelerating
within its acceleration limits), zero velocities, a small positive time_from_start (the JTC
splines from its current state to that point over that time; zero would be a step), stamp zero
(= start now).

`jtc_problems` follows `JointTrajectoryController::validate_trajectory_msg` and
`validate_trajectory_point_field` of ros2_controllers 5.17.0 (kilted branch, ROS 2 Kilted,
commit 77a4bcf); the rules are the same in 4.42.1 (jazzy, aacd842) and 6.9.0 (master/Rolling,
78d6508). 2.54.0 (humble, a0c94b0) differs only in that it rejects any effort field, checks the
end time before the joint names (same verdicts) and defaults
allow_nonzero_velocity_at_trajectory_end to true (`JtcOptions(humble=True)` below).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

JTC_VERSION = "ros2_controllers 5.17.0 (kilted); same rules in 4.42.1 (jazzy), 6.9.0 (master), 2.54.0 (humble)"
FLOAT32_EPSILON = 1.1920928955078125e-07  # std::numeric_limits<float>::epsilon(), the JTC's "zero" end velocity
HOLD_MIN_TIME_S = 0.1  # time_from_start of a hold point when the arm already stands still [s]
MAX_EXTRAPOLATION_S = 0.1  # a joint state older than this is not extrapolated to now [s]
DECEL_FRACTION = 0.8  # share of the acceleration limit a halt plans with (headroom for its transit time)
NEW_PLAN_AFTER_S = 0.5  # a halt this long after the previous one starts a new plan [s]
HOLD_TOLERANCE = 0.01  # a finished plan is kept while the arm is this close to its rest point [rad or m]


@dataclasses.dataclass(frozen=True)
class PointData:
    """One trajectory_msgs/JointTrajectoryPoint (times in seconds)."""

    time_from_start: float
    positions: tuple[float, ...] = ()
    velocities: tuple[float, ...] = ()
    accelerations: tuple[float, ...] = ()
    effort: tuple[float, ...] = ()


@dataclasses.dataclass(frozen=True)
class TrajectoryData:
    """One trajectory_msgs/JointTrajectory; stamp_s is header.stamp in seconds (0 = start now)."""

    joint_names: tuple[str, ...]
    points: tuple[PointData, ...]
    stamp_s: float = 0.0


@dataclasses.dataclass(frozen=True)
class JtcOptions:
    """The controller parameters that change what it accepts (defaults: ros2_controllers' own, jazzy on)."""

    allow_partial_joints_goal: bool = False
    allow_nonzero_velocity_at_trajectory_end: bool = False  # humble's default is true
    allow_integration_in_goal_trajectories: bool = False
    effort_command_interface: bool = False  # jazzy on: effort fields allowed with an effort command interface
    humble: bool = False  # humble rejects effort fields whatever the interfaces


def _field_problem(joint_count: int, values: Sequence[float], what: str, i: int, allow_empty: bool) -> str | None:
    if allow_empty and not values:
        return None
    if len(values) != joint_count:
        return f"mismatch between joint_names size ({joint_count}) and {what} ({len(values)}) at point #{i}"
    return None


def jtc_problems(trajectory: TrajectoryData, controller_joints: Sequence[str], now_s: float | None = None,
                 options: JtcOptions = JtcOptions()) -> list[str]:
    """Why the JTC would reject this trajectory, in its order of checks; [] = accepted.

    Follows validate_trajectory_msg of ros2_controllers 5.17.0 (see the module docstring for the
    other versions). The controller stops at (and logs) the first problem. now_s is the
    controller's clock (header stamps are checked against it only when given).
    """
    names, points = trajectory.joint_names, trajectory.points
    problems: list[str] = []
    if not options.allow_partial_joints_goal and len(names) != len(controller_joints):
        problems.append(f"joints on incoming trajectory don't match the controller joints "
                        f"({len(names)} names for {len(controller_joints)} joints)")
    if not names:
        problems.append("empty joint names on incoming trajectory")
    if not points:
        problems.append("empty trajectory received (no points)")
        return problems
    known = set(controller_joints)
    problems += [f"incoming joint {name} doesn't match the controller's joints" for name in names if name not in known]
    if not options.allow_nonzero_velocity_at_trajectory_end:
        for i, v in enumerate(points[-1].velocities):
            if abs(v) > FLOAT32_EPSILON:
                joint = names[i] if i < len(names) else f"#{i}"
                problems.append(f"velocity of last trajectory point of joint {joint} is not zero: {v:.15f}")
                break
    if trajectory.stamp_s != 0.0 and now_s is not None:
        end = trajectory.stamp_s + points[-1].time_from_start
        if end < now_s:
            problems.append(f"non-zero start time ({trajectory.stamp_s:f}) that ends in the past ({end:f})")
    previous = 0.0
    count = len(names)
    for i, point in enumerate(points):
        if i > 0 and point.time_from_start <= previous:
            problems.append(f"time between points {i - 1} and {i} is not strictly increasing, "
                            f"it is {previous:f} and {point.time_from_start:f} respectively")
            break
        previous = point.time_from_start
        if options.allow_integration_in_goal_trajectories:
            if not point.positions and not point.velocities and not point.accelerations:
                problems.append("the given trajectory has no position, velocity, or acceleration points")
                break
            fields = [(point.positions, "positions"), (point.velocities, "velocities"),
                      (point.accelerations, "accelerations")]
            found = [_field_problem(count, values, what, i, True) for values, what in fields]
        else:
            found = [_field_problem(count, point.positions, "positions", i, False),
                     _field_problem(count, point.velocities, "velocities", i, True),
                     _field_problem(count, point.accelerations, "accelerations", i, True)]
        found = [p for p in found if p]
        if found:
            problems.append(found[0])
            break
        if point.effort and (options.humble or not options.effort_command_interface):
            problems.append("trajectories with effort fields are only supported for controllers "
                            "using the 'effort' command interface")
            break
    return problems


@dataclasses.dataclass(frozen=True)
class HoldBuilder:
    """Builds the halt for one arm: its joints with their acceleration and position limits.

    `hold()` gives every joint one point at rest. A joint moving at v comes to rest at constant
    deceleration v/T over T = max(min_time_s, max |v|/(f*a_max)) (the slowest joint sets T, so
    none brakes harder than the fraction f of its limit), i.e. at q + v*T/2 (q extrapolated to
    now), clamped to the position limits (they win over the acceleration limit). With positions
    and zero velocities the JTC's spline from its own current state to that point is exactly
    this constant deceleration. f < 1 leaves headroom: the arm moves on while the halt travels to
    the controller, and a rest point it can no longer reach within its limit makes it overshoot
    and swing back.
    """

    joint_names: tuple[str, ...]
    max_acceleration: tuple[float, ...]  # [rad/s^2 or m/s^2]; inf or <= 0 = unknown (hold where measured)
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    min_time_s: float = HOLD_MIN_TIME_S
    decel_fraction: float = DECEL_FRACTION

    def __post_init__(self) -> None:
        n = len(self.joint_names)
        if n == 0 or len(set(self.joint_names)) != n:
            raise ValueError("joint_names must be non-empty and unique")
        if not (len(self.max_acceleration) == len(self.lower) == len(self.upper) == n):
            raise ValueError("one acceleration and position limit per joint")
        if not (self.min_time_s > 0 and math.isfinite(self.min_time_s)):
            raise ValueError("min_time_s must be positive: zero makes the JTC step to the point")
        if not 0 < self.decel_fraction <= 1:
            raise ValueError("decel_fraction must be in (0, 1]")

    @classmethod
    def from_arm(cls, arm, min_time_s: float = HOLD_MIN_TIME_S) -> "HoldBuilder":
        """From anything with joint_names, max_acceleration, lower and upper (an ArmDescription)."""
        return cls(tuple(arm.joint_names), tuple(map(float, arm.max_acceleration)), tuple(map(float, arm.lower)),
                   tuple(map(float, arm.upper)), min_time_s)

    def hold(self, positions: Mapping[str, float], velocities: Mapping[str, float] | None = None,
             age_s: float = 0.0) -> TrajectoryData:
        """The halt from measured joint positions (and velocities; missing or non-finite = 0).

        age_s is how old the measurement is (on the arm's clock): the arm has moved on by v*age_s
        since, and a point behind it would make the JTC's spline brake harder than the limit and
        swing back. Ages outside [0, MAX_EXTRAPOLATION_S] are not extrapolated. Raises ValueError
        when a joint has no finite measured position: a hold at a guessed position would itself
        move the arm.
        """
        age_s = age_s if 0.0 <= age_s <= MAX_EXTRAPOLATION_S else 0.0
        velocities = velocities or {}
        q, v = [], []
        for name in self.joint_names:
            value = positions.get(name)
            if value is None or not math.isfinite(value):
                raise ValueError(f"no measured position for joint {name}")
            q.append(float(value))
            speed = velocities.get(name, 0.0)
            v.append(float(speed) if speed is not None and math.isfinite(speed) else 0.0)
        duration = self.min_time_s
        for speed, accel in zip(v, self.max_acceleration):
            if speed and accel > 0 and math.isfinite(accel):
                duration = max(duration, abs(speed) / (self.decel_fraction * accel))
        target = []
        for qi, vi, low, high in zip(q, v, self.lower, self.upper):
            goal = qi + vi * (age_s + 0.5 * duration)
            if goal > qi:
                goal = max(qi, min(goal, high))
            elif goal < qi:
                goal = min(qi, max(goal, low))
            target.append(goal)
        point = PointData(time_from_start=duration, positions=tuple(target), velocities=(0.0,) * len(target))
        return TrajectoryData(self.joint_names, (point,), stamp_s=0.0)


class HaltPlan:
    """The halts of one stop, for a caller that re-sends its halt (the monitor every 0.1 s).

    Every accepted trajectory restarts the JTC's spline from the arm's current state, so a halt
    re-planned from a slightly old joint state while the arm brakes would ask for a rest point
    it has already passed or not yet reached, and a stopped arm would move again. The first halt
    (or one NEW_PLAN_AFTER_S after the previous) plans the rest point; later ones keep it, with
    the time left of that plan, then as a plain hold once the plan has run out. A plan that ran
    out with the arm away from its rest point (someone moved it) is replaced by a new one from
    the measurement, but only a measurement taken after the plan ran out tells that: one from
    while the arm still braked (a late joint state) is away from the rest point and moving, and a
    new plan from it sent a resting arm on by up to 0.23 rad (stop trials). Plan times are the
    caller's ROS time, the clock the arm runs on; the gap
    between re-sends is the caller's steady clock (`steady_s`) where it has one: the monitor
    re-sends every 0.1 s of steady time, which is 2 s of sim time at a real-time factor of 20,
    and a gap read in sim time made every re-send a new plan from a braking arm's state.
    """

    def __init__(self, builder: HoldBuilder) -> None:
        self.builder = builder
        self._target: tuple[float, ...] | None = None
        self._start_s = 0.0
        self._duration_s = 0.0
        self._last_s = -math.inf  # on the clock of the gaps (steady_s, else now_s)

    def halt(self, positions: Mapping[str, float], velocities: Mapping[str, float] | None, age_s: float,
             now_s: float, steady_s: float | None = None) -> TrajectoryData:
        """The next halt; ValueError as HoldBuilder.hold when a joint has no measured position."""
        gap_clock = now_s if steady_s is None else steady_s
        previous, self._last_s = self._last_s, gap_clock
        if self._target is not None and 0.0 <= gap_clock - previous <= NEW_PLAN_AFTER_S and now_s >= self._start_s:
            remaining = self._duration_s - (now_s - self._start_s)
            if remaining > 1e-3:
                return self._point(self._target, remaining)
            off = [abs(positions.get(name, math.inf) - goal) for name, goal in zip(self.builder.joint_names, self._target)]
            measured_before_the_end = age_s >= 0.0 and now_s - age_s < self._start_s + self._duration_s
            if max(off) <= HOLD_TOLERANCE or measured_before_the_end:
                return self._point(self._target, self.builder.min_time_s)
        plan = self.builder.hold(positions, velocities, age_s)
        self._target, self._start_s = plan.points[0].positions, now_s
        self._duration_s = plan.points[0].time_from_start
        return plan

    def _point(self, target: tuple[float, ...], seconds: float) -> TrajectoryData:
        point = PointData(time_from_start=seconds, positions=target, velocities=(0.0,) * len(target))
        return TrajectoryData(self.builder.joint_names, (point,), stamp_s=0.0)
