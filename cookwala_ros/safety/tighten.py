"""Tighten-only updates of the effective SafetyLimits pack (CORE §6.1).

From outside the device a pack can only make limits stricter. `tighten` applies an offered pack
when nothing in it loosens anything; a single loosening or removal refuses the whole request, so
a request is never half-applied.

An offered limit is compared with the effective limit of the same id, or else with the one of
the same scope (kind, unit, appliesTo): raising oil's max under a new id is still a loosening.

Removal: a limit the offered pack does not mention is left as it is (packs merge, they do not
replace), so removing is only possible by asking for it: dropping a bound, changing the kind, or
listing ids under the pack-level `x-cookwala-remove` array. All of those are refused.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from cookwala_ros.core.limits import scope_key
from cookwala_ros.safety.strictness import compare

REMOVE_KEY = "x-cookwala-remove"


@dataclass(frozen=True)
class TightenResult:
    """Unpacks as (effective, tightened_ids, refused_ids); `reasons` says why, per id."""

    effective: dict
    tightened_ids: list[str]
    refused_ids: list[str]
    reasons: dict[str, list[str]] = field(default_factory=dict)

    def __iter__(self):
        return iter((self.effective, self.tightened_ids, self.refused_ids))

    @property
    def accepted(self) -> bool:
        return not self.refused_ids


def _limits_by_id(pack: dict, where: str) -> dict[str, dict]:
    limits = pack.get("limits")
    if not isinstance(limits, list):
        raise ValueError(f"{where}: /limits must be an array of SafetyLimit objects")
    out: dict[str, dict] = {}
    for index, limit in enumerate(limits):
        if not isinstance(limit, dict) or not isinstance(limit.get("id"), str):
            raise ValueError(f"{where}: /limits/{index}/id must be a string")
        if limit["id"] in out:
            raise ValueError(f"{where}: /limits/{index}/id {limit['id']!r} appears twice")
        out[limit["id"]] = limit
    return out


def tighten(effective: dict, offered: dict) -> TightenResult:
    """Apply `offered` to `effective` if it only tightens; never mutates its arguments.

    Raises ValueError (naming the JSON pointer) when `offered` is not shaped like a pack.
    """
    if not isinstance(offered, dict):
        raise ValueError("offered pack: must be a JSON object (a SafetyLimits document)")
    current = _limits_by_id(effective, "effective pack")
    proposed = _limits_by_id(offered, "offered pack")
    removals = offered.get(REMOVE_KEY, [])
    if not isinstance(removals, list) or not all(isinstance(i, str) for i in removals):
        raise ValueError(f"offered pack: /{REMOVE_KEY} must be an array of limit ids")

    by_scope = {scope_key(limit): limit_id for limit_id, limit in current.items() if isinstance(limit.get("kind"), str)}
    replaces: dict[str, str] = {}  # offered id -> effective id it replaces
    reasons: dict[str, list[str]] = {}
    refused: list[str] = []
    tightened: list[str] = []
    for limit_id in removals:
        refused.append(limit_id)
        reasons[limit_id] = ["removal of a limit is never accepted from outside the device"]
    for limit_id, limit in proposed.items():
        if limit_id in removals:
            continue
        if not isinstance(limit.get("kind"), str):
            raise ValueError(f"offered pack: limit {limit_id!r} has no kind")
        target = limit_id if limit_id in current else by_scope.get(scope_key(limit))
        if target is None:
            tightened.append(limit_id)
            reasons[limit_id] = ["adds a limit"]
            continue
        replaces[limit_id] = target
        verdict = compare(current[target], limit)
        if verdict.looser:
            refused.append(limit_id)
            reasons[limit_id] = verdict.looser
        elif verdict.stricter:
            tightened.append(limit_id)
            reasons[limit_id] = verdict.stricter

    if refused:
        return TightenResult(copy.deepcopy(effective), [], refused, reasons)
    new = copy.deepcopy(effective)
    by_id = {limit["id"]: index for index, limit in enumerate(new["limits"])}
    for limit_id in tightened:
        target = replaces.get(limit_id)
        if target is not None:
            new["limits"][by_id[target]] = copy.deepcopy(proposed[limit_id])
        else:
            new["limits"].append(copy.deepcopy(proposed[limit_id]))
    return TightenResult(new, tightened, [], reasons)
