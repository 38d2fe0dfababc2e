"""The QoS profiles of every cookwala topic, in one place.

Nodes pick a profile by meaning (latched, command, sensor, event) rather than spelling out
history/depth/durability, so a subscriber and its publisher cannot silently disagree.
"""

from __future__ import annotations

from rclpy.duration import Duration
from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    LivelinessPolicy,
    QoSProfile,
    ReliabilityPolicy,
)


def latched() -> QoSProfile:
    """Last value kept for late joiners (status, capabilities, safety status)."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=1,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )


def action_goals(depth: int = 100) -> QoSProfile:
    """An action's goal, result and cancel services: the services' default (reliable, volatile)
    with a deep history. rclpy's keep-last 10 lost every goal request past the tenth of a burst
    (20 goals sent at once reached the executor as 10); clients that send bursts use it too."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=depth,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )


def command(depth: int = 10) -> QoSProfile:
    """Commands to controllers (trajectories, heater commands): reliable, never replayed.

    Volatile on purpose: a late-joining controller must not act on a stale command.
    """
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=depth,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )


def sensor(depth: int = 5) -> QoSProfile:
    """Streams where only the newest sample matters (joint states, heater state, temperatures).

    Reliable rather than best-effort so that it matches the default QoS of ros2_control
    broadcasters and `ros2 topic echo`; a keep-last depth keeps it from queueing up.
    """
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=depth,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )


def events(depth: int = 100) -> QoSProfile:
    """CloudEvents: reliable with a deep queue; subscribers de-duplicate by event id."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=depth,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )


def heartbeat(lease_s: float = 0.3) -> QoSProfile:
    """Heartbeat with a liveliness lease, so a killed sender is noticed within about lease_s."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=1,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
        liveliness=LivelinessPolicy.AUTOMATIC,
        liveliness_lease_duration=Duration(nanoseconds=int(lease_s * 1e9)),
    )


def clock() -> QoSProfile:
    """/clock as rclpy's TimeSource subscribes to it (keep-last 1, best effort)."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=1,
        reliability=ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.VOLATILE,
    )


def clock_publisher() -> QoSProfile:
    """/clock as sim_clock publishes it free-running: reliable keep-last 1. Every subscriber
    matches it, rclpy's and rclcpp's best-effort TimeSource and a default (reliable) one such as
    `ros2 topic echo /clock` alike; best-effort readers get it best effort, so they cost no acks."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=1,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )


def clock_step_report(depth: int = 10) -> QoSProfile:
    """Lock-step reports to sim_clock: reliable and transient-local, so a clock that starts after
    its participants still hears each one's latest report. Publishers keep 1 (the newest report
    supersedes the others); sim_clock subscribes with a deep queue, as all participants share it."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=depth,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )


def lockstep_clock() -> QoSProfile:
    """/clock in lock-step: reliable (a lost step would stall the kitchen until it is re-sent);
    rclpy's best-effort TimeSource subscription still matches it."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=10,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )


def team(depth: int = 200) -> QoSProfile:
    """Contract-net traffic (cfp, bid, decline, award, plan requests and answers): reliable,
    volatile (an answer to a call that is over means nothing to a late joiner) and deep, since a
    cfp of n tasks brings n answers from every robot at once."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=depth,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )
