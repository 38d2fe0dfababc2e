"""SafetyLimits packs: merging (stricter wins) and which limits apply to a step (CORE §6.1).

A device may hold several packs (the maker's, a site's, local law). They are merged so that
for the same kind and the same `appliesTo` the stricter number survives: the lowest `max` and
the highest `min`. Limits with different scopes are all kept; every applicable limit is checked,
so the stricter one wins there too. Nothing here can loosen a limit.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any, Iterable

from cookwala_ros import CORE_VERSION
from cookwala_ros.core import vocab

# Strongest first: when two merged limits name different actions, the stronger one is kept.
ACTION_STRENGTH = ("stop_all", "stop_motion", "cut_heat", "refuse_start", "ask_human", "alert")


def default_pack() -> dict:
    """The standard's draft default pack (our own copy of its ids and numbers)."""
    return copy.deepcopy(vocab.load("safety_defaults.json"))


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def check_pack(pack: Any, name: str = "pack") -> list[dict]:
    """The pack's limits list; raises ValueError naming the bad field."""
    if not isinstance(pack, dict):
        raise ValueError(f"{name}: a SafetyLimits pack must be an object")
    limits = pack.get("limits")
    if not isinstance(limits, list):
        raise ValueError(f"{name}/limits: must be an array of limits")
    for i, limit in enumerate(limits):
        where = f"{name}/limits/{i}"
        if not isinstance(limit, dict) or not isinstance(limit.get("kind"), str):
            raise ValueError(f"{where}/kind: every limit needs a kind")
        for key in ("min", "max"):
            if key in limit and not _number(limit[key]):
                raise ValueError(f"{where}/{key}: must be a finite number, got {limit[key]!r}")
        applies = limit.get("appliesTo", {})
        if not isinstance(applies, dict) or not isinstance(applies.get("ops", []), list):
            raise ValueError(f"{where}/appliesTo: must be an object with an optional ops array")
    return limits


def scope_key(limit: dict) -> str:
    """Identity of a limit's scope: kind, unit and appliesTo (ops order does not matter)."""
    applies = dict(limit.get("appliesTo") or {})
    if "ops" in applies:
        applies["ops"] = sorted(applies["ops"])
    return json.dumps([limit["kind"], limit.get("unit"), applies], sort_keys=True)


def _stronger_action(a: Any, b: Any) -> Any:
    rank = {name: i for i, name in enumerate(ACTION_STRENGTH)}
    return min((a, b), key=lambda x: rank.get(x, -1) if x is not None else len(rank))


def merge_packs(*packs: dict) -> dict:
    """One pack holding, for every scope, the strictest limit of all packs.

    The merged limit keeps the id of the pack limit that gave the stricter number (so a refusal
    names the limit that decided it) and the stronger action.
    """
    if not packs:
        return default_pack()
    merged: dict[str, dict] = {}
    order: list[str] = []
    for p_index, pack in enumerate(packs):
        for limit in check_pack(pack, f"packs[{p_index}]"):
            key = scope_key(limit)
            if key not in merged:
                merged[key] = copy.deepcopy(limit)
                order.append(key)
                continue
            kept = merged[key]
            if "max" in limit and ("max" not in kept or limit["max"] < kept["max"]):
                kept["max"] = limit["max"]
                kept["id"] = limit.get("id", kept.get("id"))
            if "min" in limit and ("min" not in kept or limit["min"] > kept["min"]):
                kept["min"] = limit["min"]
                kept["id"] = limit.get("id", kept.get("id"))
            if "action" in limit or "action" in kept:
                kept["action"] = _stronger_action(kept.get("action"), limit.get("action"))
    first = packs[0]  # a pack that does not say its versions is taken as of the implemented standard
    return {
        "core": first.get("core", CORE_VERSION),
        "kind": "SafetyLimits",
        "id": "+".join(str(p.get("id", f"pack{i}")) for i, p in enumerate(packs)),
        "version": first.get("version", CORE_VERSION),
        "limits": [merged[k] for k in order],
        "disclaimer": "Merged from several packs; for each scope the stricter limit is kept.",
    }


def applies(limit: dict, medium: str | None, op_id: str | None,
            food_classes: Iterable[str] = ()) -> bool:
    """Whether a limit governs a step with this envelope medium and op.

    A limit scoped by ops needs the op listed; scoped by medium needs the same medium; scoped by
    foodClass needs one of the step's food classes. A limit with no scope (stop, unattended,
    smoke) is not a per-step number and does not apply here.
    """
    scope = limit.get("appliesTo") or {}
    if not scope:
        return False
    if "ops" in scope and op_id not in scope["ops"]:
        return False
    if "medium" in scope and scope["medium"] != medium:
        return False
    if "foodClass" in scope and scope["foodClass"] not in set(food_classes):
        return False
    return True


def limits_for(pack: dict, medium: str | None, op_id: str | None,
               food_classes: Iterable[str] = ()) -> list[dict]:
    """Every limit of `pack` that applies to a step (see `applies`)."""
    classes = tuple(food_classes)
    return [l for l in check_pack(pack) if applies(l, medium, op_id, classes)]


def strictest_max(pack: dict, kind: str, medium: str | None, op_id: str | None,
                  unit: str = "degC") -> dict | None:
    """The applicable `kind` limit with the lowest max (the one that decides), or None."""
    candidates = [l for l in limits_for(pack, medium, op_id)
                  if l["kind"] == kind and "max" in l and l.get("unit", unit) == unit]
    return min(candidates, key=lambda l: l["max"], default=None)


def strictest_min(pack: dict, kind: str, medium: str | None, op_id: str | None,
                  food_classes: Iterable[str] = (), unit: str = "degC") -> dict | None:
    """The applicable `kind` limit with the highest min, or None."""
    candidates = [l for l in limits_for(pack, medium, op_id, food_classes)
                  if l["kind"] == kind and "min" in l and l.get("unit", unit) == unit]
    return max(candidates, key=lambda l: l["min"], default=None)
