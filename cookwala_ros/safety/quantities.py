"""Quantities that SafetyLimits compare: bounds in their unit and ISO 8601 `holdFor` durations.

Limits are compared in a base unit per dimension (degC, kPa, seconds) so that a pack written in
minutes can tighten one written in hours.
"""

from __future__ import annotations

import re

# unit -> (dimension, factor to the dimension's base unit)
_UNITS = {
    "degC": ("temperature", 1.0),
    "kPa": ("pressure", 1.0),
    "s": ("time", 1.0),
    "min": ("time", 60.0),
    "h": ("time", 3600.0),
}

_DURATION = re.compile(
    r"^P(?!$)(?:(?P<d>\d+(?:\.\d+)?)D)?"
    r"(?:T(?=\d)(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?$"
)


class QuantityError(ValueError):
    """A unit or duration a SafetyLimit cannot use."""


def dimension(unit: str | None) -> str | None:
    """The dimension of a SafetyLimit unit, None when the limit has no unit."""
    if not unit:
        return None
    try:
        return _UNITS[unit][0]
    except KeyError:
        raise QuantityError(f"unknown SafetyLimit unit {unit!r} (expected one of {', '.join(_UNITS)})") from None


def to_base(value: float, unit: str | None) -> float:
    """`value` expressed in the base unit of its dimension (degC, kPa or s)."""
    if not unit:
        return float(value)
    dimension(unit)
    return float(value) * _UNITS[unit][1]


def duration_s(text: str) -> float:
    """Seconds of an ISO 8601 duration such as PT2H, PT90S or P1DT30M (no years or months)."""
    match = _DURATION.match(text) if isinstance(text, str) else None
    if not match:
        raise QuantityError(f"not an ISO 8601 duration (days to seconds): {text!r}")
    parts = {k: float(v) if v else 0.0 for k, v in match.groupdict().items()}
    return parts["d"] * 86400 + parts["h"] * 3600 + parts["m"] * 60 + parts["s"]
