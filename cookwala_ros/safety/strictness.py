"""Which of two versions of one SafetyLimit is stricter, aspect by aspect.

A limit is stricter when it protects at least as much in every aspect: a lower max, a higher
min, a shorter holdFor tolerance (absent = no tolerance), an action that does everything the old
one did, and a scope (appliesTo) that covers at least what the old one covered. Text (message,
source) never makes a limit stricter or looser.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cookwala_ros.safety.quantities import dimension, duration_s, to_base

# What an action does; an action is at least as strict as another when it does all of it.
ACTION_EFFECTS: dict[str, frozenset[str]] = {
    "alert": frozenset({"report"}),
    "ask_human": frozenset({"report", "human"}),
    "refuse_start": frozenset({"report", "refuse"}),
    "cut_heat": frozenset({"report", "heat"}),
    "stop_motion": frozenset({"report", "motion"}),
    "stop_all": frozenset({"report", "human", "refuse", "heat", "motion"}),
}


@dataclass
class Comparison:
    """Aspects in which `offered` is stricter or looser than `current` (human-readable)."""

    stricter: list[str] = field(default_factory=list)
    looser: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """'looser' if anything loosens, else 'stricter' if anything tightens, else 'equal'."""
        if self.looser:
            return "looser"
        return "stricter" if self.stricter else "equal"


def _bound(limit: dict, name: str) -> float | None:
    value = limit.get(name)
    return None if value is None else to_base(value, limit.get("unit"))


def _compare_bounds(current: dict, offered: dict, out: Comparison) -> None:
    if dimension(current.get("unit")) != dimension(offered.get("unit")) and (
        "max" in current or "min" in current
    ):
        out.looser.append(f"unit {offered.get('unit')!r} does not measure what {current.get('unit')!r} does")
        return
    for name, tighter_is_lower in (("max", True), ("min", False)):
        old, new = _bound(current, name), _bound(offered, name)
        if old is None and new is None:
            continue
        if new is None:
            out.looser.append(f"removes {name}")
        elif old is None:
            out.stricter.append(f"adds {name} {offered[name]} {offered.get('unit', '')}".rstrip())
        elif new != old:
            tighter = new < old if tighter_is_lower else new > old
            text = f"{name} {current[name]} -> {offered[name]} {offered.get('unit', '')}".rstrip()
            (out.stricter if tighter else out.looser).append(text)


def _compare_hold(current: dict, offered: dict, out: Comparison) -> None:
    old = duration_s(current["holdFor"]) if current.get("holdFor") else 0.0
    new = duration_s(offered["holdFor"]) if offered.get("holdFor") else 0.0
    if new < old:
        out.stricter.append(f"holdFor {current.get('holdFor')} -> {offered.get('holdFor') or 'none'}")
    elif new > old:
        out.looser.append(f"holdFor {current.get('holdFor') or 'none'} -> {offered.get('holdFor')}")


def _compare_action(current: dict, offered: dict, out: Comparison) -> None:
    old, new = current.get("action"), offered.get("action")
    if old == new:
        return
    old_fx, new_fx = ACTION_EFFECTS.get(old), ACTION_EFFECTS.get(new)
    if old_fx is None or new_fx is None:
        out.looser.append(f"action {old!r} -> {new!r} cannot be ranked")
    elif new_fx > old_fx:
        out.stricter.append(f"action {old} -> {new}")
    else:
        out.looser.append(f"action {old} -> {new} does less")


def _compare_scope(current: dict, offered: dict, out: Comparison) -> None:
    old, new = current.get("appliesTo") or {}, offered.get("appliesTo") or {}
    for key in ("medium", "foodClass"):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if b is None:
            out.stricter.append(f"applies to every {key} (was {a})")
        else:
            out.looser.append(f"no longer applies to {key} {a or 'any'} (offered {b})")
    a_ops, b_ops = frozenset(old.get("ops") or ()), frozenset(new.get("ops") or ())
    if a_ops == b_ops:
        return
    if not b_ops:
        out.stricter.append("applies to every op")
    elif not a_ops or not a_ops <= b_ops:
        dropped = sorted(a_ops - b_ops) or ["any op"]
        out.looser.append(f"no longer applies to {', '.join(dropped)}")
    else:
        out.stricter.append(f"also applies to {', '.join(sorted(b_ops - a_ops))}")


def compare(current: dict, offered: dict) -> Comparison:
    """Compare two versions of the limit with the same id."""
    out = Comparison()
    if current.get("kind") != offered.get("kind"):
        out.looser.append(f"kind {current.get('kind')} -> {offered.get('kind')} removes the {current.get('kind')} limit")
        return out
    _compare_bounds(current, offered, out)
    _compare_hold(current, offered, out)
    _compare_action(current, offered, out)
    _compare_scope(current, offered, out)
    return out
