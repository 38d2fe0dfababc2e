"""Is a temperature reading physically possible? A stuck or lying sensor, found from energy in.

A sensor that reports "ok" but does not follow the pot is worse than one that stops: a stuck
thermometer reading 20 °C keeps a simmer at 2 kW until the water boils away. The hob knows what
it delivers, so the first law bounds what the medium can do. Over a window that starts at
(t0, reading T0) and during which the hob reports power P(t):

    heat that surely stayed in the pot   E = ∫ (η_lo·P(t) − L_hi) dt
      η_lo = EFFICIENCY_MARGIN · η             (less of the power may reach the pan than rated)
      L_hi = LOSS_MARGIN · L(T_ref)            (the model's pan + surface losses with the whole pot
                                                at T_ref, doubled: T_ref = 150 °C for water, which
                                                cannot pass its boiling point, else the hob's
                                                300 °C cut-out)
    heat the pan may hold ahead of the medium
                                         B = C_pan · (η·P_max / (COUPLING_MARGIN·k) + max(0, T0 − T_pan0))
      (at a steady rise the pan leads the medium by at most the flux over the pan→medium
       conductance k; a pan colder than the medium at t0 first takes that deficit)
    the most the pot can hold per kelvin C_hi = C_pan + MASS_MARGIN · m · c_medium
    so the medium must have risen by at least
                                         ΔT_min = (E − B) / C_hi

The reading is implausible (a sensor fault) when, with E > B,
    - it rose less than ΔT_min − tol  ("does not move while the model says it must"), or
    - it fell by more than tol        ("moves against the heat"),
where tol = SENSOR_TOLERANCE_C covers the sensor's accuracy and noise.

The window restarts when the reading has risen by tol (it follows the heat: credit it and look at
the next stretch), when no net heat is going in (E < 0: holding, cooling, the hob off), when a
reading is missing, when the pot's contents change, and for water near its boiling point (boiling
takes heat without a rise). So a reading that freezes has at most tol of rise to its credit, and
with the hob at full power the check fires at the latest after

    t_detect = (B + 2·tol·C_hi) / (η_lo·P_max − L_hi)

of hob time after the reading stopped following the pot (`Bound.detection_time_s`). For the
kitchen's 2 kW induction hob (η 0.85, 1 kg pan): 1 kg of water 92 s, 2.9 kg (the sample soup)
244 s, 1.3 kg of oil and potatoes (the sample chips) 140 s; the pot warms by about a third of
the detection time's worth of full power meanwhile (nothing boils dry, no oil smokes).
Model error is covered by the margins, never by the caller.
Pure; times are whatever clock drives the hob (sim time in the simulated kitchen).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cookwala_ros.core.heat_model import ThermalParams

EFFICIENCY_MARGIN = 0.75  # only 3/4 of the rated efficiency is counted as reaching the pot
MASS_MARGIN = 2.0  # the pot may hold twice the mass the recipe says
LOSS_MARGIN = 2.0  # losses may be twice what the model says at T_LOSS_REF
COUPLING_MARGIN = 0.5  # the pan → medium conductance may be half the model's
T_LOSS_REF_C = {"water": 150.0}  # losses taken with the whole pot this hot (water cannot pass boiling)
T_LOSS_REF_DEFAULT_C = 300.0  # ... else at the hob's over-temperature cut-out
SENSOR_TOLERANCE_C = 5.0  # accuracy + noise of a kitchen thermometer, generously
BOILING_MARGIN_C = 5.0  # water this close to boiling may take heat without rising
_SIGMA = 5.670374419e-8
_KELVIN = 273.15


@dataclass(frozen=True)
class Bound:
    """The constants of the bound for one pot (see the module docstring)."""

    medium: str
    efficiency_lo: float  # η_lo
    loss_hi_w: float  # L_hi
    lead_buffer_j: float  # C_pan · η·P_max / (COUPLING_MARGIN·k)
    pan_capacity_j_per_k: float  # C_pan
    capacity_hi_j_per_k: float  # C_hi
    tolerance_c: float
    boiling_c: float  # inf unless water

    def net_heat_w(self, power_w: float) -> float:
        return self.efficiency_lo * max(0.0, power_w) - self.loss_hi_w

    def detection_time_s(self, power_w: float) -> float:
        """Longest time at constant `power_w` before a frozen reading is found (inf: never)."""
        net = self.net_heat_w(power_w)
        return math.inf if net <= 0 else (self.lead_buffer_j + 2 * self.tolerance_c * self.capacity_hi_j_per_k) / net


def losses_w(params: ThermalParams, medium: str, temp_c: float, lid: bool = False) -> float:
    """The model's heat loss of a pot at `temp_c` throughout (pan wall + radiation + surface)."""
    amb = params.ambient_c
    pan = params.pan_loss_w_per_k * (temp_c - amb) + params.pan_emissivity * _SIGMA * params.pan_radiating_area_m2 * (
        (temp_c + _KELVIN) ** 4 - (amb + _KELVIN) ** 4)
    surface = params.surface_loss_w_per_k.get(medium, 0.0) * (params.lid_loss_factor if lid else 1.0)
    return pan + surface * (temp_c - amb)


