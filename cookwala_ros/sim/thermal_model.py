"""Lumped-capacitance thermal model of a pan on a heat source, with its temperature sensors.

Two thermal masses: the pan (heated by the source) and the medium in it (water, oil, air, or
none when the pan is empty: `pan_surface`). Heat flows source -> pan -> medium; with losses on,
the pan and the medium's free surface also lose heat to the kitchen. Water cannot get hotter than
its boiling point at the configured altitude: energy beyond it evaporates water (latent heat)
until the pan boils dry. Oil has no such ceiling: it passes its smoke point and keeps heating
while power stays on. Two sensors (medium, pan surface) can be disconnected (NaN) or stuck.

Numbers and where they come from (SI units):
- source efficiencies: the mid-points of the ranges of the Cookwala knowledge base's
  energy models (cw.knowledge.energy.core: induction 0.80-0.90, electric resistive 0.65-0.80,
  natural gas and propane 0.30-0.45);
- specific heats: water 4186 J/(kg K), cooking oil 2000 J/(kg K) (vegetable oils 1.9-2.1),
  air 1005 J/(kg K), stainless-steel pan 500 J/(kg K); latent heat of vaporisation of water
  2.257 MJ/kg at 100 degC (engineering tables);
- boiling point falls 1 degC per 300 m of altitude (Cookwala Core: water and steam bands shift by
  -1 degC per 300 m);
- pan -> medium conductances: a 0.24 m pan base (0.045 m^2) with heat-transfer coefficients of
  about 4400 W/(m^2 K) to water (convection/subcooled boiling), 900 to oil and 45 to air;
- losses: natural convection, about 10 W/(m^2 K) over the exposed pan wall and the medium's
  free surface, plus grey-body radiation of the pan (emissivity 0.3); a lid cuts the medium's
  surface loss to 30 %.

Integration: heat exchange between pan and medium is implicit (backward Euler, stable for any
step and energy-conserving), losses explicit, in substeps of at most `max_substep_s`.
Pure Python; time advances only through step(dt).
"""

from __future__ import annotations

import dataclasses
import enum
import math

STEFAN_BOLTZMANN = 5.670374419e-8  # [W/(m^2 K^4)]
KELVIN = 273.15

# Mid-points of the efficiency ranges of cw.knowledge.energy.core (see module docstring).
SOURCE_EFFICIENCY = {
    "electric_induction": 0.85,
    "electric_resistive": 0.725,
    "natural_gas": 0.375,
    "propane": 0.375,
}

WATER_LATENT_HEAT = 2.257e6  # [J/kg] at 100 degC
BOILING_POINT_SEA_LEVEL_C = 100.0
ALTITUDE_PER_DEGREE_M = 300.0  # boiling point -1 degC per 300 m

PAN_SPECIFIC_HEAT = 500.0  # stainless steel [J/(kg K)]
PAN_LOSS_W_PER_K = 0.3  # exposed pan wall, natural convection
PAN_RADIATING_AREA_M2 = 0.05
PAN_EMISSIVITY = 0.3
LID_LOSS_FACTOR = 0.3
DRY_MASS_KG = 1e-4  # below this the pan has boiled dry


@dataclasses.dataclass(frozen=True)
class Medium:
    name: str
    specific_heat: float  # [J/(kg K)]
    pan_coupling_w_per_k: float  # pan -> medium conductance
    surface_loss_w_per_k: float  # medium free surface -> kitchen, no lid
    boils: bool  # water: clamps at the boiling point and evaporates


MEDIA = {
    "water": Medium("water", 4186.0, 200.0, 0.4, boils=True),
    "oil": Medium("oil", 2000.0, 40.0, 0.4, boils=False),
    "air": Medium("air", 1005.0, 2.0, 0.2, boils=False),
    "pan_surface": Medium("pan_surface", 0.0, 0.0, 0.0, boils=False),  # empty pan
}


class SensorFault(enum.Enum):
    NONE = "none"
    DISCONNECTED = "disconnected"  # reads NaN, reported not ok
    STUCK = "stuck"  # keeps reading the value it had when it stuck, reported ok


def boiling_point_c(altitude_m: float) -> float:
    """Boiling point of water at a kitchen altitude (1 degC lower per 300 m)."""
    return BOILING_POINT_SEA_LEVEL_C - altitude_m / ALTITUDE_PER_DEGREE_M


