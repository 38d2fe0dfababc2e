"""When is a step done: evaluating a node's `until` condition while it runs (CORE §3).

An `until` is a boolean tree of sensor and vision checks (`all`, `any`, `not`; comparisons
gte/lte/eq/between, each optionally held for `holdFor`) plus a time window (minTime, maxTime,
nominalTime). Evaluation is three-valued: a check on a sensor that gives no reading, or on a
vision cue, is *unknown*; an optional check that cannot be observed is skipped (true). A step
whose condition stays unknown ends on time (nominalTime, else maxTime, else minTime), which is
the time rung of the ladder. Past maxTime the step has timed out and the node's `onTimeout`
decides (see `timeout_action`). Pure: the caller passes elapsed seconds and readings.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping

_DURATION = re.compile(r"^P(?!$)(?:(\d+)D)?(?:T(?=\d)(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")

PENDING = "pending"  # keep going
MET = "met"  # the observed condition holds (after minTime)
MET_BY_TIME = "met_by_time"  # no observable condition: the time window says done
TIMED_OUT = "timed_out"  # maxTime passed without the condition

FAILURE_ACTIONS = ("retry", "extend", "ask_human", "handoff_human", "skip_optional", "abort_safe")


def parse_duration(text: Any, pointer: str = "duration") -> float:
    """Seconds of an ISO 8601 duration limited to days, hours, minutes, seconds (`PT1H30M`)."""
    match = _DURATION.match(text) if isinstance(text, str) else None
    if not match:
        raise ValueError(f"{pointer}: {text!r} is not an ISO 8601 duration such as PT5M")
    d, h, m, s = match.groups()
    return int(d or 0) * 86400 + int(h or 0) * 3600 + int(m or 0) * 60 + float(s or 0)


def format_duration(seconds: float) -> str:
    """`PT…` text of a non-negative number of seconds (for messages and deviations)."""
    seconds = max(0.0, float(seconds))
    h, rest = divmod(int(round(seconds)), 3600)
    m, s = divmod(rest, 60)
    return "PT" + (f"{h}H" if h else "") + (f"{m}M" if m else "") + (f"{s}S" if s or not (h or m) else "")


def _check_value(check: dict, value: float) -> bool:
    ok = True
    if "gte" in check:
        ok &= value >= check["gte"]
    if "lte" in check:
        ok &= value <= check["lte"]
    if "eq" in check and isinstance(check["eq"], (int, float)) and not isinstance(check["eq"], bool):
        ok &= value == check["eq"]
    if isinstance(check.get("between"), list) and len(check["between"]) == 2:
        lo, hi = check["between"]
        ok &= lo <= value <= hi
    return bool(ok)


def condition_sensors(condition: Any) -> set[str]:
    """Every sensor id a condition tree reads (vision cues excluded)."""
    out: set[str] = set()
    if not isinstance(condition, dict):
        return out
    if isinstance(condition.get("sensor"), str):
        out.add(condition["sensor"])
    for key in ("all", "any"):
        for child in condition.get(key) or []:
            out |= condition_sensors(child)
    if isinstance(condition.get("not"), dict):
        out |= condition_sensors(condition["not"])
    return out


def _has_tree(until: dict) -> bool:
    return any(isinstance(until.get(k), (list, dict)) and until.get(k) for k in ("all", "any", "not"))


@dataclass
class Window:
    """The time window of an `until`, in seconds (None = not given)."""

    min_s: float | None = None
    max_s: float | None = None
    nominal_s: float | None = None

    @property
    def expected_s(self) -> float | None:
        """How long the step should take when nothing is observed: nominal, else min, else max."""
        for value in (self.nominal_s, self.min_s, self.max_s):
            if value is not None:
                return value
        return None

    @property
    def fallback_s(self) -> float:
        """When an unobservable condition is taken as met: nominal, else max, else min, else 0."""
        for value in (self.nominal_s, self.max_s, self.min_s):
            if value is not None:
                return value
        return 0.0


class UntilTracker:
    """Stateful evaluation of one node's `until` (holdFor needs memory across ticks)."""

    def __init__(self, until: Any, pointer: str = "until"):
        if until is not None and not isinstance(until, dict):
            raise ValueError(f"{pointer}: must be an object")
        self.until = until or {}
        self.window = Window(*(
            parse_duration(self.until[key], f"{pointer}/{key}") if key in self.until else None
            for key in ("minTime", "maxTime", "nominalTime")
        ))
        self.tree = self.until if _has_tree(self.until) else None
        self._since: dict[str, float] = {}  # check path -> elapsed when it became true
        self._hold: dict[str, float] = {}  # check path -> holdFor seconds
        self.extended_s = 0.0
        self.last_value: bool | None = None

    @property
    def max_s(self) -> float | None:
        return None if self.window.max_s is None else self.window.max_s + self.extended_s

    def extend(self, seconds: float) -> None:
        """Push maxTime (and the time fallback) out by `seconds` (onTimeout: extend / retry)."""
        self.extended_s += seconds

    def restart(self) -> None:
        self._since.clear()

    # -------------------------------------------------------------- three-valued tree

    def _leaf(self, check: dict, path: str, elapsed: float, readings: Mapping[str, float | None]) -> bool | None:
        if "vision" in check and "sensor" not in check:
            value = None
        else:
            value = readings.get(check.get("sensor"))
            if value is not None and (not isinstance(value, (int, float)) or not math.isfinite(value)):
                value = None
        if value is None:
            self._since.pop(path, None)
            return True if check.get("optional") else None
        if not _check_value(check, float(value)):
            self._since.pop(path, None)
            return False
        since = self._since.setdefault(path, elapsed)
        hold = self._hold.get(path)
        if hold is None:
            hold = self._hold[path] = parse_duration(check["holdFor"], f"{path}/holdFor") if "holdFor" in check else 0.0
        return elapsed - since >= hold

    def _node(self, node: Any, path: str, elapsed: float, readings: Mapping[str, float | None]) -> bool | None:
        if not isinstance(node, dict):
            return None
        if "sensor" in node or "vision" in node:
            return self._leaf(node, path, elapsed, readings)
        results: list[bool | None] = []
        if isinstance(node.get("all"), list):
            parts = [self._node(c, f"{path}/all/{i}", elapsed, readings) for i, c in enumerate(node["all"])]
            results.append(False if False in parts else (None if None in parts else True))
        if isinstance(node.get("any"), list):
            parts = [self._node(c, f"{path}/any/{i}", elapsed, readings) for i, c in enumerate(node["any"])]
            results.append(True if True in parts else (None if None in parts else False))
        if isinstance(node.get("not"), dict):
            inner = self._node(node["not"], f"{path}/not", elapsed, readings)
            results.append(None if inner is None else not inner)
        if not results:
            return True
        return False if False in results else (None if None in results else True)

    # -------------------------------------------------------------- verdict

    def evaluate(self, elapsed_s: float, readings: Mapping[str, float | None]) -> str:
        """PENDING, MET, MET_BY_TIME or TIMED_OUT at `elapsed_s` seconds into the step."""
        value = self._node(self.tree, "until", elapsed_s, readings) if self.tree is not None else None
        self.last_value = value
        window = self.window
        if window.min_s is not None and elapsed_s < window.min_s:
            return PENDING
        if self.tree is None:
            return MET_BY_TIME if elapsed_s >= (window.expected_s or 0.0) + self.extended_s else PENDING
        if value is True:
            return MET
        if value is None and elapsed_s >= window.fallback_s + self.extended_s:
            return MET_BY_TIME
        if self.max_s is not None and elapsed_s >= self.max_s:
            return TIMED_OUT
        return PENDING

    def expected_s(self) -> float | None:
        base = self.window.expected_s
        return None if base is None else base + self.extended_s


def timeout_action(node: dict) -> str:
    """The node's onTimeout action; without one a step asks a person (never silently goes on)."""
    action = node.get("onTimeout")
    return action if action in FAILURE_ACTIONS else "ask_human"


def extension_s(window: Window) -> float:
    """How long `extend` adds: a quarter of maxTime, at least one minute."""
    return max(60.0, 0.25 * (window.max_s or window.expected_s or 0.0))
