"""Followers of an execution: the action goal that waits for its changes until it ends.

Goals that reuse an idempotency key name one execution. Each such goal used to hold one of the
executor node's worker threads until the cook ended, so a burst of them could take every thread
and starve the control tick and the heartbeat (issue 14); and they shared one waiter slot, so the
second replaced the first's. Now the newest goal follows and the ones before it are superseded:
woken at once, they answer their clients with the execution as it stands. One thread per followed
execution, however many goals name it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Following:
    """One follower's view: the condition to wait on, and whether a newer follower took over."""

    def __init__(self, condition: threading.Condition, generation: int, latest) -> None:
        self.condition = condition
        self._generation = generation
        self._latest = latest

    @property
    def superseded(self) -> bool:
        return self._latest() != self._generation


class ExecutionWaiters:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._followed: dict[str, tuple[threading.Condition, int, int]] = {}  # execution -> (condition, followers, newest)

    @contextmanager
    def following(self, execution: str) -> Iterator[Following]:
        """Follow `execution` while the block runs; any follower before this one is superseded."""
        with self._lock:
            condition, count, newest = self._followed.get(execution, (None, 0, 0))
            condition = condition or threading.Condition()
            generation = newest + 1
            self._followed[execution] = (condition, count + 1, generation)
        with condition:
            condition.notify_all()  # the one before this one stops following
        try:
            yield Following(condition, generation, lambda: self._newest(execution))
        finally:
            with self._lock:
                condition, count, newest = self._followed[execution]
                if count > 1:
                    self._followed[execution] = (condition, count - 1, newest)
                else:
                    del self._followed[execution]

    def _newest(self, execution: str) -> int:
        with self._lock:
            return self._followed.get(execution, (None, 0, 0))[2]

    def changed(self, execution: str) -> None:
        """Wake the follower of `execution`."""
        with self._lock:
            entry = self._followed.get(execution)
        if entry is not None:
            with entry[0]:
                entry[0].notify_all()

    def wake_all(self) -> None:
        """Wake every follower of every execution (shutting down)."""
        with self._lock:
            conditions = [entry[0] for entry in self._followed.values()]
        for condition in conditions:
            with condition:
                condition.notify_all()

    def followers(self, execution: str) -> int:
        with self._lock:
            return self._followed.get(execution, (None, 0, 0))[1]
