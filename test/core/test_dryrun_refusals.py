"""One minimal recipe or request per RefusalReason, each refused for exactly that reason."""

from __future__ import annotations

import json

import pytest

from cookwala_ros.core import dryrun
from cookwala_ros.core.request_checks import RequestContext

CAPS = {"capabilities": {"ops": [{"op": o} for o in ("cw.op.mix", "cw.op.deep_fry", "cw.op.saute", "cw.op.boil")],
                         "sensors": [{"sensor": "cw.sense.oil_temp"}, {"sensor": "cw.sense.pan_surface_temp"}],
                         "heat": [{"id": "hob1", "class": "cw.eq.heat.hob"}]}}


def _recipe(*nodes, **extra):
    return {"id": "r1", "process": {"nodes": list(nodes)}, **extra}


MIX = _recipe({"id": "n1", "op": "cw.op.mix"})


def _fry(temp):
    return _recipe({"id": "n1", "op": "cw.op.deep_fry", "params": {"oilTempC": temp}})


CASES = {
    "unsupported_version": dict(recipe=MIX, request=RequestContext(core="0.3.0")),
    "recipe_hash_mismatch": dict(recipe=MIX, request=RequestContext(expected_hash="sha256:" + "0" * 64)),
    "not_authorized": dict(recipe=MIX, request=RequestContext(signature_ok=False)),
    "mandate_scope": dict(recipe=MIX, request=RequestContext(mandate={"principal": "p", "agent": "a", "scopes": ["plan_meals"],
                                                                      "expires": "2030-01-01T00:00:00Z"})),
    "recipe_recalled": dict(recipe=MIX, request=RequestContext(recalls=[{"id": "rc", "action": "block", "reason": "allergen",
                                                                          "targets": [{"ref": "r1", "allRevisions": True}]}])),
    "allergen_block": dict(recipe=_recipe({"id": "n1", "op": "cw.op.mix"}, safety={"allergens": {"eu14": ["peanuts"]}}),
                           request=RequestContext(allergen_blocks=["Peanut"])),
    "busy": dict(recipe=MIX, request=RequestContext(busy=True)),
    "missing_capability": dict(recipe=_recipe({"id": "n1", "op": "cw.op.grill"}), human_present=False),
    "missing_equipment": dict(recipe=_recipe({"id": "n1", "op": "cw.op.boil", "equipment": ["oven"]},
                                             equipment=[{"ref": "oven", "class": "cw.eq.heat.oven"}])),
    "envelope_out_of_range": dict(recipe=_fry(260)),
    "safety_limit": dict(recipe=_fry(185), limits={"limits": [{"id": "oil.site", "kind": "max_temp", "unit": "degC", "max": 180,
                                                               "action": "cut_heat", "source": "t", "appliesTo": {"medium": "oil"}}]}),
    "needs_human_present": dict(recipe=_recipe({"id": "n1", "op": "cw.op.saute"}), human_present=False),
    "missing_sensor_no_fallback": dict(recipe=_fry(175), capabilities={"capabilities": {"ops": [{"op": "cw.op.deep_fry"}], "sensors": []}}),
}


def _run(case):
    kwargs = dict(case)
    recipe = kwargs.pop("recipe")
    caps = kwargs.pop("capabilities", CAPS)
    kwargs.setdefault("human_present", True)
    return dryrun.precheck(recipe, caps, **kwargs)


@pytest.mark.parametrize("reason", sorted(CASES))
def test_minimal_case_refuses_for_exactly_its_reason(reason):
    result = _run(CASES[reason])
    assert not result.accepted
    assert result.reason == reason, result.detail
    assert result.detail
    per_node = reason not in {"unsupported_version", "recipe_hash_mismatch", "not_authorized", "mandate_scope",
                              "recipe_recalled", "allergen_block", "busy"}
    assert (result.node == "n1") if per_node else (result.node is None)


@pytest.mark.parametrize("reason", sorted(CASES))
def test_removing_the_cause_accepts(reason):
    """Each minimal case is one fix away from acceptance, so it tests exactly one check."""
    fixed = dict(CASES[reason])
    if "request" in fixed:
        fixed["request"] = RequestContext()
    elif reason == "missing_capability":
        fixed["human_present"] = True
    elif reason == "missing_equipment":
        fixed["recipe"] = _recipe({"id": "n1", "op": "cw.op.boil"})
    elif reason == "envelope_out_of_range":
        fixed["recipe"] = _fry(175)
    elif reason == "safety_limit":
        fixed["recipe"] = _fry(175)
    elif reason == "needs_human_present":
        fixed["human_present"] = True
    elif reason == "missing_sensor_no_fallback":
        fixed.pop("capabilities")
    assert _run(fixed).accepted


def test_every_refusal_reason_of_the_schema_is_covered(spec_dir):
    schema = json.loads((spec_dir / "schemas" / "core.schema.json").read_text())
    assert set(CASES) == set(schema["$defs"]["RefusalReason"]["enum"])


def test_first_failing_check_wins_across_request_checks():
    ctx = RequestContext(core="0.2.1", expected_hash="sha256:" + "0" * 64, signature_ok=False, busy=True)
    assert _run(dict(recipe=MIX, request=ctx)).reason == "recipe_hash_mismatch"
    ctx = RequestContext(busy=True, allergen_blocks=["milk"], recalls=[])
    assert _run(dict(recipe=_recipe({"id": "n1", "op": "cw.op.mix"}, safety={"allergens": {"us9": ["milk"]}}), request=ctx)).reason == "allergen_block"


def test_recipe_hash_uses_the_document_hash():
    trust = pytest.importorskip("cookwala_ros.core.trust")
    good = RequestContext(expected_hash=trust.document_hash(MIX))
    assert _run(dict(recipe=MIX, request=good)).accepted
    assert not _run(dict(recipe=dict(MIX, id="r2"), request=good)).accepted


def test_missing_recipe_is_a_hash_mismatch():
    result = dryrun.precheck(None, CAPS, request=RequestContext(recipe_ref="cw:example.org:gone"))
    assert (result.reason, result.node) == ("recipe_hash_mismatch", None)
    assert "cw:example.org:gone" in result.detail
