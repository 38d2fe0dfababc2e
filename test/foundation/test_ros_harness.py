"""The test harness itself (ros_helpers.RosHarness): a callback that raises must not end its spin.

The executor re-raises a callback's exception from spin(). The harness used to end its spin
thread on it without a word, and every later test of a module then waited for messages that no
longer arrived (test_team_nodes: an action server destroyed under the spin, 2 of 17 loaded runs).
"""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy")

from std_msgs.msg import String  # noqa: E402

from ros_helpers import RosHarness  # noqa: E402


def test_a_callback_that_raises_is_reported_and_the_harness_spins_on():
    with RosHarness() as ros:
        node = ros.node("harness_probe")
        received: list[str] = []

        def callback(msg: String) -> None:
            if msg.data == "raise":
                raise RuntimeError("a broken callback")
            received.append(msg.data)

        node.create_subscription(String, "/harness_probe", callback, 10)
        publisher = node.create_publisher(String, "/harness_probe", 10)
        assert ros.wait_for_subscribers(publisher)
        publisher.publish(String(data="raise"))
        assert ros.wait_for(lambda: ros.errors, timeout=10.0)
        assert "RuntimeError: a broken callback" in ros.errors[0]
        publisher.publish(String(data="after"))
        assert ros.wait_for(lambda: received == ["after"], timeout=10.0), received