@dataclasses.dataclass(frozen=True)
class ThermalConfig:
    medium: str = "water"
    medium_mass_kg: float = 1.0
    heat_source: str = "electric_induction"
    efficiency: float | None = None  # None: the figure for heat_source
    pan_mass_kg: float = 1.0
    pan_specific_heat: float = PAN_SPECIFIC_HEAT
    altitude_m: float = 0.0
    ambient_c: float = 20.0
    initial_temp_c: float | None = None  # None: ambient
    losses: bool = True
    lid: bool = False
    oil_smoke_point_c: float = 230.0
    max_substep_s: float = 0.1

    def problems(self) -> list[str]:
        """Field-named reasons this configuration is unusable (empty when fine)."""
        out = []
        if self.medium not in MEDIA:
            out.append(f"medium: {self.medium!r} is not one of {', '.join(MEDIA)}")
        if self.heat_source not in SOURCE_EFFICIENCY:
            out.append(f"heat_source: {self.heat_source!r} is not one of {', '.join(SOURCE_EFFICIENCY)}")
        if self.efficiency is not None and not 0.0 < self.efficiency <= 1.0:
            out.append("efficiency: must be in (0, 1]")
        if self.medium != "pan_surface" and not (math.isfinite(self.medium_mass_kg) and self.medium_mass_kg > 0):
            out.append("medium_mass_kg: must be > 0")
        if not (math.isfinite(self.pan_mass_kg) and self.pan_mass_kg > 0):
            out.append("pan_mass_kg: must be > 0")
        if not (math.isfinite(self.pan_specific_heat) and self.pan_specific_heat > 0):
            out.append("pan_specific_heat: must be > 0")
        if not -500.0 <= self.altitude_m <= 9000.0:
            out.append("altitude_m: must be within [-500, 9000]")
        if not -30.0 <= self.ambient_c <= 60.0:
            out.append("ambient_c: must be within [-30, 60]")
        start = self.start_temp_c
        if not math.isfinite(start) or start < -50.0:
            out.append("initial_temp_c: must be a finite temperature >= -50")
        elif self.medium == "water" and start > boiling_point_c(self.altitude_m):
            out.append(f"initial_temp_c: {start} is above the boiling point ({boiling_point_c(self.altitude_m):.1f} degC)")
        if not (math.isfinite(self.max_substep_s) and 0.0 < self.max_substep_s <= 1.0):
            out.append("max_substep_s: must be in (0, 1]")
        return out

    @property
    def start_temp_c(self) -> float:
        return self.ambient_c if self.initial_temp_c is None else self.initial_temp_c

    @property
    def source_efficiency(self) -> float:
        return self.efficiency if self.efficiency is not None else SOURCE_EFFICIENCY[self.heat_source]


@dataclasses.dataclass(frozen=True)
class Readings:
    medium_temp_c: float  # NaN when disconnected
    pan_temp_c: float
    medium_ok: bool
    pan_ok: bool


