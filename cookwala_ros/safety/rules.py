"""Monitor rules for every SafetyLimit kind, as pure functions over plain readings.

Each rule returns Findings: the conditions that hold *now*. The monitor keeps a condition active
while its rule keeps returning it, so a limit that is still exceeded keeps the stop latched.

Project decisions (the standard leaves them open):
- an `appliesTo.ops` limit applies when the current op is one of them *or unknown* (no executor,
  or between steps): the device does not know what is cooking, so the stricter reading wins;
- every stopping action (cut_heat, stop_motion, stop_all) makes the monitor halt both motion and
  heat: a half-stopped kitchen is harder to reason about than a stopped one;
- `unattended` limits (refuse_start before a start) stop a *running* step whose op envelope says
  unattended=false once nobody is present (CORE §6.6; what a presence reading means is
  core.presence: nobody unless person_present is true and fresh).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from cookwala_ros.core.presence import nobody_reason
from cookwala_ros.safety.quantities import to_base

STOPPING_ACTIONS = frozenset({"cut_heat", "stop_motion", "stop_all"})
DEFAULT_STOP_DEADLINE_S = 0.5  # CORE §6.2, also the default stop.local max
SERVE_OPS = frozenset({"cw.op.serve", "cw.op.plate"})


@dataclass(frozen=True)
class Finding:
    """A condition that holds now. `trigger` is stable while it holds (e.g. limit:oil.max_temp)."""

    trigger: str
    action: str  # a LimitAction, or "fault" for a device that misbehaves
    detail: str
    limit_id: str = ""

    @property
    def stops(self) -> bool:
        return self.action in STOPPING_ACTIONS or self.action == "fault"


@dataclass(frozen=True)
class PresenceReading:
    person_present: bool
    reachable_within_s: float
    received_at: float  # steady clock [s]


def applies(limit: dict, medium: str | None = None, op: str | None = None, food_class: str | None = None) -> bool:
    """Whether `limit` covers a reading of `medium` during `op` for `food_class`.

    Unknown op (None) counts as covered; an unknown food class does not (there is nothing to
    compare a min_core_temp with).
    """
    scope = limit.get("appliesTo") or {}
    if scope.get("medium") is not None and scope["medium"] != medium:
        return False
    if scope.get("ops") and op is not None and op not in scope["ops"]:
        return False
    if scope.get("foodClass") is not None and scope["foodClass"] != food_class:
        return False
    return True


def of_kind(limits: Iterable[dict], kind: str) -> list[dict]:
    return [limit for limit in limits if limit.get("kind") == kind]


def _exceeds_max(limit: dict, value: float) -> bool:
    return "max" in limit and value > to_base(limit["max"], limit.get("unit"))


def max_temp_findings(limits: Iterable[dict], temps_c: dict[str, float], op: str | None,
                      heating: bool = True) -> list[Finding]:
    """max_temp limits against the temperatures measured per medium (NaN = no reading).

    A limit whose medium is being heated but has no valid reading is a finding too: the device
    cannot show that it is within the limit (`unverifiable:<id>`).
    """
    out = []
    for limit in of_kind(limits, "max_temp"):
        medium = (limit.get("appliesTo") or {}).get("medium")
        media = [medium] if medium is not None else list(temps_c)
        for name in media:
            if name not in temps_c or not applies(limit, name, op):
                continue
            value = temps_c[name]
            if math.isnan(value):
                if heating:
                        out.append(Finding(f"unverifiable:{limit['id']}", limit["action"],
                                       f"heating with no valid {name} temperature", limit["id"]))
            elif _exceeds_max(limit, value):
                out.append(Finding(f"limit:{limit['id']}", limit["action"],
                                   f"{name} {value:.1f} degC > max {limit['max']} {limit.get('unit', '')}", limit["id"]))
    return out


def pressure_findings(limits: Iterable[dict], pressure_kpa: float | None, op: str | None) -> list[Finding]:
    """pressure limits (gauge kPa); no pressure sensor (None) means nothing to check."""
    if pressure_kpa is None:
        return []
    return [
        Finding(f"limit:{limit['id']}", limit["action"], f"pressure {pressure_kpa:.1f} kPa > max {limit['max']} kPa", limit["id"])
        for limit in of_kind(limits, "pressure")
        if applies(limit, None, op) and _exceeds_max(limit, pressure_kpa)
    ]


def smoke_findings(limits: Iterable[dict], detected: bool, what: str = "smoke or fire") -> list[Finding]:
    if not detected:
        return []
    return [Finding(f"limit:{limit['id']}", limit["action"], f"{what} detected", limit["id"])
            for limit in of_kind(limits, "smoke_or_fire")]


def min_core_temp_findings(limits: Iterable[dict], food_class: str | None, core_temp_c: float | None,
                           op: str | None, finished: bool) -> list[Finding]:
    """min_core_temp limits, checked when food is about to be served (serve/plate op or done)."""
    if food_class is None or core_temp_c is None or not (finished or op in SERVE_OPS):
        return []
    return [
        Finding(f"limit:{limit['id']}", limit["action"],
                f"{food_class} core {core_temp_c:.1f} degC < min {limit['min']} degC", limit["id"])
        for limit in of_kind(limits, "min_core_temp")
        if "min" in limit and applies(limit, None, op, food_class)
        and core_temp_c < to_base(limit["min"], limit.get("unit"))
    ]


def presence_findings(limits: Iterable[dict], op: str | None, unattended: bool | None,
                      presence: PresenceReading | None, now: float, stale_s: float) -> list[Finding]:
    """An op that may not run unattended, with nobody present (core.presence: a fresh reading
    with person_present true, reachable within a minute)."""
    if op is None or unattended is not False:
        return []
    if presence is None:
        why = nobody_reason(None, math.inf, None, stale_s)
    else:
        why = nobody_reason(presence.person_present, presence.reachable_within_s,
                            now - presence.received_at, stale_s)
    if why is None:
        return []
    return [Finding(f"limit:{limit['id']}", "stop_all", f"{op} needs a person: {why}", limit["id"])
            for limit in of_kind(limits, "unattended")]


def stop_deadline_s(limits: Iterable[dict]) -> float:
    """The motion-stop deadline: the strictest `stop` limit max, 0.5 s if the pack has none."""
    values = [to_base(limit["max"], limit.get("unit") or "s") for limit in of_kind(limits, "stop") if "max" in limit]
    return min(values, default=DEFAULT_STOP_DEADLINE_S)
