"""Sensor ladders: how a step is verified (CORE §3).

Each envelope lists ways to verify a step, best first: sensors, then `model` (a logged
estimate), `time`, `human`. The executor takes the first rung it can satisfy; none means the
step is refused (`missing_sensor_no_fallback`). Operations that may not run unattended never fall
back to time alone, deep frying has no fallback at all, and a step's `until.onSensorMissing` can
only narrow which fallback is allowed once every sensor rung has failed.
"""

from __future__ import annotations

from typing import Any, Iterable

from cookwala_ros.core import vocab

FALLBACK_FOR_POLICY = {"estimate": "model", "time": "time", "human": "human", "refuse": None}
DEFAULT_LADDER = ("time",)


def is_sensor_rung(rung: str) -> bool:
    return rung not in vocab.NON_SENSOR_RUNGS


def ladder_for(op_id: str) -> tuple[str, ...]:
    """The op's ladder; operations without an envelope are verified by time."""
    env = vocab.envelope(op_id)
    return tuple(env["ladder"]) if env else DEFAULT_LADDER


def sensor_policy(node: dict | None) -> str | None:
    """The step's onSensorMissing policy: explicit on `until`, else `refuse` for a step guarding a
    critical control point (`ccp`), else None (the ladder decides)."""
    if not isinstance(node, dict):
        return None
    until = node.get("until")
    if isinstance(until, dict) and until.get("onSensorMissing") in FALLBACK_FOR_POLICY:
        return until["onSensorMissing"]
    if node.get("ccp"):
        return "refuse"
    return None


def choose_rung(op_id: str, sensors: Iterable[str], allow_model: bool = True,
                human_present: bool = False, policy: str | None = None) -> str | None:
    """First ladder rung this executor can satisfy, or None (refuse the step).

    `sensors` are the trusted sensor ids (aliases are equal: oven_temp == oven_air_temp). The
    returned rung is the ladder's own id. With a `policy`, the only fallback allowed after the
    sensor rungs is the one it names (estimate -> model, time, human; refuse -> none).
    """
    available = {vocab.canonical_sensor(s) for s in sensors if isinstance(s, str)}
    env = vocab.envelope(op_id) or {}
    unattended = env.get("unattended", True)
    allowed_fallbacks = {"model", "time", "human"}
    if policy is not None:
        fallback = FALLBACK_FOR_POLICY[policy]
        allowed_fallbacks = {fallback} if fallback else set()
    for rung in ladder_for(op_id):
        if is_sensor_rung(rung):
            if vocab.canonical_sensor(rung) in available:
                return rung
            continue
        if rung not in allowed_fallbacks:
            continue
        if rung == "model" and allow_model:
            return rung
        if rung == "time" and unattended:
            return rung
        if rung == "human" and human_present:
            return rung
    return None


def device_sensor_for(rung: str, sensors: Iterable[str]) -> str | None:
    """The device's own id for a sensor rung (it may use the alias)."""
    want = vocab.canonical_sensor(rung)
    return next((s for s in sensors if vocab.canonical_sensor(s) == want), None)


def describe_refusal(op_id: str, policy: str | None = None) -> str:
    rungs = ", ".join(ladder_for(op_id))
    narrowed = f" (onSensorMissing: {policy})" if policy else ""
    return f"no rung of the {op_id} ladder [{rungs}] can be satisfied on this device{narrowed}"


def vector_ladder(data: dict) -> dict[str, Any]:
    return {"choice": choose_rung(data["op"], data.get("sensors", []), data.get("allowModel", True),
                                  data.get("humanPresent", False), data.get("onSensorMissing"))}
