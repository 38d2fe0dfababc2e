"""A simulated hob: command modes, power relay, over-temperature cut-out and the thermal model.

What a heater controller does with a HeaterCommand (modes mirror cookwala_msgs/HeaterCommand):
OFF cuts power at once; POWER delivers the commanded power (clipped to the hob's maximum);
SETPOINT runs the hob's own proportional controller on its medium sensor, and cuts power when
that sensor gives no reading. The hob's own protection cuts power when the pan passes
`overtemp_cutoff_c` and stays off until commanded OFF and cooled below the cut-out.

Dead-man (`cut_for_silence`, called by the node when no fresh command came in time): the hob
goes to OFF by itself and says so in `fault_detail` until the next command; it is not a fault of
the hob (fault stays NONE), the controller upstream went quiet.

Faults: a welded relay keeps delivering the last non-zero power whatever is commanded (the one
thing software cannot stop; the state reports it as soon as it is observable, i.e. when
commanded off); sensor faults come from the thermal model. Pure Python.
"""

from __future__ import annotations

import dataclasses
import enum
import math

from cookwala_ros.sim.thermal_model import SensorFault, ThermalModel


class HeaterMode(enum.IntEnum):  # = cookwala_msgs/HeaterCommand MODE_*
    OFF = 0
    POWER = 1
    SETPOINT = 2


class HeaterFault(enum.IntEnum):  # = cookwala_msgs/HeaterState FAULT_*
    NONE = 0
    RELAY_WELDED = 1
    SENSOR_DISCONNECTED = 2
    OVERTEMP = 3


@dataclasses.dataclass(frozen=True)
class HeaterSnapshot:
    """Everything cookwala_msgs/HeaterState reports, at model time `time`."""

    time: float
    on: bool
    power_w: float
    commanded_mode: HeaterMode
    medium: str
    medium_mass_kg: float
    medium_temp_c: float
    pan_surface_temp_c: float
    medium_sensor_ok: bool
    pan_sensor_ok: bool
    fault: HeaterFault
    fault_detail: str


