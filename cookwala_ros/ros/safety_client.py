"""A one-shot client of the safety monitor for the command line: status, stop, local reset.

A latched monitor (its latch persists across restarts) is re-armed only by a local ResetSafety.
Machines without ros2cli still need a way to do that, and to see why the kitchen is stopped:
`cookwala-ros safety ...` calls these functions. Each creates its own context and node, waits
for discovery (bounded), and cleans up; nothing here is on the stop path. `namespace` is the
robot's (`cookwala-ros safety --namespace robot_a status`); the monitor's name and status topic
resolve in it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import rclpy
from rclpy.executors import SingleThreadedExecutor

from cookwala_msgs.msg import SafetyStatus
from cookwala_msgs.srv import ResetSafety, Stop
from cookwala_ros.ros import names, qos

STATUS_TOPIC = names.SAFETY_STATUS  # relative: in the robot's namespace
DEFAULT_MONITOR = names.SAFETY_MONITOR_NODE


class SafetyClientError(RuntimeError):
    """The monitor did not answer in time (the message says what was waited for)."""


@dataclass(frozen=True)
class Answer:
    accepted: bool
    state: str
    message: str
    active_triggers: tuple[str, ...] = ()


class _Session:
    def __init__(self, namespace: str = "") -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("cookwala_safety_cli", context=self.context, start_parameter_services=False,
                                      namespace=names.namespace_of(namespace) or "/")
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def spin_until(self, done, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() >= deadline:
                return False
            self.executor.spin_once(timeout_sec=0.05)
        return True

    def call(self, srv_type, name: str, request, timeout_s: float):
        client = self.node.create_client(srv_type, name)
        if not self.spin_until(client.service_is_ready, timeout_s):
            raise SafetyClientError(f"no service {name} within {timeout_s:g} s (is the safety monitor running, "
                                    "on this ROS_DOMAIN_ID?)")
        future = client.call_async(request)
        if not self.spin_until(future.done, timeout_s) or future.result() is None:
            raise SafetyClientError(f"{name} did not answer within {timeout_s:g} s")
        return future.result()

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def read_status(timeout_s: float = 5.0, namespace: str = "") -> SafetyStatus:
    """The monitor's latched status (reliable, transient-local: the last one arrives on subscribe)."""
    session = _Session(namespace)
    try:
        received: list[SafetyStatus] = []
        sub = session.node.create_subscription(SafetyStatus, STATUS_TOPIC, received.append, qos.latched())
        if not session.spin_until(lambda: bool(received), timeout_s):
            raise SafetyClientError(f"no {sub.topic_name} within {timeout_s:g} s (is the safety monitor running, "
                                    "on this ROS_DOMAIN_ID?)")
        return received[-1]
    finally:
        session.close()


def reset(monitor: str = DEFAULT_MONITOR, requested_by: str = "cli", timeout_s: float = 5.0,
          namespace: str = "") -> Answer:
    session = _Session(namespace)
    try:
        response = session.call(ResetSafety, f"{monitor.rstrip('/')}/reset",
                                ResetSafety.Request(requested_by=requested_by), timeout_s)
        return Answer(response.accepted, response.state, response.message, tuple(response.active_triggers))
    finally:
        session.close()


def stop(monitor: str = DEFAULT_MONITOR, requested_by: str = "cli", reason: str = "", timeout_s: float = 5.0,
         namespace: str = "") -> Answer:
    session = _Session(namespace)
    try:
        response = session.call(Stop, f"{monitor.rstrip('/')}/stop",
                                Stop.Request(requested_by=requested_by, reason=reason[:300]), timeout_s)
        return Answer(response.accepted, response.state, response.message)
    finally:
        session.close()