class ThermalModel:
    """Pan + medium on a heat source. Electrical power in, temperatures and evaporation out."""

    def __init__(self, config: ThermalConfig):
        problems = config.problems()
        if problems:
            raise ValueError("; ".join(problems))
        self.config = config
        self.medium = MEDIA[config.medium]
        self.efficiency = config.source_efficiency
        self.boiling_point_c = boiling_point_c(config.altitude_m)
        self.pan_capacity = config.pan_mass_kg * config.pan_specific_heat  # [J/K]
        self.time = 0.0
        self.pan_c = config.start_temp_c
        self.medium_c = config.start_temp_c
        self.medium_mass_kg = 0.0 if config.medium == "pan_surface" else config.medium_mass_kg
        self.power_w = 0.0  # electrical power being delivered
        # energy book-keeping [J], for tests and diagnostics
        self.heat_in_j = 0.0
        self.losses_j = 0.0
        self.evaporated_kg = 0.0
        self.vapour_j = 0.0  # enthalpy carried off by the steam, relative to liquid at 0 degC
        self._sensor_faults = {"medium": SensorFault.NONE, "pan": SensorFault.NONE}
        self._stuck_values: dict[str, float] = {}

    # ------------------------------------------------------------------ inputs

    def set_power(self, watts: float) -> None:
        """Electrical power delivered to the source from now on [W]."""
        if not math.isfinite(watts) or watts < 0:
            raise ValueError(f"power must be finite and >= 0, got {watts}")
        self.power_w = float(watts)

    def set_sensor_fault(self, sensor: str, fault: SensorFault) -> None:
        if sensor not in self._sensor_faults:
            raise ValueError(f"sensor must be 'medium' or 'pan', got {sensor!r}")
        if fault is SensorFault.STUCK and self._sensor_faults[sensor] is not SensorFault.STUCK:
            self._stuck_values[sensor] = self._true(sensor)
        self._sensor_faults[sensor] = SensorFault(fault)

    def refilled(self, medium: str, medium_mass_kg: float, lid: bool) -> "ThermalModel":
        """The same pan with new contents (an ingredient added, the pot changed, a lid put on).

        The pan keeps its temperature; the medium keeps its temperature only when it is the same
        medium (more water in the pot), otherwise the new contents start at the kitchen's
        temperature. Sensor faults, the clock and the delivered power carry over.
        """
        config = dataclasses.replace(self.config, medium=medium, medium_mass_kg=medium_mass_kg, lid=bool(lid),
                                     initial_temp_c=None)
        model = ThermalModel(config)  # ValueError names the bad field
        model.time = self.time
        model.pan_c = self.pan_c
        if medium == self.config.medium:
            model.medium_c = min(self.medium_c, model.boiling_point_c) if model.medium.boils else self.medium_c
        if model.dry:
            model.medium_c = model.pan_c  # the medium probe touches the empty pan
        model.power_w = self.power_w
        model._sensor_faults = dict(self._sensor_faults)
        model._stuck_values = dict(self._stuck_values)
        return model

    # ------------------------------------------------------------------ outputs

    @property
    def dry(self) -> bool:
        """No medium left in the pan (boiled dry, or an empty pan)."""
        return self.medium_mass_kg <= 0.0

    @property
    def boiling(self) -> bool:
        return self.medium.boils and not self.dry and self.medium_c >= self.boiling_point_c

    @property
    def smoking(self) -> bool:
        return self.config.medium == "oil" and self.medium_c >= self.config.oil_smoke_point_c

    def _true(self, sensor: str) -> float:
        return self.pan_c if sensor == "pan" else self.medium_c

    def _read(self, sensor: str) -> tuple[float, bool]:
        fault = self._sensor_faults[sensor]
        if fault is SensorFault.DISCONNECTED:
            return math.nan, False
        if fault is SensorFault.STUCK:
            return self._stuck_values[sensor], True
        return self._true(sensor), True

    def readings(self) -> Readings:
        medium, medium_ok = self._read("medium")
        pan, pan_ok = self._read("pan")
        return Readings(medium, pan, medium_ok, pan_ok)

    def sensor_fault(self, sensor: str) -> SensorFault:
        return self._sensor_faults[sensor]

    def stored_energy_j(self) -> float:
        """Heat content relative to everything at 0 degC, steam included (for energy balances)."""
        medium = self.medium_mass_kg * self.medium.specific_heat * self.medium_c
        return self.pan_capacity * self.pan_c + medium + self.vapour_j

    # ------------------------------------------------------------------ dynamics

    def _losses(self) -> tuple[float, float]:
        """(pan, medium) heat loss to the kitchen [W]."""
        if not self.config.losses:
            return 0.0, 0.0
        ambient = self.config.ambient_c
        pan = PAN_LOSS_W_PER_K * (self.pan_c - ambient) + PAN_EMISSIVITY * STEFAN_BOLTZMANN * PAN_RADIATING_AREA_M2 * (
            (self.pan_c + KELVIN) ** 4 - (ambient + KELVIN) ** 4
        )
        lid = LID_LOSS_FACTOR if self.config.lid else 1.0
        medium = 0.0 if self.dry else self.medium.surface_loss_w_per_k * lid * (self.medium_c - ambient)
        return pan, medium

    def _substep(self, dt: float) -> None:
        q_in = self.power_w * self.efficiency
        loss_pan, loss_medium = self._losses()
        cp = self.pan_capacity
        b1 = cp * self.pan_c + dt * (q_in - loss_pan)
        if self.dry:
            self.pan_c = b1 / cp
            self.medium_c = self.pan_c  # the medium probe touches the empty pan
        else:
            cm = self.medium_mass_kg * self.medium.specific_heat
            a = dt * self.medium.pan_coupling_w_per_k
            b2 = cm * self.medium_c - dt * loss_medium
            det = cp * cm + a * (cp + cm)
            self.pan_c = (b1 * (cm + a) + a * b2) / det
            self.medium_c = ((cp + a) * b2 + a * b1) / det
            if self.medium.boils and self.medium_c > self.boiling_point_c:
                excess = (self.medium_c - self.boiling_point_c) * cm
                evaporated = min(excess / WATER_LATENT_HEAT, self.medium_mass_kg)
                self.medium_c = self.boiling_point_c
                self.medium_mass_kg -= evaporated
                if self.medium_mass_kg < DRY_MASS_KG:  # boiled dry: what is left flashes off
                    evaporated += self.medium_mass_kg
                    self.medium_mass_kg = 0.0
                    self.medium_c = self.pan_c
                self.evaporated_kg += evaporated
                self.vapour_j += evaporated * (WATER_LATENT_HEAT + self.medium.specific_heat * self.boiling_point_c)
        self.heat_in_j += q_in * dt
        self.losses_j += (loss_pan + loss_medium) * dt
        self.time += dt

    def step(self, dt: float) -> None:
        """Advance by dt seconds in substeps of at most max_substep_s."""
        if dt < 0 or not math.isfinite(dt):
            raise ValueError(f"dt must be finite and >= 0, got {dt}")
        if dt == 0:
            return
        n = max(1, math.ceil(dt / self.config.max_substep_s - 1e-9))
        h = dt / n
        for _ in range(n):
            self._substep(h)
