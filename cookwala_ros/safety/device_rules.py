"""Device rules the SafetyLimits pack does not name but a kitchen robot needs.

Joint position/velocity limits and the tool workspace come from the robot description; the
staleness, welded-relay and heartbeat rules guard the monitor's own inputs. Times are steady-clock
seconds passed in by the caller.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from cookwala_ros.safety.rules import Finding


@dataclass(frozen=True)
class JointLimit:
    lower: float  # [rad] or [m]
    upper: float
    velocity: float  # max |v| [rad/s] or [m/s]; inf when the description gives none


def joint_findings(names: Sequence[str], positions: Sequence[float], velocities: Sequence[float],
                   limits: dict[str, JointLimit], position_margin: float, velocity_tolerance: float) -> list[Finding]:
    """Joints outside [lower - margin, upper + margin] or faster than velocity * tolerance."""
    out = []
    for index, name in enumerate(names):
        limit = limits.get(name)
        if limit is None:
            continue
        if index < len(positions):
            q = positions[index]
            if q < limit.lower - position_margin or q > limit.upper + position_margin:
                out.append(Finding(f"joint_position:{name}", "stop_all",
                                   f"{name} at {q:.3f} outside [{limit.lower:.3f}, {limit.upper:.3f}]"))
        if index < len(velocities):
            v = velocities[index]
            if abs(v) > limit.velocity * velocity_tolerance:
                out.append(Finding(f"joint_velocity:{name}", "stop_all",
                                   f"{name} moving at {v:.3f}, limit {limit.velocity:.3f}"))
    return out


def max_abs(values: Sequence[float]) -> float:
    """Largest |value| (0 for none); NaN counts as moving (a broken sensor is not standstill)."""
    peak = 0.0
    for v in values:
        if math.isnan(v):
            return math.inf
        peak = max(peak, abs(v))
    return peak


def workspace_findings(tool_xyz: Sequence[float], box_min: Sequence[float], box_max: Sequence[float]) -> list[Finding]:
    """The tool point outside the axis-aligned workspace box (base frame, metres)."""
    outside = [axis for axis, v, lo, hi in zip("xyz", tool_xyz, box_min, box_max) if v < lo or v > hi]
    if not outside:
        return []
    where = ", ".join(f"{a}={v:.3f}" for a, v in zip("xyz", tool_xyz))
    return [Finding("workspace", "stop_all", f"tool at ({where}) leaves the workspace box on {''.join(outside)}")]


def stale_findings(name: str, last_rx: float | None, since: float, now: float, timeout_s: float,
                   action: str = "cut_heat") -> list[Finding]:
    """`name` has not been received for more than timeout_s (counting from `since` if never)."""
    age = now - (since if last_rx is None else last_rx)
    if age <= timeout_s:
        return []
    seen = "never received" if last_rx is None else f"last received {age:.2f} s ago"
    return [Finding(f"stale:{name}", action, f"{name} {seen} (timeout {timeout_s:g} s)")]


class RelayWatch:
    """Power reported after an off command: a welded relay (or a heater that ignores us)."""

    def __init__(self, grace_s: float, power_threshold_w: float):
        self.grace_s = grace_s
        self.power_threshold_w = power_threshold_w
        self._since: float | None = None

    def update(self, commanded_off: bool, power_w: float, reported_welded: bool, now: float) -> list[Finding]:
        if reported_welded:
            return [Finding("heater_fault:relay_welded", "fault", f"heater reports a welded relay ({power_w:.0f} W)")]
        if not commanded_off or power_w <= self.power_threshold_w:
            self._since = None
            return []
        if self._since is None:
            self._since = now
        if now - self._since > self.grace_s:
            return [Finding("heater_fault:relay_welded", "fault",
                            f"heater delivers {power_w:.0f} W {now - self._since:.2f} s after an off command")]
        return []


def heartbeat_findings(seen: bool, last_rx: float | None, now: float, lease_s: float, liveliness_lost: bool) -> list[Finding]:
    """The executor's heartbeat lapsed (timer check) or its liveliness lease expired (QoS event).

    Nothing to check until a heartbeat has been seen: the monitor works without an executor.
    """
    if not seen:
        return []
    if liveliness_lost:
        return [Finding("heartbeat_lost", "stop_all", "executor liveliness lease expired")]
    if last_rx is not None and now - last_rx > lease_s:
        return [Finding("heartbeat_lost", "stop_all", f"no executor heartbeat for {now - last_rx:.2f} s (lease {lease_s:g} s)")]
    return []


def unguarded_findings(plant_active: str, last_rx: float | None, since: float, now: float, lease_s: float,
                       liveliness_lost: bool) -> list[Finding]:
    """Heat or motion on the plant (`plant_active` names which, "" = none) with no live executor
    heartbeat: never received for longer than the lease since `since` (activation), lapsed, or
    its liveliness lost. An executor that dies before its first heartbeat is caught here."""
    if not plant_active:
        return []
    if liveliness_lost:
        why = "its liveliness lease expired"
    elif last_rx is None:
        if now - since <= lease_s:
            return []
        why = f"none received in {now - since:.2f} s"
    elif now - last_rx > lease_s:
        why = f"the last one {now - last_rx:.2f} s ago"
    else:
        return []
    return [Finding("heartbeat_lost", "stop_all", f"{plant_active} on the plant without a live executor heartbeat: "
                    f"{why} (lease {lease_s:g} s)")]


class ExecutorPresence:
    """The expected executor node against the ROS graph (`executor_node`), checked at ~2 Hz.

    In the graph with no heartbeat of its own within `grace_s` of appearing, or gone from the graph
    before its first heartbeat, is a heartbeat loss: an executor that never beat is not guarding
    anything. Each appearance fires at most once.
    """

    def __init__(self, node_name: str, grace_s: float):
        self.node_name = node_name
        self.grace_s = grace_s
        self._since: float | None = None  # when it (re)appeared; None while absent
        self._beat = False  # a heartbeat from it since it appeared
        self._fired = False

    def heartbeat(self, sender: str) -> None:
        if not sender or sender == self.node_name:
            self._beat = True

    def update(self, present: bool, now: float) -> list[Finding]:
        if present and self._since is None:
            self._since, self._beat, self._fired = now, False, False
        if not present and self._since is None:
            return []
        if present:
            if self._beat or self._fired or now - self._since <= self.grace_s:
                return []
            detail = (f"executor {self.node_name} in the ROS graph for {now - self._since:.1f} s without a "
                      f"heartbeat (grace {self.grace_s:g} s)")
        else:
            self._since = None
            if self._beat or self._fired:
                return []
            detail = f"executor {self.node_name} left the ROS graph before its first heartbeat"
        self._fired = True
        return [Finding("heartbeat_lost", "stop_all", detail)]
