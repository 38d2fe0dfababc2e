"""The multi-threaded executor our nodes and tests spin on.

rclpy 9.1 (Kilted) re-yields a callback that is already queued in the thread pool but has not
started yet, so the spinning thread submits it again and again: the pool's queue fills with
no-op copies and real callbacks wait behind them, 0.1-3 s on an idle host (ros2/rclpy#1452,
fixed upstream in rclpy 10.0.4 by ros2/rclpy#1547, not in the Kilted wheels). Measured here: an
in-process ping-pong has a 0.4 ms median on rclpy's SingleThreadedExecutor and 0.1-0.26 s
medians with p90s of 0.6-1.5 s on its MultiThreadedExecutor. This one submits a callback once
until a worker has taken it, so a callback waits for a free thread, never for a queue of copies
(`benchmarks/executor_latency.py` prints both).
"""

from __future__ import annotations

import threading
import time

from rclpy.executors import (
    ConditionReachedException,
    ExternalShutdownException,
    MultiThreadedExecutor as _RclpyMultiThreadedExecutor,
    ShutdownException,
    TimeoutException,
)

QUEUED_BACKOFF_S = 0.0002  # the spinning thread lets a worker take the GIL when all it found was queued


class MultiThreadedExecutor(_RclpyMultiThreadedExecutor):
    """rclpy's MultiThreadedExecutor without re-submitting a callback that waits in the pool."""

    def __init__(self, num_threads: int | None = None, *, context=None) -> None:
        super().__init__(num_threads=num_threads, context=context)
        self._queued: set = set()
        self._queued_lock = threading.Lock()

    def _spin_once_impl(self, timeout_sec=None, wait_condition=lambda: False) -> None:
        try:
            handler, _entity, _node = self.wait_for_ready_callbacks(timeout_sec, None, wait_condition)
        except (ExternalShutdownException, ShutdownException, TimeoutException, ConditionReachedException):
            return
        with self._queued_lock:
            queued = handler in self._queued
            if not queued:
                self._queued.add(handler)
        if queued:
            time.sleep(QUEUED_BACKOFF_S)
            return
        self._executor.submit(self._run, handler)
        self._futures.append(handler)
        for future in self._futures[:]:
            if future.done():
                self._futures.remove(future)
                future.result()  # raise any exceptions

    def _run(self, handler) -> None:
        with self._queued_lock:
            self._queued.discard(handler)
        handler()