class SimHeater:
    def __init__(
        self,
        thermal: ThermalModel,
        max_power_w: float = 2000.0,
        overtemp_cutoff_c: float = 300.0,
        setpoint_band_c: float = 5.0,
    ):
        if not (math.isfinite(max_power_w) and max_power_w > 0):
            raise ValueError("max_power_w: must be > 0")
        if overtemp_cutoff_c < 0 or not math.isfinite(overtemp_cutoff_c):
            raise ValueError("overtemp_cutoff_c: must be >= 0 (0 disables the cut-out)")
        if not setpoint_band_c > 0:
            raise ValueError("setpoint_band_c: must be > 0")
        self.thermal = thermal
        self.max_power_w = float(max_power_w)
        self.overtemp_cutoff_c = float(overtemp_cutoff_c)
        self.setpoint_band_c = float(setpoint_band_c)
        self.mode = HeaterMode.OFF
        self.power_command_w = 0.0
        self.setpoint_c = 0.0
        self.relay_welded = False
        self._last_nonzero_w = 0.0
        self._overtemp_tripped = False
        self.dead_man_detail = ""  # why the dead-man cut the hob; empty after any command
        self._refresh()

    # ------------------------------------------------------------------ inputs

    def command(self, mode: int, power_w: float = 0.0, setpoint_c: float = 0.0) -> None:
        """Apply a HeaterCommand now (takes effect before the next step)."""
        try:
            mode = HeaterMode(mode)
        except ValueError:
            raise ValueError(f"mode: {mode} is not a HeaterCommand MODE_*") from None
        if mode is HeaterMode.POWER and not (math.isfinite(power_w) and power_w >= 0):
            raise ValueError(f"power_w: must be finite and >= 0, got {power_w}")
        if mode is HeaterMode.SETPOINT and not math.isfinite(setpoint_c):
            raise ValueError(f"setpoint_c: must be finite, got {setpoint_c}")
        self.mode = mode
        self.dead_man_detail = ""
        self.power_command_w = float(power_w) if mode is HeaterMode.POWER else 0.0
        self.setpoint_c = float(setpoint_c) if mode is HeaterMode.SETPOINT else 0.0
        if mode is HeaterMode.OFF and self.thermal.pan_c < self.overtemp_cutoff_c:
            self._overtemp_tripped = False
        self._refresh()

    def cut_for_silence(self, detail: str) -> bool:
        """The dead-man: commanded OFF for want of fresh commands. True if it turned anything off."""
        if self.mode is HeaterMode.OFF:
            return False
        self.command(HeaterMode.OFF)
        self.dead_man_detail = detail
        return True

    def set_relay_welded(self, welded: bool) -> None:
        self.relay_welded = bool(welded)
        self._refresh()

    def set_sensor_fault(self, sensor: str, fault: SensorFault) -> None:
        self.thermal.set_sensor_fault(sensor, fault)
        self._refresh()

    def set_contents(self, medium: str, medium_mass_kg: float, lid: bool) -> None:
        """Put other contents in the pan (see ThermalModel.refilled); the command in force stays."""
        self.thermal = self.thermal.refilled(medium, medium_mass_kg, lid)
        self._refresh()

    # ------------------------------------------------------------------ control

    def _wanted_power(self) -> float:
        if self._overtemp_tripped or self.mode is HeaterMode.OFF:
            return 0.0
        if self.mode is HeaterMode.POWER:
            return min(self.power_command_w, self.max_power_w)
        reading = self.thermal.readings().medium_temp_c
        if not math.isfinite(reading):
            return 0.0  # no sensor, no closed loop: fail safe
        share = (self.setpoint_c - reading) / self.setpoint_band_c
        return self.max_power_w * min(max(share, 0.0), 1.0)

    def _refresh(self) -> None:
        if self.overtemp_cutoff_c > 0 and self.thermal.pan_c >= self.overtemp_cutoff_c:
            self._overtemp_tripped = True
        power = self._wanted_power()
        if power > 0:
            self._last_nonzero_w = power
        elif self.relay_welded:
            power = self._last_nonzero_w
        self.thermal.set_power(power)

    def step(self, dt: float) -> None:
        """Advance dt seconds; the controller re-evaluates every thermal substep."""
        if dt < 0 or not math.isfinite(dt):
            raise ValueError(f"dt must be finite and >= 0, got {dt}")
        h = self.thermal.config.max_substep_s
        remaining = dt
        while remaining > 1e-12:
            part = min(h, remaining)
            self.thermal.step(part)
            self._refresh()
            remaining -= part

    # ------------------------------------------------------------------ outputs

    @property
    def power_w(self) -> float:
        return self.thermal.power_w

    @property
    def time(self) -> float:
        return self.thermal.time

    def snapshot(self) -> HeaterSnapshot:
        r = self.thermal.readings()
        faults: list[tuple[HeaterFault, str]] = []
        if self.relay_welded and self.power_w > 0 and self._wanted_power() == 0:
            faults.append((HeaterFault.RELAY_WELDED, f"commanded off but delivering {self.power_w:.0f} W"))
        if self._overtemp_tripped:
            faults.append((HeaterFault.OVERTEMP, f"pan passed the {self.overtemp_cutoff_c:.0f} degC cut-out"))
        for name, ok in (("medium", r.medium_ok), ("pan", r.pan_ok)):
            if not ok:
                faults.append((HeaterFault.SENSOR_DISCONNECTED, f"{name} sensor disconnected"))
        return HeaterSnapshot(
            time=self.time,
            on=self.power_w > 0,
            power_w=self.power_w,
            commanded_mode=self.mode,
            medium=self.thermal.config.medium,
            medium_mass_kg=self.thermal.medium_mass_kg,
            medium_temp_c=r.medium_temp_c,
            pan_surface_temp_c=r.pan_temp_c,
            medium_sensor_ok=r.medium_ok,
            pan_sensor_ok=r.pan_ok,
            fault=faults[0][0] if faults else HeaterFault.NONE,
            fault_detail="; ".join([detail for _, detail in faults] + ([self.dead_man_detail] if self.dead_man_detail else [])),
        )