def bound_for(params: ThermalParams, medium: str, mass_kg: float, max_power_w: float,
              boiling_c: float = 100.0) -> Bound | None:
    """The bound for a pot of `mass_kg` of `medium` on a hob of `max_power_w` (None: a medium the
    model does not know, or no mass: nothing to check)."""
    if medium not in params.specific_heat or not (mass_kg > 0) or not (max_power_w > 0):
        return None
    cp = params.pan_capacity_j_per_k
    k = params.coupling_w_per_k[medium] * COUPLING_MARGIN
    lead = cp * params.efficiency * max_power_w / k
    return Bound(medium=medium, efficiency_lo=EFFICIENCY_MARGIN * params.efficiency,
                 loss_hi_w=LOSS_MARGIN * losses_w(params, medium, T_LOSS_REF_C.get(medium, T_LOSS_REF_DEFAULT_C)),
                 lead_buffer_j=lead, pan_capacity_j_per_k=cp,
                 capacity_hi_j_per_k=cp + MASS_MARGIN * mass_kg * params.specific_heat[medium],
                 tolerance_c=SENSOR_TOLERANCE_C, boiling_c=boiling_c if medium == "water" else math.inf)


class RiseCheck:
    """Follows one medium sensor against the heat the hob delivers; `update` says when it lies."""

    def __init__(self, bound: Bound):
        self.bound = bound
        self._t: float | None = None  # time of the last update
        self._power = 0.0  # power in force since the last update
        self._t0: float | None = None
        self._reading0 = 0.0
        self._buffer = 0.0
        self._energy = 0.0

    def reset(self) -> None:
        """Forget the window (contents changed, sensor swapped)."""
        self._t = None
        self._t0 = None

    @property
    def window_s(self) -> float:
        return 0.0 if self._t0 is None or self._t is None else self._t - self._t0

    def expected_rise_c(self) -> float:
        """ΔT_min for the window so far (negative: nothing expected yet)."""
        return (self._energy - self._buffer) / self.bound.capacity_hi_j_per_k

    def _start(self, now: float, reading: float, pan_c: float | None) -> None:
        b = self.bound
        self._t0, self._reading0, self._energy = now, reading, 0.0
        deficit = max(0.0, reading - pan_c) if pan_c is not None else 0.0
        self._buffer = b.lead_buffer_j + b.pan_capacity_j_per_k * deficit

    def update(self, now: float, power_w: float | None, reading: float | None,
               pan_c: float | None = None) -> str | None:
        """Feed the hob's power and the sensor's reading at `now`; the fault found, or None."""
        dt = 0.0 if self._t is None else now - self._t
        power_before = self._power
        self._t = now
        self._power = max(0.0, power_w) if power_w is not None and math.isfinite(power_w) else 0.0
        if reading is None or not math.isfinite(reading) or dt < 0:
            self._t0 = None
            return None
        tol = self.bound.tolerance_c
        if (self._t0 is None or reading >= self.bound.boiling_c - BOILING_MARGIN_C
                or reading - self._reading0 >= tol):
            self._start(now, reading, pan_c)
            return None
        self._energy += self.bound.net_heat_w(power_before) * dt
        if self._energy < 0:  # no net heat in: nothing to expect; begin again from here
            self._start(now, reading, pan_c)
            return None
        if self._energy <= self._buffer:
            return None
        rise = reading - self._reading0
        expected = self.expected_rise_c()
        if rise < -tol:
            return (f"reading fell {-rise:.1f} °C in {self.window_s:.0f} s while the hob put in "
                    f"{self._energy / 1000:.0f} kJ more than any loss (it must rise at least {expected:.1f} °C)")
        if rise < expected - tol:
            return (f"reading rose {rise:.1f} °C in {self.window_s:.0f} s; {self._energy / 1000:.0f} kJ of net heat "
                    f"means at least {expected:.1f} °C for {self.bound.medium} (margin {tol:g} °C)")
        return None


def pan_lead_limit_c(params: ThermalParams, medium: str, power_w: float) -> float | None:
    """How far the pan surface may read above the medium at `power_w` (None: unknown medium).

    At a steady rise the pan leads the medium by the net flux over the pan→medium conductance;
    the flux is at most η·P and the conductance at least COUPLING_MARGIN·k."""
    if medium not in params.coupling_w_per_k:
        return None
    k = params.coupling_w_per_k[medium] * COUPLING_MARGIN
    return params.efficiency * max(0.0, power_w) / k + 2 * SENSOR_TOLERANCE_C


def pan_lead_time_constant_s(params: ThermalParams, medium: str) -> float:
    """How long the pan's lead takes to follow a change of power (C_pan over the lowest k)."""
    k = params.coupling_w_per_k.get(medium, 1.0) * COUPLING_MARGIN
    return params.pan_capacity_j_per_k / k
