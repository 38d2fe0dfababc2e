"""Operation envelopes: targets inside bands, altitude, heat levels and trace checks (CORE §3).

Bands are inclusive [min, max] in °C. Water and steam bands move down 1 °C per 300 m of
kitchen altitude, linearly (2400 m -> −8 °C, 299 m -> −299/300 °C); the arithmetic is exact
(fractions), so a reading exactly on a shifted boundary is inside.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable

from cookwala_ros.core import vocab

METRES_PER_DEGREE = 300

# Which sensors measure which envelope medium: a recipe target on one of these is a target for
# the medium itself and must lie inside the band (CORE §3 "a target on the medium's sensor").
MEDIUM_SENSORS = {
    "water": {"cw.sense.liquid_temp"},
    "oil": {"cw.sense.oil_temp"},
    "pan_surface": {"cw.sense.pan_surface_temp"},
    "air": {"cw.sense.oven_air_temp", "cw.sense.chamber_temp"},
    "steam": {"cw.sense.chamber_temp"},
    "product": {"cw.sense.core_temp", "cw.sense.product_temp"},
    "ambient": {"cw.sense.ambient_temp", "cw.sense.fridge_temp", "cw.sense.freezer_temp"},
    "radiant": {"cw.sense.grill_temp"},
    "pressure": {"cw.sense.liquid_temp"},
}
# Temperature parameters that always name the medium temperature.
TEMPERATURE_PARAMS = ("tempC", "oilTempC")


def is_number(x: Any) -> bool:
    """A finite JSON number (booleans and numeric strings are not numbers)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _exact(x: Any) -> Fraction:
    return Fraction(str(x)) if isinstance(x, float) else Fraction(x)


def altitude_shift(medium: str, altitude_m: Any) -> Fraction:
    """Degrees to subtract from a band at this altitude (0 for media other than water/steam)."""
    if altitude_m is None:
        return Fraction(0)
    if not is_number(altitude_m):
        raise ValueError(f"altitudeM must be a finite number of metres, got {altitude_m!r}")
    if medium not in vocab.ALTITUDE_MEDIA:
        return Fraction(0)
    return _exact(altitude_m) / METRES_PER_DEGREE


@dataclass(frozen=True)
class Band:
    """An inclusive temperature band in °C (exact bounds)."""

    lo: Fraction
    hi: Fraction

    def __contains__(self, t: Any) -> bool:
        return is_number(t) and self.lo <= t <= self.hi

    def overlaps(self, lo: Any, hi: Any) -> bool:
        return not (hi < self.lo or lo > self.hi)

    def text(self) -> str:
        return f"{_fmt(self.lo)}–{_fmt(self.hi)} °C"


def _fmt(x: Any) -> str:
    value = float(x)
    return f"{value:g}" if value == round(value, 2) else f"{value:.2f}"


def band(op_id: str, altitude_m: Any = 0) -> Band | None:
    """The op's medium-temperature band at this altitude, or None without a thermal envelope."""
    env = vocab.envelope(op_id)
    if not env or "tempBandC" not in env:
        return None
    lo, hi = env["tempBandC"]
    shift = altitude_shift(env["medium"], altitude_m)
    return Band(_exact(lo) - shift, _exact(hi) - shift)


def pressure_band(op_id: str) -> tuple[float, float] | None:
    env = vocab.envelope(op_id) or {}
    return tuple(env["pressureBandKPa"]) if "pressureBandKPa" in env else None


def heat_level_can_hold(op_id: str, level: str) -> bool:
    """A hob level can hold a pan-surface envelope when its band overlaps the envelope band."""
    b = band(op_id)
    lo, hi = vocab.heat_level(level)
    return b is None or b.overlaps(lo, hi)


def target_is_for_medium(op_id: str, sensor_id: Any) -> bool:
    """Whether a target on `sensor_id` is a target for the op's medium (no sensor = yes).

    Sensors outside the vocabulary (vendor ids) are treated as measuring the medium, so their
    targets are checked rather than ignored.
    """
    if sensor_id is None:
        return True
    env = vocab.envelope(op_id) or {}
    canonical = vocab.canonical_sensor(sensor_id) if isinstance(sensor_id, str) else sensor_id
    if canonical not in vocab.sensor_ids():
        return True
    return canonical in MEDIUM_SENSORS.get(env.get("medium"), set())


