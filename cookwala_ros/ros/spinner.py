"""A node spun by its own single-threaded executor in its own thread, stoppable from outside.

rclpy's `Executor.shutdown()` destroys the executor's guard condition while another thread may
still be waiting on it (a teardown crash). Here the spinning thread is asked to stop, woken and
joined first; only then is the executor shut down and may the node be destroyed.
"""

from __future__ import annotations

import threading
import traceback

from rclpy.executors import SingleThreadedExecutor


class Spinner:
    """One node on its own single-threaded executor in its own thread, stoppable from outside
    without destroying anything the spinning thread may still be waiting on."""

    def __init__(self, node, name: str):
        self.executor = SingleThreadedExecutor(context=node.context)  # one thread: its overhead once
        self.executor.add_node(node)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._spin, name=name, daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        try:
            while not self._stop.is_set() and self.executor.context.ok():
                self.executor.spin_once(timeout_sec=0.2)
        except Exception:  # noqa: BLE001 - the context going away under us is a clean end
            if not self._stop.is_set() and self.executor.context.ok():
                traceback.print_exc()

    def request_stop(self) -> None:
        self._stop.set()
        try:
            self.executor.wake()
        except Exception:  # noqa: BLE001
            pass

    def join(self) -> None:
        self.thread.join(timeout=2.0)
        if not self.thread.is_alive():
            self.executor.shutdown(timeout_sec=0.5)
