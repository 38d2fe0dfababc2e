"""The device's own thermal estimate of the pot: the `model` rung of the sensor ladder.

When a step's medium sensor is missing (not fitted, disabled, or it stopped reading) the
executor still has to know roughly how hot the medium is, to hold the envelope open-loop and to
log a `verifiedBy: model` estimate. This is a two-mass lumped model (pan, medium) driven by the
heater power the hob reports; any reading that is available (typically the pan surface) pulls
the estimate back to the measurement, so only the unmeasured part is predicted.

The default parameters describe the simulated kitchen's pot and hob (the figures a vendor
would calibrate for their own hardware); an integrator passes their own `ThermalParams`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

_SIGMA = 5.670374419e-8
_KELVIN = 273.15


@dataclass(frozen=True)
class ThermalParams:
    pan_capacity_j_per_k: float = 500.0  # 1 kg stainless pan
    efficiency: float = 0.85  # induction
    ambient_c: float = 20.0
    pan_loss_w_per_k: float = 0.3
    pan_radiating_area_m2: float = 0.05
    pan_emissivity: float = 0.3
    lid_loss_factor: float = 0.3
    specific_heat: dict = field(default_factory=lambda: {"water": 4186.0, "oil": 2000.0, "air": 1005.0})
    coupling_w_per_k: dict = field(default_factory=lambda: {"water": 200.0, "oil": 40.0, "air": 2.0})
    surface_loss_w_per_k: dict = field(default_factory=lambda: {"water": 0.4, "oil": 0.4, "air": 0.2})


class ThermalEstimate:
    """Pan + medium temperatures predicted from heater power, corrected by any reading."""

    def __init__(self, params: ThermalParams, medium: str, mass_kg: float, *, lid: bool = False,
                 pan_c: float | None = None, medium_c: float | None = None, altitude_m: float = 0.0):
        self.params = params
        self.medium = medium if medium in params.specific_heat else "pan_surface"
        self.mass_kg = max(0.0, float(mass_kg)) if self.medium != "pan_surface" else 0.0
        self.lid = lid
        self.boiling_c = 100.0 - float(altitude_m) / 300.0 if self.medium == "water" else math.inf
        start = params.ambient_c
        self.pan_c = start if pan_c is None else float(pan_c)
        self.medium_c = start if medium_c is None else min(float(medium_c), self.boiling_c)
        if self.medium == "pan_surface":
            self.medium_c = self.pan_c

    def correct(self, pan_c: float | None = None, medium_c: float | None = None) -> None:
        """Replace the prediction by measurements where there are some."""
        if pan_c is not None:
            self.pan_c = pan_c
        if medium_c is not None:
            self.medium_c = medium_c
        if self.medium == "pan_surface":
            self.medium_c = self.pan_c if medium_c is None else medium_c

    def step(self, dt: float, power_w: float) -> None:
        """Advance by dt seconds with `power_w` electrical power (substeps <= 0.5 s; the pan/medium
        exchange is implicit, so it stays stable at any step)."""
        if dt <= 0:
            return
        n = max(1, math.ceil(dt / 0.5))
        h = dt / n
        for _ in range(n):
            self._substep(h, max(0.0, power_w))

    def _substep(self, dt: float, power_w: float) -> None:
        p = self.params
        amb = p.ambient_c
        pan_loss = p.pan_loss_w_per_k * (self.pan_c - amb) + p.pan_emissivity * _SIGMA * p.pan_radiating_area_m2 * (
            (self.pan_c + _KELVIN) ** 4 - (amb + _KELVIN) ** 4)
        q_in = power_w * p.efficiency
        if self.medium == "pan_surface" or self.mass_kg <= 0:
            self.pan_c += dt * (q_in - pan_loss) / p.pan_capacity_j_per_k
            self.medium_c = self.pan_c
            return
        cm = self.mass_kg * p.specific_heat[self.medium]
        k = p.coupling_w_per_k[self.medium]
        lid = p.lid_loss_factor if self.lid else 1.0
        surface = p.surface_loss_w_per_k[self.medium] * lid * (self.medium_c - amb)
        # implicit in the coupling term so a stiff pan/medium pair stays stable at any dt
        a = dt * k
        b1 = p.pan_capacity_j_per_k * self.pan_c + dt * (q_in - pan_loss)
        b2 = cm * self.medium_c - dt * surface
        cp = p.pan_capacity_j_per_k
        det = cp * cm + a * (cp + cm)
        self.pan_c = (b1 * (cm + a) + a * b2) / det
        self.medium_c = min(((cp + a) * b2 + a * b1) / det, self.boiling_c)
