"""Publishers and subscriptions without rclpy's default event handlers, and the QoS check they did.

rclpy gives every publisher and subscription two default event handlers (incompatible QoS,
incompatible type) whose only job is a log line. Each is a waitable that every executor wait adds
to its wait set, tests and releases again: in our nodes they doubled the CPU one wake costs
(1.4 ms instead of 0.8 ms with 12 publishers and 12 subscriptions; in the idle kitchen the
executor and the monitor wake about 70 times a second each). `LeanEndpoints` creates endpoints
without them unless the caller asks for event callbacks of its own (the monitor's heartbeat
liveliness).

`QosDoctor` keeps the diagnostic: every few seconds of the steady clock it reads the graph and
checks each endpoint of the node against its peers with rclpy's own rule
(`qos_check_compatible`) and the type name, and logs each incompatible pair once, naming the
topic, the peer and the policy, as rclpy's handler would have.
"""

from __future__ import annotations

import copy

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.duration import Duration
from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
from rclpy.qos import QoSCompatibility, qos_check_compatible

QOS_DOCTOR_PERIOD_S = 3.0  # how often the graph is read for incompatible peers [s, steady clock]


class LeanEndpoints:
    """Node mixin (before `Node` in the bases): endpoints without the default event handlers."""

    def create_publisher(self, *args, event_callbacks=None, **kwargs):
        return super().create_publisher(
            *args, event_callbacks=event_callbacks or PublisherEventCallbacks(use_default_callbacks=False), **kwargs)

    def create_subscription(self, *args, event_callbacks=None, **kwargs):
        return super().create_subscription(
            *args, event_callbacks=event_callbacks or SubscriptionEventCallbacks(use_default_callbacks=False), **kwargs)


def _type_name(msg_type) -> str:
    """`pkg/msg/Name`, as the graph reports an endpoint's type."""
    module = msg_type.__module__.split(".")
    return f"{module[0]}/{module[1]}/{msg_type.__name__}"


_DDS_INFINITE_S = 2**31 - 1  # the graph reports an infinite duration as about 68 years


def _plain(profile):
    """The profile with infinite durations as ROS's default (0), the way our own profiles say it:
    the graph reports a peer's infinite deadline as 68 years, which the check takes for a deadline."""
    profile = copy.copy(profile)
    for name in ("deadline", "lifespan", "liveliness_lease_duration"):
        if getattr(profile, name).nanoseconds >= _DDS_INFINITE_S * 1_000_000_000:
            setattr(profile, name, Duration())
    return profile


def _peer(info) -> str:
    ns = info.node_namespace.rstrip("/")
    return f"{ns}/{info.node_name}" if info.node_name else "an unnamed participant"


class QosDoctor:
    """Logs, once per pair, a peer whose QoS or type cannot match one of `node`'s endpoints."""

    def __init__(self, node, period_s: float = QOS_DOCTOR_PERIOD_S, callback_group=None):
        self._node = node
        self._reported: set[tuple] = set()
        self.findings: list[str] = []  # every message logged (tests, diagnostics)
        self.timer = node.create_timer(period_s, self.check, callback_group=callback_group or MutuallyExclusiveCallbackGroup(),
                                       clock=Clock(clock_type=ClockType.STEADY_TIME))

    def check(self) -> list[str]:
        """One pass over the graph; the new findings (also logged)."""
        node, new = self._node, []
        try:
            ours = [("publisher", p.topic_name, p.qos_profile, p.msg_type) for p in node.publishers]
            ours += [("subscription", s.topic_name, s.qos_profile, s.msg_type) for s in node.subscriptions]
            for kind, topic, qos, msg_type in ours:
                peers = (node.get_subscriptions_info_by_topic(topic) if kind == "publisher"
                         else node.get_publishers_info_by_topic(topic))
                for info in peers:
                    finding = self._judge(kind, topic, qos, _type_name(msg_type), info)
                    key = (kind, topic, bytes(info.endpoint_gid))
                    if finding and key not in self._reported:
                        self._reported.add(key)
                        new.append(finding)
        except Exception as exc:  # noqa: BLE001 - a graph read racing a shutdown is not worth a traceback
            node.get_logger().debug(f"QoS check skipped: {exc!r}")
            return []
        for finding in new:
            node.get_logger().warning(finding)
        self.findings += new
        return new

    @staticmethod
    def _judge(kind: str, topic: str, qos, type_name: str, info) -> str | None:
        peer_kind = "subscription" if kind == "publisher" else "publisher"
        if info.topic_type != type_name:
            return (f"{peer_kind} of {_peer(info)} on {topic} has type {info.topic_type}, this {kind} {type_name}: "
                    "no messages will pass between them")
        theirs = _plain(info.qos_profile)
        pub_qos, sub_qos = (_plain(qos), theirs) if kind == "publisher" else (theirs, _plain(qos))
        compatibility, reason = qos_check_compatible(pub_qos, sub_qos)
        if compatibility != QoSCompatibility.ERROR:
            return None
        return (f"{peer_kind} of {_peer(info)} on {topic} has QoS incompatible with this {kind}: "
                f"no messages will pass between them ({reason.replace('ERROR: ', '').strip().rstrip(';')})")