def node_temperatures(op_id: str, node: dict) -> list[tuple[str, Any]]:
    """(name, value) of every medium temperature a node asks for: tempC, oilTempC, a °C target
    on the medium's sensor. Values are returned as given; callers check they are numbers."""
    params = node.get("params") or {}
    out = [(key, params[key]) for key in TEMPERATURE_PARAMS if key in params]
    target = params.get("target", node.get("target"))
    if isinstance(target, dict) and "value" in target and target.get("unit", "degC") == "degC":
        if target_is_for_medium(op_id, target.get("sensor")):
            out.append(("target", target["value"]))
    return out


def node_problem(op_id: str, node: dict, altitude_m: Any = 0) -> str | None:
    """Why a node's numbers break the op envelope (detail text), or None when they fit.

    Every medium temperature must be a finite number inside the (altitude-shifted) band; a
    hob heat level must be known and, on a pan-surface envelope, overlap the band; a pressure
    must be a number inside the pressure band.
    """
    params = node.get("params") or {}
    temps = node_temperatures(op_id, node)
    for key, value in temps:
        if not is_number(value):
            return f"{key} {value!r} is not a finite number"
    b = band(op_id, altitude_m)
    if b is not None:
        for key, value in temps:
            if value not in b:
                return f"{key} {value:g} °C is outside the {op_id} envelope {b.text()}"
    heat = params.get("heat")
    if heat is not None and vocab.envelope(op_id):
        try:
            lo, hi = vocab.heat_level(heat)
        except vocab.UnknownVocabularyId:
            return f"heat level {heat!r} is not a known hob level"
        env = vocab.envelope(op_id)
        if env.get("medium") == "pan_surface" and b is not None and not b.overlaps(lo, hi):
            return f"heat level {heat} (pan {lo}–{hi} °C) cannot hold the {op_id} envelope {b.text()}"
    if "pressureKPa" in params:
        pk = params["pressureKPa"]
        if not is_number(pk):
            return f"pressureKPa {pk!r} is not a finite number"
        pb = pressure_band(op_id)
        if pb and not pb[0] <= pk <= pb[1]:
            return f"pressure {pk:g} kPa is outside the {op_id} envelope {pb[0]}–{pb[1]} kPa"
    return None


# ------------------------------------------------------------------ trace checks

def check_trace(op_id: str, readings: Iterable[dict], target: dict | None = None,
                altitude_m: Any = 0, strict: bool = False) -> dict:
    """Check a medium-temperature trace against an op envelope and an optional target.

    Reference semantics (project decision 8): readings before the medium first enters the band
    are warm-up and ignored; after that every reading must stay inside. A target (absolute
    `tolerance` in °C) must lie inside the band; once first reached it must hold to the end.
    With `strict=True` (the running executor) a warm-up reading above the band also counts as
    leaving the envelope. Returns {'envelopeOk', 'targetOk', 'reason'}.
    """
    b = band(op_id, altitude_m)
    if b is None:
        return {"envelopeOk": True, "targetOk": None, "reason": "no_thermal_envelope"}
    if target is not None:
        tv = target.get("value")
        if not is_number(tv) or tv not in b:
            return {"envelopeOk": False, "targetOk": False, "reason": "target_outside_envelope"}
    temps = [r.get("tempC") if isinstance(r, dict) else None for r in readings]
    if not all(is_number(t) for t in temps):
        return {"envelopeOk": False, "targetOk": False if target is not None else None,
                "reason": "non_numeric_reading"}
    first_in = next((i for i, t in enumerate(temps) if t in b), None)
    if first_in is None:
        return {"envelopeOk": False, "targetOk": False if target is not None else None,
                "reason": "never_reached_envelope"}
    steady = temps[first_in:]
    env_ok = all(t in b for t in steady)
    if strict and any(t > b.hi for t in temps[:first_in]):
        env_ok = False
    target_ok = None
    if target is not None:
        tol = target.get("tolerance", 0)
        hit = next((i for i, t in enumerate(steady) if abs(t - target["value"]) <= tol), None)
        target_ok = hit is not None and all(abs(t - target["value"]) <= tol for t in steady[hit:])
    if not env_ok:
        reason = "left_envelope"
    elif target_ok is False:
        reason = "missed_target"
    else:
        reason = "ok"
    return {"envelopeOk": env_ok, "targetOk": target_ok, "reason": reason}


def vector_envelope(data: dict) -> dict:
    """Conformance handler for `envelope` vectors: a trace check, or a sensor-ladder choice."""
    if "sensors" in data:
        from cookwala_ros.core import ladder

        return ladder.vector_ladder(data)
    return check_trace(data["op"], data.get("readings", []), data.get("target"), data.get("altitudeM", 0))
