"""The executor's control tick in lock-step mode (`clock_mode:=lockstep`).

The sim clock advances a step only when every participant has finished the one before; the
executor finishes a step once it has the plant's state of that step and has run the tick due in
it. A driver that does not deliver its state within the staleness bound (steady clock) is ticked
without, so its stale state is a fault the tick reports rather than a frozen kitchen.
"""

from __future__ import annotations

import threading
import time

from cookwala_ros.ros.lockstep import StepParticipant

STEP_WATCH_S = 0.25  # how often a step waiting for the plant's state is looked at [s, steady]; the wait is 0.5-1 s


class LockstepTick:
    """Mixed into ExecutorNode: uses its `io`, `_tick`, `_steady`, `create_timer` and clock."""

    stepper: StepParticipant | None = None

    def _ros_now(self) -> float:
        if self.stepper is not None:  # the step being run (the node's clock may not have heard it yet)
            return max(self.stepper.t_ns, 0) / 1e9
        return self.get_clock().now().nanoseconds / 1e9

    def _start_lockstep(self, values: dict, control) -> None:
        self._tick_period_ns = int(round(1e9 / values["tick_hz"]))
        self._next_tick_ns: int | None = None
        self._step_lock = threading.Lock()  # one tick at a time, whichever thread completes the step
        self._step_since = time.monotonic()
        self._reading_wait_s = min(values["heater_state_timeout_s"], values["joint_state_timeout_s"])
        self.lockstep_forced = 0  # ticks run without the plant's state of their step (tests, diagnostics)
        self.stepper = StepParticipant(self, self._on_step, callback_group=control,
                                       idle=lambda: self.service.cooking_now() is None)
        self.io.on_reading = self._on_reading
        self.create_timer(STEP_WATCH_S, self._on_step_watch, callback_group=control, clock=self._steady)

    def _on_step(self, t_ns: int) -> bool:
        with self._step_lock:
            self._step_since = time.monotonic()
            return self._complete_step(force=False)

    def _on_reading(self) -> None:
        if self.stepper.pending:
            with self._step_lock:
                self._complete_step(force=False)

    def _on_step_watch(self) -> None:
        """A driver that does not deliver its state of the step: tick without it (its state is then
        stale, a fault the tick reports), after the staleness bound of the steady clock."""
        if self.stepper.pending and time.monotonic() - self._step_since > self._reading_wait_s:
            with self._step_lock:
                if self.stepper.pending:
                    self.lockstep_forced += 1
                    self._complete_step(force=True)

    def _complete_step(self, force: bool) -> bool:
        """Tick if this step is a tick's and the plant's state of it is in, then report it done
        (call with the step lock held). False: still waiting for a reading."""
        if not self.stepper.pending:
            return True
        t_ns = self.stepper.t_ns
        if self._next_tick_ns is None or t_ns >= self._next_tick_ns or t_ns < self._next_tick_ns - self._tick_period_ns:
            if not force and not self.io.readings_at(t_ns):
                return False
            self._next_tick_ns = t_ns + self._tick_period_ns
            try:
                self._tick()
            finally:
                self.stepper.finish()
            return True
        self.stepper.finish()
        return True
