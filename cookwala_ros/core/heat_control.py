"""Closed-loop control of the medium temperature of a heat step.

What to aim at (`HeatGoal`): the op envelope's band, shifted for altitude, and inside it the
recipe's narrower target (`params.target` or `params.tempC`); without one, the middle of the
band, narrowed to the hob heat level's band for pan-surface steps. The envelope is held from the
moment the medium first enters it; the target from the moment it is first reached.

How (`PIController`): a PI controller on electrical power with conditional-integration
anti-windup (the integral only moves while the output is not saturated, so a long warm-up at
full power does not overshoot) and a hard guard that cuts power near the top of the band.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cookwala_ros.core import envelope, vocab

GUARD_MARGIN_C = 1.0  # power off this close to the top of the band


@dataclass(frozen=True)
class HeatGoal:
    lo: float
    hi: float
    target: float | None = None
    tolerance: float | None = None  # absolute °C around target
    target_sensor: str | None = None

    @property
    def setpoint(self) -> float:
        if self.target is not None and self.lo <= self.target <= self.hi:
            return self.target
        return (self.lo + self.hi) / 2.0

    def in_band(self, t: float) -> bool:
        return self.lo <= t <= self.hi

    def on_target(self, t: float) -> bool:
        if self.target is None:
            return self.in_band(t)
        return abs(t - self.target) <= (self.tolerance if self.tolerance is not None else 2.0)


def goal_for(node: dict, altitude_m: Any = 0) -> HeatGoal | None:
    """The HeatGoal of a node whose op has a temperature envelope, else None."""
    op_id = node.get("op")
    b = envelope.band(op_id, altitude_m) if vocab.is_known_op(op_id) else None
    if b is None:
        return None
    lo, hi = float(b.lo), float(b.hi)
    params = node.get("params") or {}
    target = params.get("target", node.get("target"))
    env = vocab.envelope(op_id) or {}
    if isinstance(target, dict) and envelope.is_number(target.get("value")) and target.get("unit", "degC") == "degC":
        tol = target.get("tolerance")
        return HeatGoal(lo, hi, float(target["value"]), float(tol) if envelope.is_number(tol) else None,
                        target.get("sensor"))
    for key in envelope.TEMPERATURE_PARAMS:
        if envelope.is_number(params.get(key)):
            return HeatGoal(lo, hi, float(params[key]), 2.0)
    heat = params.get("heat")
    if env.get("medium") == "pan_surface" and isinstance(heat, str):
        try:
            hlo, hhi = vocab.heat_level(heat)
        except vocab.UnknownVocabularyId:
            return HeatGoal(lo, hi)
        nlo, nhi = max(lo, hlo), min(hi, hhi)
        if nlo <= nhi:
            return HeatGoal(lo, hi, (nlo + nhi) / 2.0, (nhi - nlo) / 2.0)
    return HeatGoal(lo, hi)


class PIController:
    """Power [W] from a temperature error, with anti-windup and a top-of-band guard."""

    def __init__(self, max_power_w: float, kp_w_per_k: float | None = None, ti_s: float = 60.0):
        if not max_power_w > 0:
            raise ValueError("max_power_w: must be > 0")
        self.max_power_w = float(max_power_w)
        self.kp = float(kp_w_per_k) if kp_w_per_k is not None else self.max_power_w / 4.0
        self.ti_s = float(ti_s)
        self.integral_w = 0.0

    def reset(self, integral_w: float = 0.0) -> None:
        self.integral_w = min(max(integral_w, 0.0), self.max_power_w)

    def update(self, setpoint_c: float, measured_c: float, dt: float, ceiling_c: float | None = None) -> float:
        """Power to apply for the next `dt` seconds."""
        if ceiling_c is not None and measured_c >= ceiling_c - GUARD_MARGIN_C:
            self.integral_w = min(self.integral_w, self.kp * max(setpoint_c - measured_c, 0.0))
            return 0.0
        error = setpoint_c - measured_c
        raw = self.kp * error + self.integral_w
        out = min(max(raw, 0.0), self.max_power_w)
        saturated_high = raw >= self.max_power_w and error > 0
        saturated_low = raw <= 0.0 and error < 0
        if not (saturated_high or saturated_low) and dt > 0:
            self.integral_w += self.kp * error * dt / self.ti_s
            self.integral_w = min(max(self.integral_w, 0.0), self.max_power_w)
        return out
