"""The safety monitor's own check that the heater's thermometers tell the truth (issue 16).

The monitor must not trust the executor, and a max_temp limit read from a stuck sensor protects
nothing. From the heater state alone (power, medium, mass, medium and pan-surface readings and the
state's stamp on the hob's clock) it finds:

- `sensor_implausible:<medium>`: the medium reading does not follow the heat the hob delivers
  (the energy bound of core.plausibility, the same formula the executor uses, on the stamps of the
  heater states so it holds at any simulation speed);
- `sensor_implausible:<medium>_vs_pan`: the pan surface reads further above the medium than the
  pan→medium coupling allows at the power of the last few time constants, for LEAD_HOLD_S of hob
  time (a medium sensor reading low; two sensors, so one does not decide alone). When the pot's
  contents change (cold water into a hot pan) the lead found then may decay no slower than the
  slowest credible time constant C_pan / (COUPLING_MARGIN·k);
- `limit:<id>:pan`: a max_temp limit of the medium exceeded by what the pan surface implies: at
  power P the medium is at least pan − pan_lead_limit_c(P), whatever its own sensor says.

Findings hold while the condition holds; each stops heat and motion (cut_heat, or the limit's
own action). Pure.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Iterable

from cookwala_ros.core import plausibility
from cookwala_ros.core.heat_model import ThermalParams
from cookwala_ros.safety.rules import Finding, applies, of_kind
from cookwala_ros.safety.quantities import to_base

LEAD_HOLD_S = 5.0  # hob seconds the pan may read too far above the medium (noise, one late state)
LEAD_MEMORY_TAU = 5.0  # the lead limit uses the highest power of the last this-many time constants


def _finite(x) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


class SensorPlausibility:
    """Feed it every heater state; `update` returns the findings that hold now."""

    def __init__(self, params: ThermalParams | None = None, max_power_w: float = 2000.0):
        self.params = params or ThermalParams()
        self.max_power_w = float(max_power_w)
        self._pot: tuple | None = None
        self._rise: plausibility.RiseCheck | None = None
        self._rise_fault: str | None = None
        self._powers: deque = deque()  # (stamp, power)
        self._lead_since: float | None = None
        self._lead_start: tuple[float, float] | None = None  # (stamp, lead) when the pot changed

    def _pot_changed(self, medium: str, mass_kg: float | None) -> None:
        self._pot = (medium, mass_kg)
        self._rise_fault = None
        self._lead_since = None
        self._lead_start = None
        bound = plausibility.bound_for(self.params, medium, mass_kg or 0.0, self.max_power_w) if mass_kg else None
        self._rise = plausibility.RiseCheck(bound) if bound is not None else None

    def _recent_power(self, stamp: float, power: float, medium: str) -> float:
        memory = LEAD_MEMORY_TAU * plausibility.pan_lead_time_constant_s(self.params, medium)
        self._powers.append((stamp, power))
        while self._powers and self._powers[0][0] < stamp - memory:
            self._powers.popleft()
        return max(p for _, p in self._powers)

    def update(self, stamp_s: float | None, power_w: float, medium: str, mass_kg: float | None,
               medium_c: float | None, pan_c: float | None, limits: Iterable[dict] = (),
               op: str | None = None) -> list[Finding]:
        medium_c, pan_c, mass = _finite(medium_c), _finite(pan_c), _finite(mass_kg)
        power = max(0.0, _finite(power_w) or 0.0)
        if self._pot != (medium, mass):
            self._pot_changed(medium, mass)
        stamp = _finite(stamp_s)
        if stamp is None or stamp <= 0:  # no hob clock: nothing to integrate over
            return []
        out: list[Finding] = []
        if self._rise is not None:
            fault = self._rise.update(stamp, power, medium_c, pan_c)
            if fault is not None:
                self._rise_fault = fault
            elif self._rise.window_s == 0.0:  # the window restarted: the reading followed, or no heat
                self._rise_fault = None
            if self._rise_fault:
                out.append(Finding(f"sensor_implausible:{medium}", "cut_heat",
                                   f"{medium} temperature sensor implausible: {self._rise_fault}"))
        recent = self._recent_power(stamp, power, medium)
        lead_limit = plausibility.pan_lead_limit_c(self.params, medium, recent)
        if lead_limit is None or pan_c is None:
            self._lead_since = None
            return out
        if medium_c is not None and self._lead_start is None:
            self._lead_start = (stamp, pan_c - medium_c)
        if self._lead_start is not None:  # a lead found when the contents changed decays, no faster
            t0, lead0 = self._lead_start
            tau = plausibility.pan_lead_time_constant_s(self.params, medium)
            lead_limit += max(0.0, lead0 - lead_limit) * math.exp(-max(0.0, stamp - t0) / tau)
        if medium_c is not None and pan_c - medium_c > lead_limit:
            self._lead_since = stamp if self._lead_since is None else self._lead_since
            if stamp - self._lead_since >= LEAD_HOLD_S:
                out.append(Finding(f"sensor_implausible:{medium}_vs_pan", "cut_heat",
                                   f"pan surface {pan_c:.1f} degC is {pan_c - medium_c:.1f} degC above the {medium} "
                                   f"reading {medium_c:.1f} degC for {stamp - self._lead_since:.0f} s; at most "
                                   f"{lead_limit:.0f} degC is possible at {recent:.0f} W"))
        else:
            self._lead_since = None
        implied = pan_c - lead_limit
        for limit in of_kind(limits, "max_temp"):
            if (limit.get("appliesTo") or {}).get("medium") != medium or not applies(limit, medium, op):
                continue
            if "max" in limit and implied > to_base(limit["max"], limit.get("unit")):
                out.append(Finding(f"limit:{limit['id']}:pan", limit.get("action", "cut_heat"),
                                   f"pan surface {pan_c:.1f} degC at {recent:.0f} W implies {medium} at least "
                                   f"{implied:.1f} degC > max {limit['max']} {limit.get('unit', '')}", limit["id"]))
        return out
