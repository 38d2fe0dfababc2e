"""Hand a watchdog's inputs to their callbacks before the watchdog judges them.

rclpy's executors run the ready timers of a wait before its ready subscriptions. A process that
was descheduled for a moment (a loaded host, a long callback) therefore runs its watchdog timer
first and finds its inputs silent although their messages arrived meanwhile and wait in the
subscription. A watchdog calls `deliver_waiting` first, so it judges what has been received, and
silence means the sender went quiet, not that this process was slow.
"""

from __future__ import annotations

from typing import Callable

from rclpy.exceptions import InvalidHandle


def deliver_waiting(subscription, callback: Callable, limit: int = 32) -> int:
    """Take the messages waiting in `subscription` and pass each to `callback`; how many there were."""
    count = 0
    while count < limit:
        try:
            with subscription.handle:
                taken = subscription.handle.take_message(subscription.msg_type, subscription.raw)
        except InvalidHandle:  # destroyed meanwhile (a lifecycle cleanup): nothing to deliver
            return count
        if taken is None:
            return count
        callback(taken[0])
        count += 1
    return count
