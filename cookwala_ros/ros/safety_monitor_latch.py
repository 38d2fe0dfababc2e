"""The safety monitor node's persisted latch (`state_dir`): read at activation, written whenever
the latch changes while stopped or in fault (after the halt went out, from the reporting
path), removed on a successful local reset. The file format is `cookwala_ros.safety.latch`.
"""

from __future__ import annotations

import os
import time

from cookwala_ros.core.timestamps import rfc3339
from cookwala_ros.safety import latch as latch_file


class LatchPersistence:
    """Mixin for SafetyMonitorNode: uses its `_p`, `monitor`, `get_logger`, `_latched` and
    `_persisted_key`."""

    def _read_latch(self) -> latch_file.Latch | None:
        state_dir = os.path.expanduser(self._p("state_dir"))  # the scene passes ~ literally
        found = latch_file.read(state_dir) if state_dir else None
        if found is not None and found.corrupt:
            self.get_logger().error(f"{found.reason}: treating it as a latched stop (fail safe); "
                                    "a local reset clears it")
        elif found is not None:
            self.get_logger().warning(f"latched before restart ({found.state} since {found.wall_time or '?'}: "
                                      f"{found.reason}); stopped until a local reset")
        return found

    @staticmethod
    def _latch_reason(found: latch_file.Latch) -> str:
        if found.corrupt:
            return found.reason
        return f"{found.state} before a restart by {found.trigger or '?'}: {found.reason}"

    def _persist_latch(self) -> None:
        """Write the latch when it changes while stopped or in fault (after the halt went out)."""
        state_dir = os.path.expanduser(self._p("state_dir"))  # the scene passes ~ literally
        arbiter = self.monitor.arbiter
        if not state_dir or arbiter.state not in ("stopped", "fault") or arbiter.episode is None:
            return
        ep = arbiter.episode
        key = (arbiter.state, ep.trigger, ep.detail, tuple(arbiter.active_triggers), tuple(arbiter.fault_reasons))
        if key == self._persisted_key:
            return
        reason = ep.detail if not arbiter.fault_reasons else f"{ep.detail}; fault: {'; '.join(arbiter.fault_reasons)}"
        trigger = ep.trigger
        if trigger == latch_file.LATCHED_BEFORE_RESTART and self._latched is not None and not self._latched.corrupt:
            trigger, reason = self._latched.trigger, self._latched.reason  # keep the original cause
        try:
            latch_file.write(state_dir, latch_file.Latch(arbiter.state, trigger, reason, arbiter.active_triggers,
                                                         rfc3339(time.time())))
            self._persisted_key = key
        except OSError as exc:
            self.get_logger().error(f"cannot persist the latched stop in {state_dir}: {exc}")

    def _clear_latch(self) -> None:
        state_dir = os.path.expanduser(self._p("state_dir"))  # the scene passes ~ literally
        self._latched, self._persisted_key = None, None
        if state_dir:
            try:
                latch_file.clear(state_dir)
            except OSError as exc:
                self.get_logger().error(f"cannot remove the latch file in {state_dir}: {exc}")

