"""Lean endpoints (no default event handlers) and the graph-based QoS check that replaces them."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("rclpy", reason="rclpy (ROS 2 wheels) is not installed")

from rclpy.node import Node  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from std_msgs.msg import Int32  # noqa: E402

from cookwala_ros.ros.endpoints import LeanEndpoints, QosDoctor  # noqa: E402
from ros_helpers import RosHarness  # noqa: E402


class LeanNode(LeanEndpoints, Node):
    pass


def test_endpoints_have_no_default_event_handlers_unless_asked():
    with RosHarness() as ros:
        lean = ros.add(LeanNode("lean", context=ros.context))
        plain = ros.node("plain")
        assert lean.create_publisher(Int32, "/a", 10).event_handlers == []
        assert lean.create_subscription(Int32, "/a", lambda m: None, 10).event_handlers == []
        assert len(plain.create_publisher(Int32, "/b", 10).event_handlers) >= 1  # rclpy's default: the cost avoided


def test_the_doctor_names_an_incompatible_peer_once_and_passes_a_compatible_one():
    with RosHarness() as ros:
        lean = ros.add(LeanNode("lean", context=ros.context))
        doctor = QosDoctor(lean, period_s=3600.0)  # checked by hand below
        best_effort = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
        lean.create_publisher(Int32, "/best_effort", best_effort)
        lean.create_publisher(Int32, "/reliable", QoSProfile(depth=10))
        peer = ros.node("peer")
        peer.create_subscription(Int32, "/best_effort", lambda m: None,
                                 QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))  # asks more than offered
        peer.create_subscription(Int32, "/reliable", lambda m: None, best_effort)  # asks less: fine
        assert ros.wait_for(lambda: len(lean.get_subscriptions_info_by_topic("/best_effort")) == 1
                            and len(lean.get_subscriptions_info_by_topic("/reliable")) == 1)
        found = doctor.check()
        assert len(found) == 1 and "/best_effort" in found[0], found  # not /reliable: asking less is fine
        assert found[0] == ("subscription of /peer on /best_effort has QoS incompatible with this publisher: "
                            "no messages will pass between them (Best effort publisher and reliable subscription)")
        assert doctor.check() == []  # each pair once


def test_a_peer_of_another_type_is_named():
    # one participant cannot hold two types on one topic (Fast DDS refuses it), so the graph
    # record of such a peer is written out here
    peer = SimpleNamespace(topic_type="std_msgs/msg/String", node_name="peer", node_namespace="/",
                           qos_profile=QoSProfile(depth=10))
    finding = QosDoctor._judge("subscription", "/typed", QoSProfile(depth=10), "std_msgs/msg/Int32", peer)
    assert finding == ("publisher of /peer on /typed has type std_msgs/msg/String, this subscription "
                       "std_msgs/msg/Int32: no messages will pass between them")
