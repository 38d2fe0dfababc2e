"""The safety monitor's command gate: the guarded executor's commands reach the controllers
through the monitor, and only while it is armed.

Why: an executor hears of a stop a few milliseconds after the monitor triggers it, and a control
tick computed in between would otherwise reach the hob after the monitor's 0 W (issue 16: "no
command above 0 W from any source on the wire until a reset"). The gate forwards under the lock
the monitor's stop path holds and on the same publishers as its halt, so on the controller's
topic every forwarded command comes before the halt, and none after it until a local reset.
Heater-off always passes (it only makes things safer); heat and motion need `armed`. With the
monitor dead nothing is forwarded, and the heater's own dead-man ends the heat.

The same pattern as Nav2's collision monitor, which sits between the controller and the base.
"""

from __future__ import annotations

import time

from trajectory_msgs.msg import JointTrajectory

from cookwala_msgs.msg import HeaterCommand
from cookwala_ros.ros import names, qos

LOG_EVERY_S = 5.0  # held commands are logged at most this often


class CommandGate:
    """Subscribes to the monitor node's `~/gate/...` topics and forwards to the controllers."""

    def __init__(self, node, heat_pub, traj_pub, is_armed):
        self._node, self._heat_pub, self._traj_pub, self._is_armed = node, heat_pub, traj_pub, is_armed
        self.forwarded = 0
        self.held = 0  # heat or motion commands that arrived while the monitor was not armed
        self._logged_at = -LOG_EVERY_S
        self.entities = [
            node.create_subscription(HeaterCommand, f"~/{names.GATE_HEATER_COMMAND}", self._on_heat, qos.command()),
            node.create_subscription(JointTrajectory, f"~/{names.GATE_ARM_TRAJECTORY}", self._on_trajectory,
                                     qos.command()),
        ]

    def _on_heat(self, msg: HeaterCommand) -> None:
        with self._node.lock:
            if msg.mode == HeaterCommand.MODE_OFF or self._is_armed():
                self._heat_pub.publish(msg)
                self.forwarded += 1
            else:
                self._hold(f"heater command (mode {msg.mode}) from {msg.source or 'the executor'}")

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        with self._node.lock:
            if self._is_armed():
                self._traj_pub.publish(msg)
                self.forwarded += 1
            else:
                self._hold("arm trajectory")

    def _hold(self, what: str) -> None:
        self.held += 1
        now = time.monotonic()
        if now - self._logged_at >= LOG_EVERY_S:
            self._logged_at = now
            self._node.get_logger().warning(f"held back a {what}: the monitor is not armed ({self.held} held so far)")
