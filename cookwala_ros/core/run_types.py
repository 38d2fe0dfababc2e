"""The plain data the execution engine exchanges with its adapter (see core/engine.py).

`Observation` is what the device reports at one instant, `Commands` what the engine wants done
next, `RunConfig` how one run is set up. All fields are plain Python values so the ROS adapter,
the HTTP service and the in-process simulation fill them the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from cookwala_ros.core import vocab
from cookwala_ros.core.heat_model import ThermalParams

# Which observation field a temperature sensor id reads (canonical ids). Sensors not listed come
# from Observation.readings only.
DEFAULT_SENSOR_SOURCES = {
    "cw.sense.liquid_temp": "medium",
    "cw.sense.oil_temp": "medium",
    "cw.sense.oven_air_temp": "medium",
    "cw.sense.chamber_temp": "medium",
    "cw.sense.pan_surface_temp": "pan",
}


class HeaterFault(StrEnum):
    """What a heater driver reports wrong (cookwala_msgs/HeaterState FAULT_*), or the executor found."""

    RELAY_WELDED = "relay_welded"
    SENSOR_DISCONNECTED = "sensor_disconnected"  # the ladder falls back; the heat is not at fault
    OVERTEMP = "overtemp"
    STALE_STATE = "stale_state"  # no fresh heater state: the driver is silent
    OTHER = "fault"  # a fault code this executor does not know

    @classmethod
    def of(cls, value: str | None) -> HeaterFault | None:
        """None for no fault; an unknown code is OTHER, which cuts heat like any fault."""
        if not value:
            return None
        try:
            return cls(value)
        except ValueError:
            return cls.OTHER

    @property
    def cuts_heat(self) -> bool:
        return self is not HeaterFault.SENSOR_DISCONNECTED

    @property
    def incident(self) -> str:
        return "cw.incident.overheat" if self is HeaterFault.OVERTEMP else "cw.incident.equipment_failure"


@dataclass
class Observation:
    now_s: float  # ROS time [s] (sim time in CI)
    medium_temp_c: float | None = None  # None = no or invalid reading
    pan_temp_c: float | None = None
    heater_power_w: float | None = 0.0
    heater_fault: HeaterFault | None = None
    arm_fault: str | None = None  # None, or e.g. "stale_state" (no fresh joint states: the arm driver is silent)
    safety_fault: str | None = None  # why the device's safety monitor cannot be relied on (gone, silent), or None
    fault_details: dict = field(default_factory=dict)  # "heater" / "arm" -> what was observed (names the driver)
    arm_positions: dict = field(default_factory=dict)  # joint -> rad
    arm_moving: bool = False
    arm_pose: str | None = None  # the named pose the arm is at, or None
    human_present: bool = False
    safety_armed: bool = True
    sensors_ok: dict = field(default_factory=dict)  # sensor id -> bool (False = disabled)
    readings: dict = field(default_factory=dict)  # other sensor id -> value (e.g. a core probe)
    pot_medium: str | None = None  # what the hob reports its pot holds; None = it does not say
    pot_mass_kg: float | None = None


class HeatMode(StrEnum):
    OFF = "off"
    POWER = "power"  # value: W
    SETPOINT = "setpoint"  # value: °C


@dataclass(frozen=True)
class HeatCommand:
    """What the engine asks of the hob: off, a power [W] or a setpoint [°C] (`value`)."""

    mode: HeatMode
    value: float = 0.0

    @classmethod
    def off(cls) -> "HeatCommand":
        return cls(HeatMode.OFF)

    @classmethod
    def power(cls, watts: float) -> "HeatCommand":
        return cls(HeatMode.POWER, float(watts))

    @classmethod
    def setpoint(cls, celsius: float) -> "HeatCommand":
        return cls(HeatMode.SETPOINT, float(celsius))

    @property
    def power_w(self) -> float:
        """The power it asks for [W]; 0 for off, and for a setpoint (the hob chooses that power)."""
        return self.value if self.mode is HeatMode.POWER else 0.0

    def close_to(self, other: "HeatCommand | None", tolerance: float = 1.0) -> bool:
        """The same mode and a value within `tolerance` (no need to send it again at once)."""
        return other is not None and other.mode is self.mode and abs(other.value - self.value) < tolerance


@dataclass
class Commands:
    heater: HeatCommand | None = None  # None: no change
    arm_pose: str | None = None  # named pose to go to
    arm_halt: bool = False

    def is_empty(self) -> bool:
        return self.heater is None and self.arm_pose is None and not self.arm_halt


@dataclass
class RunConfig:
    execution_id: str = "exec-0001"
    recipe_ref: str | None = None  # default: the recipe's id
    recipe_hash: str | None = None  # default: computed from the recipe
    servings: float | None = None  # default: the recipe's yield
    altitude_m: float = 0.0
    poses: tuple = ()  # named poses the arm has
    max_heater_power_w: float = 2000.0
    control_period_s: float = 0.1
    device: dict = field(default_factory=lambda: {"vendor": "cookwala_ros", "model": "simulated kitchen"})
    wall_clock_origin_s: float | None = None  # UTC epoch seconds at start_time_s (None: now_s is epoch time)
    thermal: ThermalParams = field(default_factory=ThermalParams)
    sensor_sources: dict = field(default_factory=lambda: dict(DEFAULT_SENSOR_SOURCES))
    allow_model: bool = True
    limits: Any = None  # SafetyLimits pack or list of packs (merged, stricter wins); None: none checked here
    motion_timeout_s: float = 60.0
    stop_timeout_s: float = 5.0
    sensor_grace_s: float = 2.0  # a sensor silent this long is lost
    trace_period_s: float = 1.0
    trace_max_rows: int = 3600

    def problems(self) -> list[str]:
        out = []
        if not (isinstance(self.max_heater_power_w, (int, float)) and self.max_heater_power_w > 0):
            out.append("max_heater_power_w: must be > 0")
        if not (isinstance(self.control_period_s, (int, float)) and 0 < self.control_period_s <= 1.0):
            out.append("control_period_s: must be in (0, 1]")
        if not (isinstance(self.altitude_m, (int, float)) and math.isfinite(self.altitude_m)):
            out.append("altitude_m: must be a finite number")
        for key in ("motion_timeout_s", "stop_timeout_s", "sensor_grace_s", "trace_period_s"):
            if not getattr(self, key) > 0:
                out.append(f"{key}: must be > 0")
        return out


def finite(value: Any) -> float | None:
    """A finite float, or None (NaN, None, strings and booleans are no reading)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def read_sensor(obs: Observation, sensor_id: str, sources: dict) -> float | None:
    """The current value of a sensor, or None when it is disabled or gives no reading."""
    canonical = vocab.canonical_sensor(sensor_id)
    ok = obs.sensors_ok or {}
    if ok.get(sensor_id) is False or ok.get(canonical) is False:
        return None
    extra = obs.readings or {}
    if sensor_id in extra or canonical in extra:
        return finite(extra.get(sensor_id, extra.get(canonical)))
    source = sources.get(canonical)
    if source == "medium":
        return finite(obs.medium_temp_c)
    if source == "pan":
        return finite(obs.pan_temp_c)
    return None
