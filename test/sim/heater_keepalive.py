"""Whoever keeps a hob on re-sends its command (heater_sim's dead-man cuts it after command_timeout_s)."""

from __future__ import annotations

import threading

KEEP_ALIVE_S = 0.1  # the agreed re-send period on the steady clock


class KeepAlive:
    """Publishes `msg` now and then every KEEP_ALIVE_S until the with-block ends."""

    def __init__(self, publisher, msg, period_s: float = KEEP_ALIVE_S):
        self.publisher, self.msg, self.period_s = publisher, msg, period_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heater-keep-alive", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            try:
                self.publisher.publish(self.msg)
            except Exception:  # noqa: BLE001 - the test's context is shutting down
                return

    def __enter__(self) -> "KeepAlive":
        self.publisher.publish(self.msg)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
