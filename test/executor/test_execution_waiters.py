"""Goals that follow one execution (one idempotency key): the newest follows, the ones before it are
woken at once and superseded, so a burst of goals holds one thread, not one each (issue 14)."""

from __future__ import annotations

import threading
import time

from cookwala_ros.executor.waiters import ExecutionWaiters


class Follower(threading.Thread):
    """Follows `execution` until woken `wakes` times or superseded, as the executor's goals do."""

    def __init__(self, waiters: ExecutionWaiters, execution: str, wakes: int = 1) -> None:
        super().__init__(daemon=True)
        self.waiters, self.execution, self.wakes = waiters, execution, wakes
        self.inside = threading.Event()
        self.woken: list[bool] = []  # per wait: True = notified, False = timed out
        self.superseded = None

    def run(self) -> None:
        with self.waiters.following(self.execution) as follow:
            with follow.condition:
                self.inside.set()
                while len(self.woken) < self.wakes and not follow.superseded:
                    self.woken.append(follow.condition.wait(timeout=30.0))
            self.superseded = follow.superseded


def test_a_newer_follower_supersedes_the_one_before_it_at_once():
    waiters = ExecutionWaiters()
    first = Follower(waiters, "exec-1", wakes=5)
    first.start()
    assert first.inside.wait(10.0)
    second = Follower(waiters, "exec-1")
    second.start()
    first.join(10.0)
    assert first.superseded is True and first.woken == [True]  # woken by the newer one, not a timeout
    assert second.inside.wait(10.0)
    assert waiters.followers("exec-1") == 1
    waiters.changed("exec-1")
    second.join(10.0)
    assert second.woken == [True] and second.superseded is False
    assert waiters.followers("exec-1") == 0


def test_a_change_wakes_the_follower_of_that_execution_only():
    waiters = ExecutionWaiters()
    a, b = Follower(waiters, "exec-a"), Follower(waiters, "exec-b")
    for follower in (a, b):
        follower.start()
        assert follower.inside.wait(10.0)
    waiters.changed("exec-a")
    a.join(10.0)
    assert a.woken == [True] and a.superseded is False
    time.sleep(0.1)
    assert b.woken == [] and b.is_alive()
    waiters.wake_all()  # shutting down
    b.join(10.0)
    assert b.woken == [True]


def test_twenty_followers_of_one_execution_leave_one_following():
    waiters = ExecutionWaiters()
    followers = []
    for _ in range(20):
        follower = Follower(waiters, "exec-1", wakes=100)
        follower.start()
        assert follower.inside.wait(10.0)
        followers.append(follower)
    for follower in followers[:-1]:
        follower.join(10.0)
        assert follower.superseded is True
    assert waiters.followers("exec-1") == 1 and followers[-1].is_alive()
    followers[-1].wakes = 0  # stops at its next wake
    waiters.wake_all()
    followers[-1].join(10.0)
    assert not followers[-1].is_alive()
