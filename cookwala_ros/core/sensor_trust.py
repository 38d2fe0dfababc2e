"""Sensor trust: health, calibration and plausibility (RFC-0011 sensor-trust profile).

Only a healthy, calibrated sensor may satisfy a sensor-ladder rung. A sensor record without a
state or calibration is trusted as declared (0.2 behaviour); a calibration date nobody can read
is no calibration (fail closed). Two sensors on one medium that disagree by more than their
stated accuracies allow are both demoted for the step.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from cookwala_ros.core import vocab

DEFAULT_ACCURACY_C = 2.0
DEFAULT_SLACK_C = 1.0
HEALTHY_STATES = frozenset({"ok"})


_RFC3339 = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$")


def parse_time(value: Any) -> dt.datetime | None:
    """RFC 3339 date-time (with a zone) -> aware datetime, or None when it cannot be read.

    Parsed by hand so every Python version reads the same strings (any number of fraction
    digits, `Z` or an offset); a time without a zone is not a time anyone can compare.
    """
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    if not isinstance(value, str):
        return None
    match = _RFC3339.match(value)
    if not match:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    if zone in ("Z", "z"):
        tz = dt.timezone.utc
    else:
        sign = 1 if zone[0] == "+" else -1
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if hours > 23 or minutes > 59:
            return None
        tz = dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes))
    micro = int((fraction or "0")[:6].ljust(6, "0"))
    try:
        return dt.datetime(int(year), int(month), int(day), int(hour), int(minute), min(int(second), 59), micro, tz)
    except ValueError:
        return None


def _now(now: Any) -> dt.datetime:
    if now is None:
        return dt.datetime.now(dt.timezone.utc)
    parsed = parse_time(now)
    if parsed is None:
        raise ValueError(f"now must be an RFC 3339 date-time, got {now!r}")
    return parsed


def distrust_reason(record: dict, now: Any = None) -> str | None:
    """Why a capabilities sensor record may not satisfy a rung, or None when it may."""
    state = record.get("state", "ok")
    if state not in HEALTHY_STATES:
        return f"state {state}"
    calibration = record.get("calibration")
    if calibration:
        valid_until = calibration.get("validUntil")
        if valid_until is not None:
            until = parse_time(valid_until)
            if until is None:
                return f"calibration validUntil {valid_until!r} is not a date-time"
            if _now(now) > until:
                return f"calibration expired at {valid_until}"
    return None


def trusted_sensors(capabilities: dict, now: Any = None, demoted: Iterable[str] = ()) -> frozenset[str]:
    """Canonical ids of the sensors (and vision cues of trusted cameras) that may satisfy a rung.

    `capabilities` is a capability document ({'capabilities': {'sensors': [...]}}) or its inner
    'capabilities' object; `demoted` names sensors that failed a plausibility check.
    """
    inner = capabilities.get("capabilities", capabilities) if isinstance(capabilities, dict) else {}
    out: set[str] = set()
    demoted_ids = {vocab.canonical_sensor(s) for s in demoted}
    for record in inner.get("sensors") or []:
        sid = record.get("sensor") if isinstance(record, dict) else None
        if not isinstance(sid, str):
            continue
        canonical = vocab.canonical_sensor(sid)
        if canonical in demoted_ids or distrust_reason(record, now) is not None:
            continue
        out.add(canonical)
        out.update(vocab.canonical_sensor(c) for c in record.get("visionCues") or [] if isinstance(c, str))
    return frozenset(out)


@dataclass(frozen=True)
class Plausibility:
    ok: bool
    reason: str  # ok | implausible | non_numeric_reading
    detail: str = ""
    demoted: frozenset[str] = field(default_factory=frozenset)


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def check_plausibility(readings: list[dict], sensors: list[dict],
                       slack_c: float = DEFAULT_SLACK_C) -> Plausibility:
    """Cross-check simultaneous readings of one medium from several sensors.

    Two readings disagree when they differ by more than the sum of the two sensors' stated
    accuracies (default ±2 °C each) plus `slack_c`; every sensor in a disagreeing pair is
    demoted (and the caller logs cw.incident.sensor_implausible). A reading that is not a finite
    number is never plausible.
    """
    accuracy = {}
    for record in sensors:
        acc = record.get("accuracy", DEFAULT_ACCURACY_C)
        accuracy[record.get("sensor")] = float(acc) if _finite(acc) else DEFAULT_ACCURACY_C
    bad = [r.get("sensor") for r in readings if not _finite(r.get("tempC"))]
    if bad:
        return Plausibility(False, "non_numeric_reading", f"reading of {bad[0]} is not a finite number",
                            frozenset(s for s in bad if isinstance(s, str)))
    demoted: set[str] = set()
    details = []
    for i, a in enumerate(readings):
        for b in readings[i + 1:]:
            allowed = accuracy.get(a["sensor"], DEFAULT_ACCURACY_C) + accuracy.get(b["sensor"], DEFAULT_ACCURACY_C) + slack_c
            if abs(a["tempC"] - b["tempC"]) > allowed:
                demoted.update((a["sensor"], b["sensor"]))
                details.append(f"{a['sensor']} {a['tempC']:g} °C and {b['sensor']} {b['tempC']:g} °C "
                               f"differ by more than {allowed:g} °C")
    if demoted:
        return Plausibility(False, "implausible", "; ".join(details), frozenset(demoted))
    return Plausibility(True, "ok")


# ------------------------------------------------------------------ conformance handlers

def vector_sensor_trust(data: dict) -> dict:
    from cookwala_ros.core import ladder

    sensors = trusted_sensors(data["capabilities"], data.get("now"))
    return {"choice": ladder.choose_rung(data["op"], sensors, allow_model=data.get("allowModel", True),
                                         human_present=data.get("humanPresent", False))}


def vector_plausibility(data: dict) -> dict:
    result = check_plausibility(data["readings"], data.get("sensors", []))
    return {"ok": result.ok, "reason": result.reason}
