"""A simulated arm that follows joint trajectories the way a JointTrajectoryController does.

Semantics of ros2_controllers' JointTrajectoryController topic interface, which integrators'
arms run and cookwala_ros drives:
- a trajectory the controller rejects (`robot.joint_trajectory.jtc_problems`: among others the
  empty one, no joint names, effort fields, times not strictly increasing) changes nothing: the
  arm keeps its current motion, as the real controller does;
- a new trajectory replaces the one being followed, starting from the arm's current state;
- after the last point the arm holds it. `stop()` is what the controller does on a goal cancel:
  every joint decelerates at its acceleration limit to zero velocity and the arm holds there.

The joints themselves obey per-joint velocity and acceleration limits (and position limits as
hard stops), so a trajectory asking for more is followed as closely as the limits allow.
Faults can be injected to exercise the safety monitor: a frozen encoder (reported state stops
updating), stuck joints (they do not move), ignored commands (new trajectories, including stop,
are dropped). Pure numpy; time advances only through step(dt).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from cookwala_ros.robot.joint_trajectory import JtcOptions, PointData, TrajectoryData, jtc_problems

DEFAULT_CONTROL_PERIOD_S = 0.01  # 100 Hz, the controller manager's update rate
DEFAULT_TRACKING_GAIN = 20.0  # [1/s] position error -> corrective velocity


class TrajectoryError(ValueError):
    """A trajectory the controller must reject (names the offending field)."""


@dataclasses.dataclass(frozen=True)
class TrajectoryPoint:
    time_from_start: float  # [s]
    positions: tuple[float, ...]
    velocities: tuple[float, ...] = ()  # empty, or one per joint name


@dataclasses.dataclass(frozen=True)
class Trajectory:
    joint_names: tuple[str, ...]
    points: tuple[TrajectoryPoint, ...]
    start_time: float | None = None  # model time [s]; None = start now (header stamp zero)

    @classmethod
    def from_data(cls, data: TrajectoryData, start_time: float | None = None) -> "Trajectory":
        """From robot.joint_trajectory's plain trajectory (e.g. a HoldBuilder halt)."""
        return cls(tuple(data.joint_names), tuple(TrajectoryPoint(p.time_from_start, tuple(p.positions),
                                                                  tuple(p.velocities)) for p in data.points), start_time)


@dataclasses.dataclass(frozen=True)
class ArmFaults:
    frozen_encoder: bool = False
    stuck_joints: frozenset[str] = frozenset()
    ignore_commands: bool = False


@dataclasses.dataclass(frozen=True)
class JointSample:
    """What the encoders report."""

    time: float
    positions: np.ndarray
    velocities: np.ndarray


