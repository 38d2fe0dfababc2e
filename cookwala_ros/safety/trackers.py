"""time_temp limits: food-safety clocks that run over minutes to hours (on ROS time).

Two shapes, told apart by the limit itself:
- with a `min` and a `holdFor`: time spent below min during the limit's ops adds up; more than
  holdFor -> the limit's action (hot holding: below 60 °C for more than 2 h);
- with no bounds: two-stage cooling (60 -> 21 °C within 2 h, then -> 5 °C within 4 more hours),
  the cooling rule the standard's cool.two_stage limit names.
"""

from __future__ import annotations

from cookwala_ros.safety.quantities import duration_s, to_base
from cookwala_ros.safety.rules import Finding, applies

COOL_STAGES = ((60.0, 21.0, 2 * 3600.0), (21.0, 5.0, 4 * 3600.0))  # (from degC, to degC, within s)


class HoldTracker:
    """Accumulates time below `min` while the limit applies."""

    def __init__(self, limit: dict):
        self.limit = limit
        self.min_c = to_base(limit["min"], limit.get("unit"))
        self.allowed_s = duration_s(limit["holdFor"])
        self.below_s = 0.0
        self._last: float | None = None
        self._last_below = False

    def update(self, t: float, temp_c: float, op: str | None) -> Finding | None:
        if op is None or not applies(self.limit, None, op):
            self._last = None
            return None
        if self._last is not None and self._last_below:  # the last reading holds until this one
            self.below_s += max(0.0, t - self._last)
        self._last, self._last_below = t, temp_c < self.min_c
        if self.below_s > self.allowed_s:
            return Finding(f"limit:{self.limit['id']}", self.limit["action"],
                           f"{self.below_s / 60:.0f} min below {self.min_c:g} degC (allowed {self.limit['holdFor']})",
                           self.limit["id"])
        return None


class CoolingTracker:
    """Two-stage cooling clock: each stage must be reached within its time from the previous."""

    def __init__(self, limit: dict):
        self.limit = limit
        self.stage = -1  # -1: not yet at 60 degC, 0/1: cooling stage, 2: done
        self.stage_started: float | None = None

    def update(self, t: float, temp_c: float, op: str | None) -> Finding | None:
        if op is None or not applies(self.limit, None, op):
            return None
        if self.stage == -1 and temp_c <= COOL_STAGES[0][0]:
            self.stage, self.stage_started = 0, t
        while 0 <= self.stage < len(COOL_STAGES) and temp_c <= COOL_STAGES[self.stage][1]:
            self.stage, self.stage_started = self.stage + 1, t
        if 0 <= self.stage < len(COOL_STAGES) and self.stage_started is not None:
            start_c, end_c, within_s = COOL_STAGES[self.stage]
            if t - self.stage_started > within_s:
                return Finding(f"limit:{self.limit['id']}", self.limit["action"],
                               f"not cooled from {start_c:g} to {end_c:g} degC within {within_s / 3600:g} h",
                               self.limit["id"])
        return None


def trackers_for(limits: list[dict]) -> list[HoldTracker | CoolingTracker]:
    out: list[HoldTracker | CoolingTracker] = []
    for limit in limits:
        if limit.get("kind") != "time_temp":
            continue
        if "min" in limit and limit.get("holdFor"):
            out.append(HoldTracker(limit))
        elif "min" not in limit and "max" not in limit:
            out.append(CoolingTracker(limit))
    return out
