"""Tighten-only updates: stricter limits apply, any loosening or removal refuses the request."""

import copy

import pytest

from cookwala_ros.safety.packs import effective_pack
from cookwala_ros.safety.strictness import compare
from cookwala_ros.safety.tighten import tighten


@pytest.fixture()
def pack():
    return effective_pack([])


def _limit(pack, limit_id):
    return next(l for l in pack["limits"] if l["id"] == limit_id)


def _offer(limits):
    return {"core": "0.2.0", "kind": "SafetyLimits", "id": "offer", "version": "0.1.0",
            "limits": limits, "disclaimer": "test"}


def _changed(pack, limit_id, **changes):
    limit = copy.deepcopy(_limit(pack, limit_id))
    for key, value in changes.items():
        if value is None:
            limit.pop(key, None)
        else:
            limit[key] = value
    return limit


def test_lower_oil_max_is_applied(pack):
    new, tightened, refused = tighten(pack, _offer([_changed(pack, "oil.max_temp", max=190)]))
    assert (tightened, refused) == (["oil.max_temp"], [])
    assert _limit(new, "oil.max_temp")["max"] == 190
    assert _limit(pack, "oil.max_temp")["max"] == 200  # input untouched


def test_raising_oil_max_refuses_the_whole_request(pack):
    offer = _offer([_changed(pack, "pan.max_surface", max=250), _changed(pack, "oil.max_temp", max=250)])
    result = tighten(pack, offer)
    new, tightened, refused = result
    assert refused == ["oil.max_temp"] and tightened == []
    assert _limit(new, "pan.max_surface")["max"] == 280  # the stricter part was not applied either
    assert "max 200 -> 250" in result.reasons["oil.max_temp"][0]


def test_raising_under_a_new_id_is_still_refused(pack):
    offer = _offer([_changed(pack, "oil.max_temp", id="oil.hotter", max=250)])
    assert tighten(pack, offer).refused_ids == ["oil.hotter"]


@pytest.mark.parametrize("changes", [
    {"max": None},                       # removes the bound
    {"kind": "pressure"},                # a different kind removes the max_temp limit
    {"action": "alert"},                 # does less than cut_heat
    {"appliesTo": {"medium": "oil", "ops": ["cw.op.fry"]}},  # no longer covers deep_fry
    {"appliesTo": {"medium": "water", "ops": ["cw.op.fry", "cw.op.deep_fry"]}},
    {"holdFor": "PT10S"},                # tolerance where there was none
])
def test_loosening_kinds_are_refused(pack, changes):
    assert tighten(pack, _offer([_changed(pack, "oil.max_temp", **changes)])).refused_ids == ["oil.max_temp"]


def test_explicit_removal_is_refused(pack):
    offer = _offer([_changed(pack, "oil.max_temp", max=190)])
    offer["x-cookwala-remove"] = ["smoke.fire"]
    result = tighten(pack, offer)
    assert result.refused_ids == ["smoke.fire"] and not result.accepted


def test_omitting_limits_does_not_remove_them(pack):
    new, tightened, _ = tighten(pack, _offer([_changed(pack, "oil.max_temp", max=190)]))
    assert {l["id"] for l in new["limits"]} == {l["id"] for l in pack["limits"]}


@pytest.mark.parametrize("changes", [
    {"action": "stop_all"},
    {"appliesTo": {"ops": ["cw.op.fry", "cw.op.deep_fry"]}},     # any medium
    {"appliesTo": {"medium": "oil"}},                             # every op
])
def test_wider_or_stronger_is_stricter(pack, changes):
    assert tighten(pack, _offer([_changed(pack, "oil.max_temp", **changes)])).tightened_ids == ["oil.max_temp"]


def test_shorter_hold_and_higher_min_are_stricter(pack):
    result = tighten(pack, _offer([_changed(pack, "hold.hot", holdFor="PT90M", min=63)]))
    assert result.tightened_ids == ["hold.hot"]
    assert compare(_limit(pack, "hold.hot"), _changed(pack, "hold.hot", holdFor="PT3H")).verdict == "looser"


def test_units_are_compared_in_base_units(pack):
    faster = _changed(pack, "stop.local", max=400, unit="s")
    assert compare(_limit(pack, "stop.local"), faster).verdict == "looser"
    assert compare(_changed(pack, "hold.hot", holdFor="PT2H"), _changed(pack, "hold.hot", holdFor="PT120M")).verdict == "equal"


def test_new_limits_are_added(pack):
    extra = {"id": "water.max", "kind": "max_temp", "action": "cut_heat", "appliesTo": {"medium": "water"},
             "max": 105, "unit": "degC", "source": "test"}
    new, tightened, refused = tighten(pack, _offer([extra]))
    assert tightened == ["water.max"] and _limit(new, "water.max")["max"] == 105


def test_equal_offer_changes_nothing(pack):
    new, tightened, refused = tighten(pack, _offer([_changed(pack, "oil.max_temp", message="other words")]))
    assert (tightened, refused) == ([], []) and new == pack


def test_bad_offers_name_the_field(pack):
    with pytest.raises(ValueError, match="/limits"):
        tighten(pack, {"kind": "SafetyLimits"})
    with pytest.raises(ValueError, match="appears twice"):
        tighten(pack, _offer([_limit(pack, "oil.max_temp"), _limit(pack, "oil.max_temp")]))
