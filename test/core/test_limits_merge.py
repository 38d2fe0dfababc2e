"""SafetyLimits packs: stricter wins when merged, and which limits govern a step."""

from __future__ import annotations

import itertools

import pytest

from cookwala_ros.core import limits


def _limit(lid, kind="max_temp", action="cut_heat", **fields):
    return {"id": lid, "kind": kind, "action": action, "source": "test", **fields}


def _pack(pid, *items):
    return {"core": "0.2.0", "kind": "SafetyLimits", "id": pid, "version": "0.2.0", "limits": list(items), "disclaimer": "t"}


OIL = {"medium": "oil", "ops": ["cw.op.fry", "cw.op.deep_fry"]}
OIL_REORDERED = {"ops": ["cw.op.deep_fry", "cw.op.fry"], "medium": "oil"}


def test_same_scope_keeps_the_lowest_max_and_its_id():
    a = _pack("maker", _limit("oil.maker", max=200, unit="degC", appliesTo=OIL))
    b = _pack("site", _limit("oil.site", max=180, unit="degC", appliesTo=OIL_REORDERED, action="alert"))
    for packs in itertools.permutations([a, b]):
        merged = limits.merge_packs(*packs)
        assert len(merged["limits"]) == 1
        only = merged["limits"][0]
        assert (only["id"], only["max"], only["action"]) == ("oil.site", 180, "cut_heat")


def test_same_scope_keeps_the_highest_min():
    scope = {"ops": ["cw.op.hold"]}
    a = _pack("a", _limit("hold.a", kind="time_temp", min=60, unit="degC", appliesTo=scope))
    b = _pack("b", _limit("hold.b", kind="time_temp", min=63, unit="degC", appliesTo=scope))
    assert limits.merge_packs(a, b)["limits"][0]["min"] == 63
    assert limits.merge_packs(b, a)["limits"][0]["id"] == "hold.b"


def test_different_scopes_are_all_kept_and_all_apply():
    a = _pack("a", _limit("oil.any", max=200, unit="degC", appliesTo={"medium": "oil"}))
    b = _pack("b", _limit("deep.only", max=170, unit="degC", appliesTo={"ops": ["cw.op.deep_fry"]}))
    merged = limits.merge_packs(a, b)
    assert len(merged["limits"]) == 2
    assert limits.strictest_max(merged, "max_temp", "oil", "cw.op.deep_fry")["id"] == "deep.only"
    assert limits.strictest_max(merged, "max_temp", "oil", "cw.op.fry")["id"] == "oil.any"
    assert limits.strictest_max(merged, "max_temp", "water", "cw.op.simmer") is None


def test_a_looser_pack_never_raises_a_limit():
    default = limits.default_pack()
    loose = _pack("loose", _limit("oil.loose", max=250, unit="degC", appliesTo=OIL),
                  _limit("pan.loose", max=400, unit="degC", appliesTo={"medium": "pan_surface"}))
    merged = limits.merge_packs(default, loose)
    assert limits.strictest_max(merged, "max_temp", "oil", "cw.op.deep_fry")["max"] == 200
    assert limits.strictest_max(merged, "max_temp", "pan_surface", "cw.op.saute")["max"] == 280


def test_applies_needs_every_scope_field():
    both = _limit("x", max=1, appliesTo=OIL)
    assert limits.applies(both, "oil", "cw.op.fry")
    assert not limits.applies(both, "oil", "cw.op.saute")
    assert not limits.applies(both, "pan_surface", "cw.op.fry")
    assert not limits.applies(_limit("stop", kind="stop"), "oil", "cw.op.fry")
    poultry = _limit("core", kind="min_core_temp", min=74, appliesTo={"foodClass": "poultry"})
    assert limits.applies(poultry, "air", "cw.op.bake", ["poultry"])
    assert not limits.applies(poultry, "air", "cw.op.bake", ["fish"])


def test_limits_for_default_pack():
    ids = [l["id"] for l in limits.limits_for(limits.default_pack(), "oil", "cw.op.deep_fry")]
    assert ids == ["oil.max_temp"]
    assert [l["id"] for l in limits.limits_for(limits.default_pack(), "product", "cw.op.hold")] == ["hold.hot"]


def test_bad_packs_name_the_field():
    with pytest.raises(ValueError, match="packs\\[1\\]/limits"):
        limits.merge_packs(limits.default_pack(), {"id": "x"})
    with pytest.raises(ValueError, match="limits/0/max"):
        limits.check_pack({"limits": [_limit("x", max="200")]})
    assert limits.merge_packs()["id"] == "cookwala-default"


def test_a_merged_pack_that_does_not_say_its_versions_is_of_the_implemented_standard():
    from cookwala_ros import CORE_VERSION

    bare = {"kind": "SafetyLimits", "id": "bare", "limits": [_limit("a", max=200, unit="degC")], "disclaimer": "t"}
    merged = limits.merge_packs(bare, _pack("other"))
    assert merged["core"] == merged["version"] == CORE_VERSION
    assert limits.merge_packs(_pack("first"), bare)["core"] == "0.2.0"  # what the first pack says
