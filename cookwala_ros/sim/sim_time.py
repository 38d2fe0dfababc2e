"""Turn successive clock readings into simulation steps.

The simulators step on the ROS clock, which under `use_sim_time` is whatever /clock says: it
starts at zero until the first /clock message, may advance by a large step at high real-time
factors, and jumps back when a simulation restarts. This keeps one origin so model times stay
small floats, integrates forward jumps in full up to `max_step_s`, and restarts the count on a
backward jump instead of stepping by a negative time. Pure.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class Step:
    seconds: float  # how far to advance the model now (0 on the first reading or after a jump back)
    model_time: float  # model time [s] after the step: seconds since the origin
    skipped: float = 0.0  # seconds beyond max_step_s that were not simulated
    restarted: bool = False  # the clock went backwards


class SimTime:
    def __init__(self, max_step_s: float = 60.0):
        if max_step_s <= 0:
            raise ValueError("max_step_s must be > 0")
        self.max_step_s = max_step_s
        self.origin_ns: int | None = None
        self._last_ns: int | None = None
        self._offset = 0.0  # model seconds that are not origin-relative (after skips or restarts)

    @property
    def started(self) -> bool:
        return self._last_ns is not None

    def model_time(self, now_ns: int) -> float:
        """Model time [s] for a clock reading (for trajectory start stamps)."""
        if self.origin_ns is None:
            return 0.0
        return (now_ns - self.origin_ns) * 1e-9 + self._offset

    def advance(self, now_ns: int) -> Step:
        """The step that brings the model to clock reading `now_ns`."""
        if now_ns <= 0:  # sim time before the first /clock message: nothing to simulate yet
            return Step(0.0, self.model_time(self._last_ns) if self._last_ns is not None else 0.0)
        if self._last_ns is None:
            self.origin_ns = self._last_ns = now_ns
            return Step(0.0, 0.0)
        if now_ns < self._last_ns:
            self._offset = self.model_time(self._last_ns) - (now_ns - self.origin_ns) * 1e-9
            self._last_ns = now_ns
            return Step(0.0, self.model_time(now_ns), restarted=True)
        seconds = (now_ns - self._last_ns) * 1e-9
        skipped = 0.0
        if seconds > self.max_step_s:
            skipped = seconds - self.max_step_s
            self._offset -= skipped
            seconds = self.max_step_s
        self._last_ns = now_ns
        return Step(seconds, self.model_time(now_ns), skipped=skipped)
