"""The safety monitor's command gate: the guarded executor's commands reach the controllers
through the monitor, and only while it is armed.

Why: an executor hears of a stop a few milliseconds after the monitor triggers it, and a control
tick computed in between would otherwise reach the hob after the monitor's 0 W (issue 16: "no
command above 0 W from any source on the wire until a reset"). The gate forwards under the lock
the monitor's stop path holds and on the same publishers as its halt, so on the controller's
topic every forwarded command comes before the halt, and none after it until a local reset.
Heater-off always passes (it only makes things safer); heat and motion need `armed`. With the
monitor dead nothing is forwarded, and the heater's own dead-man ends the heat.

Heat and motion that waited in the gate's queue longer than `MAX_AGE_S` (by their DDS source
timestamp: a monitor descheduled on a loaded host, then catching up) are dropped, not forwarded:
replayed late, an executor's queued keep-alives would refresh the hob's dead-man for an executor
that may have died meanwhile (a kill under load read 0 W only 1.01 s later, the dead-man's 0.5 s
restarted by the backlog). The executor re-sends heat every 50 ms, so a fresh command follows at
once, and a pose command while the arm rests short of the pose (`core.motion.resend_due`).

The same pattern as Nav2's collision monitor, which sits between the controller and the base.
"""

from __future__ import annotations

import time

from trajectory_msgs.msg import JointTrajectory

from cookwala_msgs.msg import HeaterCommand
from cookwala_ros.ros import names, qos

LOG_EVERY_S = 5.0  # held commands are logged at most this often
MAX_AGE_S = 0.2  # heat and motion sent longer ago than this are not forwarded [s]


class CommandGate:
    """Subscribes to the monitor node's `~/gate/...` topics and forwards to the controllers."""

    def __init__(self, node, heat_pub, traj_pub, is_armed):
        self._node, self._heat_pub, self._traj_pub, self._is_armed = node, heat_pub, traj_pub, is_armed
        self.forwarded = 0
        self.held = 0  # heat or motion commands that arrived while the monitor was not armed
        self.stale = 0  # heat or motion commands dropped for their age (MAX_AGE_S)
        self._logged_at = -LOG_EVERY_S
        self.entities = [
            node.create_subscription(HeaterCommand, f"~/{names.GATE_HEATER_COMMAND}", self._on_heat, qos.command()),
            node.create_subscription(JointTrajectory, f"~/{names.GATE_ARM_TRAJECTORY}", self._on_trajectory,
                                     qos.command()),
        ]

    def _on_heat(self, msg: HeaterCommand, info) -> None:
        with self._node.lock:
            if msg.mode == HeaterCommand.MODE_OFF:
                self._heat_pub.publish(msg)
                self.forwarded += 1
            elif not self._is_armed():
                self._hold(f"heater command (mode {msg.mode}) from {msg.source or 'the executor'}")
            elif not self._fresh(info, "heater command"):
                return
            else:
                self._heat_pub.publish(msg)
                self.forwarded += 1

    def _on_trajectory(self, msg: JointTrajectory, info) -> None:
        with self._node.lock:
            if not self._is_armed():
                self._hold("arm trajectory")
            elif self._fresh(info, "arm trajectory"):
                self._traj_pub.publish(msg)
                self.forwarded += 1

    def _fresh(self, info, what: str) -> bool:
        age_s = command_age_s(info)
        if age_s <= MAX_AGE_S:
            return True
        self.stale += 1
        now = time.monotonic()
        if now - self._logged_at >= LOG_EVERY_S:
            self._logged_at = now
            self._node.get_logger().warning(f"dropped a {what} sent {age_s:.2f} s ago (over {MAX_AGE_S:g} s: "
                                            f"the sender may be gone; {self.stale} dropped so far)")
        return False

    def _hold(self, what: str) -> None:
        self.held += 1
        now = time.monotonic()
        if now - self._logged_at >= LOG_EVERY_S:
            self._logged_at = now
            self._node.get_logger().warning(f"held back a {what}: the monitor is not armed ({self.held} held so far)")


def command_age_s(info, now_ns: int | None = None) -> float:
    """Seconds since the sender published the message (its DDS source timestamp, system clock)."""
    now_ns = time.time_ns() if now_ns is None else now_ns
    return (now_ns - info["source_timestamp"]) * 1e-9