class _Segments:
    """A validated trajectory mapped onto the arm's joints, sampled by time since start."""

    def __init__(self, index: np.ndarray, times: np.ndarray, pos: np.ndarray, vel: np.ndarray | None,
                 start: float, q0: np.ndarray, v0: np.ndarray):
        self.index = index  # arm joint index of each trajectory column
        self.times = times
        self.pos = pos  # (n_points, n_cols)
        self.vel = vel  # (n_points, n_cols) or None
        self.start = start
        self.q0 = q0[index].copy()  # state when received: the implicit first point at t=0
        self.v0 = v0[index].copy()

    @property
    def duration(self) -> float:
        return float(self.times[-1])

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Reference (positions, velocities) of the named joints at t seconds after start."""
        if t <= 0.0:
            return self.q0, np.zeros_like(self.q0)
        if t >= self.times[-1]:
            return self.pos[-1], np.zeros_like(self.q0)
        k = int(np.searchsorted(self.times, t, side="right"))
        if k == 0:
            t0, t1, p0, p1 = 0.0, self.times[0], self.q0, self.pos[0]
            v0, v1 = self.v0, (self.vel[0] if self.vel is not None else None)
        else:
            t0, t1, p0, p1 = self.times[k - 1], self.times[k], self.pos[k - 1], self.pos[k]
            v0 = self.vel[k - 1] if self.vel is not None else None
            v1 = self.vel[k] if self.vel is not None else None
        h = t1 - t0
        s = (t - t0) / h
        if v0 is None or v1 is None:  # positions only: linear interpolation
            return p0 + s * (p1 - p0), (p1 - p0) / h
        # cubic Hermite spline through positions and velocities (as the JTC's spline method)
        h00, h10, h01, h11 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2
        d00, d10, d01, d11 = 6 * s**2 - 6 * s, 3 * s**2 - 4 * s + 1, -6 * s**2 + 6 * s, 3 * s**2 - 2 * s
        pos = h00 * p0 + h10 * h * v0 + h01 * p1 + h11 * h * v1
        vel = (d00 * p0 + d01 * p1) / h + d10 * v0 + d11 * v1
        return pos, vel


class ArmModel:
    """Joint-space arm with velocity/acceleration limits following JTC-style trajectories."""

    def __init__(
        self,
        joint_names: Sequence[str],
        max_velocity: Sequence[float],
        max_acceleration: Sequence[float],
        lower: Sequence[float] | None = None,
        upper: Sequence[float] | None = None,
        initial_positions: Sequence[float] | None = None,
        control_period: float = DEFAULT_CONTROL_PERIOD_S,
        tracking_gain: float = DEFAULT_TRACKING_GAIN,
        start_time: float = 0.0,
        jtc_options: JtcOptions = JtcOptions(),
    ):
        n = len(joint_names)
        self.joint_names = tuple(joint_names)
        if len(set(self.joint_names)) != n or n == 0:
            raise ValueError("joint names must be non-empty and unique")
        self.vmax = self._vector(max_velocity, n, "max_velocity")
        self.amax = self._vector(max_acceleration, n, "max_acceleration")
        if np.any(self.vmax <= 0) or np.any(self.amax <= 0) or not np.all(np.isfinite(self.amax)):
            raise ValueError("velocity and acceleration limits must be positive and finite")
        self.lower = self._vector(lower, n, "lower") if lower is not None else np.full(n, -np.inf)
        self.upper = self._vector(upper, n, "upper") if upper is not None else np.full(n, np.inf)
        if control_period <= 0 or tracking_gain <= 0:
            raise ValueError("control_period and tracking_gain must be positive")
        self.control_period = float(control_period)
        self.jtc_options = jtc_options  # the controller parameters that decide what it accepts
        self.gain = float(tracking_gain)
        self.time = float(start_time)
        self.q = self._vector(initial_positions, n, "initial_positions") if initial_positions is not None else np.zeros(n)
        self.q = np.clip(self.q, self.lower, self.upper)
        self.v = np.zeros(n)
        self._hold = self.q.copy()  # reference for joints no trajectory moves
        self._segments: _Segments | None = None
        self._stopping = False
        self.faults = ArmFaults()
        self._frozen: JointSample | None = None
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        self._stuck: np.ndarray | None = None  # boolean mask of stuck joints
        self._zeros = np.zeros(n)
        self._two_amax = 2.0 * self.amax

    @staticmethod
    def _vector(values, n: int, what: str) -> np.ndarray:
        arr = np.asarray(values, dtype=float)
        if arr.shape != (n,):
            raise ValueError(f"{what}: expected {n} values, got shape {arr.shape}")
        return arr

    # ------------------------------------------------------------------ commands

    def validate(self, trajectory: Trajectory) -> None:
        """Raise TrajectoryError if the JTC would reject this trajectory (or the model cannot follow it)."""
        names = trajectory.joint_names
        data = TrajectoryData(names, tuple(PointData(p.time_from_start, p.positions, p.velocities)
                                           for p in trajectory.points))
        problems = jtc_problems(data, self.joint_names, options=self.jtc_options)
        if problems:
            raise TrajectoryError("; ".join(problems))
        # beyond the JTC's own checks: what the model cannot follow (the JTC would misbehave)
        if len(set(names)) != len(names):
            raise TrajectoryError("joint_names has duplicates")
        for i, point in enumerate(trajectory.points):
            if not math.isfinite(point.time_from_start) or point.time_from_start < 0:
                raise TrajectoryError(f"points[{i}].time_from_start must be finite and >= 0")
            if not all(math.isfinite(x) for x in (*point.positions, *point.velocities)):
                raise TrajectoryError(f"points[{i}] has a non-finite position or velocity")

    def command(self, trajectory: Trajectory) -> bool:
        """Replace the current trajectory. False if a fault dropped it.

        Raises TrajectoryError for a trajectory the controller rejects; the arm keeps doing
        what it was doing, as the JTC does.
        """
        self.validate(trajectory)
        if self.faults.ignore_commands:
            return False
        index = np.array([self._index[n] for n in trajectory.joint_names])
        times = np.array([p.time_from_start for p in trajectory.points])
        pos = np.array([p.positions for p in trajectory.points], dtype=float)
        has_vel = all(p.velocities for p in trajectory.points)
        vel = np.array([p.velocities for p in trajectory.points], dtype=float) if has_vel else None
        start = self.time if trajectory.start_time is None else float(trajectory.start_time)
        # joints the trajectory does not name hold where they are now
        self._hold = self.q.copy()
        self._segments = _Segments(index, times, pos, vel, start, self.q, self.v)
        self._stopping = False
        return True

    def stop(self) -> bool:
        """A goal cancel: decelerate at the acceleration limits and hold. False if a fault dropped it."""
        if self.faults.ignore_commands:
            return False
        self._segments = None
        self._stopping = True
        return True

    def set_faults(self, faults: ArmFaults) -> None:
        unknown = sorted(set(faults.stuck_joints) - set(self.joint_names))
        if unknown:
            raise ValueError(f"stuck_joints: unknown joint(s) {', '.join(unknown)}")
        if faults.frozen_encoder and not self.faults.frozen_encoder:
            self._frozen = self._sample()
        if not faults.frozen_encoder:
            self._frozen = None
        mask = np.array([name in faults.stuck_joints for name in self.joint_names])
        self._stuck = mask if mask.any() else None
        self.faults = faults

    # ------------------------------------------------------------------ state

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def following(self) -> bool:
        """A trajectory is active and its last point not reached yet."""
        return self._segments is not None and self.time - self._segments.start < self._segments.duration

    @property
    def at_rest(self) -> bool:
        return bool(np.all(self.v == 0.0))

    def _sample(self) -> JointSample:
        return JointSample(self.time, self.q.copy(), self.v.copy())

    def measured(self) -> JointSample:
        """What the encoders report: the true state, or a frozen copy under that fault."""
        if self._frozen is not None:
            return JointSample(self.time, self._frozen.positions.copy(), self._frozen.velocities.copy())
        return self._sample()

    def set_state(self, positions: Sequence[float], velocities: Sequence[float] | None = None) -> None:
        """Teleport the arm (simulation set-up only); drops any trajectory and holds there."""
        n = len(self.joint_names)
        self.q = np.clip(self._vector(positions, n, "positions"), self.lower, self.upper)
        self.v = self._vector(velocities, n, "velocities") if velocities is not None else np.zeros(n)
        self._hold = self.q.copy()
        self._segments = None
        self._stopping = False

    # ------------------------------------------------------------------ dynamics

    def _reference(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        seg = self._segments
        if seg is None:
            return self._hold, self._zeros
        ref_q = self._hold.copy()
        ref_v = self._zeros.copy()
        pq, pv = seg.sample(t - seg.start)
        ref_q[seg.index] = pq
        ref_v[seg.index] = pv
        return ref_q, ref_v

    def _substep(self, dt: float) -> None:
        max_dv = self.amax * dt
        if self._stopping:
            dv = np.minimum(np.maximum(-self.v, -max_dv), max_dv)
        else:
            ref_q, ref_v = self._reference(self.time + dt)
            error = ref_q - (self.q + 0.5 * (self.v + ref_v) * dt)  # vs. where this step ends on the reference
            distance = np.abs(error)
            # corrective velocity: proportional near the reference, never faster than the arm
            # can brake within the remaining distance (so a stationary target is not overshot)
            correction = np.sign(error) * np.minimum(self.gain * distance, np.sqrt(self._two_amax * distance))
            target_v = np.minimum(np.maximum(ref_v + correction, -self.vmax), self.vmax)
            dv = np.minimum(np.maximum(target_v - self.v, -max_dv), max_dv)
        new_v = self.v + dv
        new_q = self.q + 0.5 * (self.v + new_v) * dt
        if not self._stopping:
            # settle exactly on a reference that stands still once within numerical noise
            settled = (np.abs(ref_q - new_q) < 1e-7) & (ref_v == 0.0) & (np.abs(new_v) <= max_dv)
            if settled.any():
                new_q[settled] = ref_q[settled]
                new_v[settled] = 0.0
        if self._stuck is not None:
            new_v[self._stuck] = 0.0
            new_q[self._stuck] = self.q[self._stuck]
        # position limits are hard stops
        low, high = new_q <= self.lower, new_q >= self.upper
        if low.any() or high.any():
            new_v[low] = np.maximum(new_v[low], 0.0)
            new_v[high] = np.minimum(new_v[high], 0.0)
            new_q = np.minimum(np.maximum(new_q, self.lower), self.upper)
        self.q, self.v = new_q, new_v
        self.time += dt

    def step(self, dt: float) -> None:
        """Advance the simulation by dt seconds in substeps of at most one control period."""
        if dt < 0 or not math.isfinite(dt):
            raise ValueError(f"dt must be finite and >= 0, got {dt}")
        if self.idle:
            self.time += dt
            return
        remaining = dt
        while remaining > 1e-12:
            h = min(self.control_period, remaining)
            self._substep(h)
            remaining -= h
        seg = self._segments
        if seg is not None and self.time - seg.start >= seg.duration and self.at_rest:
            final_q, _ = self._reference(self.time)
            if np.all(self.q == final_q):  # trajectory done and settled: hold its last point
                self._hold = final_q
                self._segments = None

    @property
    def idle(self) -> bool:
        """Nothing can change until a new command: at rest on a hold reference it already sits on."""
        if not self.at_rest:
            return False
        if self._stopping:
            return True
        return self._segments is None and bool(np.all(self.q == self._hold))
