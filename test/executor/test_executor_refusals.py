"""Every Core RefusalReason, produced through ExecutorService.start_execution (decision 4 order)."""

from __future__ import annotations

import json

import pytest

from executor_recipes import boil_recipe, make_recipe, mutated, request_for
from executor_kitchen import drive
from cookwala_ros.core.keys import SigningKey
from cookwala_ros.core.limits import default_pack, merge_packs
from cookwala_ros.core.trust import document_hash, sign_document, sign_hash
from cookwala_ros.executor.service import ServiceError

SIGNED_AT = "2026-11-01T00:00:00Z"
ALL_REASONS = json.loads(
    (__import__("pathlib").Path(__file__).resolve().parents[2] / "schemas" / "refusal-reason.schema.json").read_text()
)["enum"]


def refused(status: dict, reason: str, node: str | None = None) -> dict:
    assert status["state"] == "refused", status
    assert status["refusal"]["reason"] == reason, status["refusal"]
    if node is not None:
        assert status["refusal"].get("node") == node
    return status["refusal"]


def deep_fry_recipe() -> dict:
    ingredients = [{"ref": "oil", "ingredientId": "cw.ing.sunflower_oil", "qty": {"value": 1000, "unit": "ml"}}]
    return make_recipe("test-deep-fry", [{
        "id": "f1", "op": "cw.op.deep_fry", "inputs": ["oil"], "equipment": ["pot", "hob"],
        "params": {"target": {"sensor": "cw.sense.oil_temp", "value": 175, "unit": "degC", "tolerance": 5}},
        "until": {"maxTime": "PT5M"},
    }], ingredients=ingredients)


def mandate(key: SigningKey | None, **fields) -> dict:
    doc = {"principal": "household:test/person:cook", "agent": "agent:planner", "scopes": ["start_cooking"],
           "perOrderCap": {"amount": "20.00", "currency": "EUR"}, "expires": "2027-01-01T00:00:00Z"}
    doc.update(fields)
    if key:  # a mandate carries a signature but no hash member
        doc["signature"] = sign_hash(document_hash(doc), key, SIGNED_AT)
    return doc


@pytest.fixture()
def principal_key():
    return SigningKey.generate("household:test#k1", actor="household:test/person:cook", valid_from="2026-01-01T00:00:00Z")


def test_unsupported_version_is_a_refusal_not_a_bad_request(service, install):
    recipe = boil_recipe()
    install(recipe)
    svc = service()
    status, created = svc.start_execution(request_for(recipe, core="0.3.0"))
    assert created
    assert "0.2" in refused(status, "unsupported_version")["detail"]
    refused(svc.start_execution(request_for(recipe, core="one"))[0], "unsupported_version")


def test_recipe_not_in_library_or_other_revision(service, install):
    recipe = boil_recipe()
    install(recipe)
    svc = service()
    refused(svc.start_execution(request_for(recipe, recipeHash="sha256:" + "1" * 64))[0], "recipe_hash_mismatch")
    unknown = boil_recipe("test-not-installed")
    detail = refused(svc.start_execution(request_for(unknown))[0], "recipe_hash_mismatch")["detail"]
    assert "test-not-installed" in detail


def test_not_authorized_requester_and_unsigned_recipe(service, install, principal_key):
    recipe = boil_recipe()
    install(recipe)
    svc = service()
    refused(svc.start_execution(request_for(recipe), authorized=False)[0], "not_authorized")
    strict = service(require_signed_recipes=True, trusted_keys=[principal_key.key_record(SIGNED_AT)])
    assert "unsigned" in refused(strict.start_execution(request_for(recipe))[0], "not_authorized")["detail"]


def test_signed_recipe_passes_when_signatures_are_required(service, install, principal_key):
    recipe = sign_document(boil_recipe("test-signed"), principal_key, SIGNED_AT)
    install(recipe)
    svc = service(require_signed_recipes=True, trusted_keys=[principal_key.key_record("2026-01-01T00:00:00Z")])
    status, _ = svc.start_execution(request_for(recipe))
    assert status["state"] == "accepted", status
    other = SigningKey.generate("intruder#k", valid_from="2026-01-01T00:00:00Z")
    forged = sign_document(boil_recipe("test-forged"), other, SIGNED_AT)
    install(forged)
    svc.stop(status["id"])
    assert "unknown_key" in refused(svc.start_execution(request_for(forged))[0], "not_authorized")["detail"]


def test_agent_mandate_checks(service, install, principal_key):
    recipe = boil_recipe()
    install(recipe)
    svc = service(trusted_keys=[principal_key.key_record("2026-01-01T00:00:00Z")])
    agent = {"requestedBy": "agent:planner"}
    refused(svc.start_execution(request_for(recipe, **agent))[0], "not_authorized")  # no mandate at all
    refused(svc.start_execution(request_for(recipe, mandate=mandate(None), **agent))[0], "not_authorized")
    expired = mandate(principal_key, expires="2026-01-02T00:00:00Z")
    assert "expired" in refused(svc.start_execution(request_for(recipe, mandate=expired, **agent))[0],
                                "not_authorized")["detail"]
    tampered = dict(mandate(principal_key), scopes=["start_cooking", "order_groceries"])
    refused(svc.start_execution(request_for(recipe, mandate=tampered, **agent))[0], "not_authorized")
    no_scope = mandate(principal_key, scopes=["plan_meals"])
    refused(svc.start_execution(request_for(recipe, mandate=no_scope, **agent))[0], "mandate_scope")
    ok = mandate(principal_key)
    over_cap = request_for(recipe, mandate=ok, **agent, **{"x-cookwala-ros-cost": {"amount": "25.00", "currency": "EUR"}})
    assert "perOrderCap" in refused(svc.start_execution(over_cap)[0], "mandate_scope")["detail"]
    # irreversible always needs a confirmation, even when the mandate does not list it
    unconfirmed = request_for(recipe, mandate=ok, **agent, **{"x-cookwala-ros-involves": ["irreversible"]})
    assert "irreversible" in refused(svc.start_execution(unconfirmed)[0], "mandate_scope")["detail"]
    confirmed = request_for(recipe, mandate=ok, **agent, **{"x-cookwala-ros-involves": ["irreversible"],
                                                            "x-cookwala-ros-confirmed": ["irreversible"]})
    assert svc.start_execution(confirmed)[0]["state"] == "accepted"


def test_recalled_revision_is_refused(service, install):
    recipe = boil_recipe()
    rhash = install(recipe)
    svc = service()
    svc.apply_recalls([{"core": "0.2.0", "kind": "Recall", "id": "recall-t1", "issuedAt": SIGNED_AT,
                        "issuer": "test", "targets": [{"ref": recipe["id"], "hash": rhash}], "severity": "high",
                        "reason": "food_safety", "action": "block", "signature": {}}])
    assert "recall-t1" in refused(svc.start_execution(request_for(recipe))[0], "recipe_recalled")["detail"]


def test_allergen_block(service, install):
    recipe = mutated(boil_recipe(), "test-peanut-soup",
                     lambda r: r["safety"]["allergens"].update(eu14=["peanuts"]))
    install(recipe)
    svc = service()
    refused(svc.start_execution(request_for(recipe, allergenBlocks=["Peanut"]))[0], "allergen_block")
    assert svc.start_execution(request_for(recipe, allergenBlocks=["milk"]))[0]["state"] == "accepted"


def test_busy_while_another_execution_runs(service, install, kitchen):
    recipe = boil_recipe()
    install(recipe)
    svc = service()
    first, _ = svc.start_execution(request_for(recipe))
    drive(svc, kitchen, lambda: svc.get_status(first["id"])["state"] == "running", max_s=60)
    refused(svc.start_execution(request_for(recipe))[0], "busy")


def test_busy_while_the_safety_monitor_holds_the_device_stopped(service, install, kitchen):
    recipe = boil_recipe()
    install(recipe)
    svc = service()
    kitchen.armed = False  # e.g. the estop is held, or a stop has not been reset locally yet
    status = svc.start_execution(request_for(recipe))[0]
    refused(status, "busy")
    assert "safety monitor" in status["refusal"]["detail"]
    kitchen.armed = True
    assert svc.start_execution(request_for(recipe))[0]["state"] == "accepted"


def test_per_node_refusals(service, install, kitchen):
    svc_limits = merge_packs(default_pack(), {"id": "tight", "version": "1.0.0", "limits": [
        {"id": "water.cool", "kind": "max_temp", "action": "cut_heat", "appliesTo": {"medium": "water"},
         "max": 80, "unit": "degC"}]})
    wok = mutated(boil_recipe(), "test-wok", lambda r: r["equipment"].append({"ref": "wok", "class": "cw.eq.vessel.wok"})
                  or r["process"]["nodes"][0]["equipment"].append("wok"))
    hot = mutated(boil_recipe(), "test-too-hot",
                  lambda r: r["process"]["nodes"][0]["params"]["target"].update(value=150))
    bake = make_recipe("test-bake", [{"id": "b1", "op": "cw.op.bake", "params": {"tempC": 180},
                                      "until": {"maxTime": "PT20M"}}], equipment=[{"ref": "pot", "class": "cw.eq.vessel.pot.sauce"}])
    for recipe in (wok, hot, bake, boil_recipe(), deep_fry_recipe()):
        install(recipe)
    svc = service()
    refused(svc.start_execution(request_for(wok))[0], "missing_equipment", "n1")
    refused(svc.start_execution(request_for(hot))[0], "envelope_out_of_range", "n1")
    tight = service(limits=svc_limits)
    assert "water.cool" in refused(tight.start_execution(request_for(boil_recipe()))[0], "safety_limit", "n1")["detail"]
    kitchen.sensors_ok["cw.sense.oil_temp"] = False
    refused(svc.start_execution(request_for(deep_fry_recipe()))[0], "missing_sensor_no_fallback", "f1")
    kitchen.present = False
    refused(svc.start_execution(request_for(bake))[0], "missing_capability", "b1")
    refused(svc.start_execution(request_for(deep_fry_recipe()))[0], "needs_human_present", "f1")


def test_limits_tightened_on_the_safety_monitor_apply_to_new_executions(service, install, kitchen):
    recipe = boil_recipe()
    install(recipe)
    svc = service()
    before = svc.start_execution(request_for(recipe))[0]
    assert before["state"] == "accepted"  # 100 degC water is fine under the configured limits
    svc.stop(before["id"])
    assert drive(svc, kitchen, lambda: svc.get_status(before["id"])["state"] == "stopped", max_s=60)
    kitchen.monitor_limits = {"core": "0.2.0", "kind": "SafetyLimits", "id": "monitor-effective", "version": "1.0.0",
                              "limits": [{"id": "water.cool", "kind": "max_temp", "action": "cut_heat",
                                          "appliesTo": {"medium": "water"}, "max": 80, "unit": "degC"}]}
    effective = svc.safety_limits()  # GET /v1/safety-limits: ours merged with the monitor's, stricter wins
    assert [l["max"] for l in effective["limits"] if l["id"] == "water.cool"] == [80]
    assert "water.cool" in refused(svc.start_execution(request_for(recipe))[0], "safety_limit", "n1")["detail"]


def test_a_monitor_that_does_not_give_its_limits_holds_new_executions(service, install, kitchen):
    """Its limits may have been tightened since start-up: the executor's own pack is no stand-in."""
    recipe = boil_recipe()
    install(recipe)
    svc = service()
    kitchen.monitor_silent = "did not answer within 1 s"
    refusal = refused(svc.start_execution(request_for(recipe))[0], "busy")
    assert "/safety_monitor/get_safety_limits did not answer within 1 s" in refusal["detail"], refusal
    assert "safety limits are unknown" in refusal["detail"], refusal
    with pytest.raises(ServiceError) as raised:  # GET /v1/safety-limits
        svc.safety_limits()
    assert raised.value.status == 503 and raised.value.code == "unavailable" and "did not answer" in raised.value.detail
    kitchen.monitor_silent = ""
    assert svc.start_execution(request_for(recipe))[0]["state"] == "accepted"


def test_refusal_order_version_before_everything(service, install):
    recipe = boil_recipe()
    install(recipe)
    svc = service()
    status, _ = svc.start_execution(request_for(recipe, core="0.9.0", recipeHash="sha256:" + "2" * 64),
                                    authorized=False)
    refused(status, "unsupported_version")
    status, _ = svc.start_execution(request_for(recipe, recipeHash="sha256:" + "2" * 64), authorized=False)
    refused(status, "recipe_hash_mismatch")


def test_refused_execution_is_stored_with_a_log(service, install):
    svc = service()
    status, _ = svc.start_execution(request_for(boil_recipe("test-absent")))
    assert svc.get_status(status["id"]) == status
    log = svc.get_log(status["id"])
    assert log["outcome"] == "refused" and log["privacy"]["personalData"] == "none"
    from cookwala_ros.core import schemas
    assert schemas.validate(log, "ExecutionLog") == []
    assert schemas.validate(status, "ExecutionStatus") == []


def test_bad_bodies_are_invalid_requests_naming_the_field(service, install):
    recipe = boil_recipe()
    install(recipe)
    svc = service()
    with pytest.raises(ServiceError) as err:
        svc.start_execution([1, 2])
    assert err.value.code == "invalid_request" and err.value.status == 400
    bad = request_for(recipe, servings=-1)
    with pytest.raises(ServiceError) as err:
        svc.start_execution(bad)
    assert err.value.pointer == "/servings"
    missing = request_for(recipe)
    del missing["recipe"]
    with pytest.raises(ServiceError) as err:
        svc.start_execution(missing)
    assert err.value.pointer == "/recipe"


def test_every_refusal_reason_is_covered_here():
    """Each Core reason is asserted by some `refused(..., "<reason>")` call in this module
    (a source check, so it holds under xdist, which spreads the tests over processes)."""
    import re

    source = __import__("pathlib").Path(__file__).read_text().splitlines()
    covered = {word for line in source if "refused(" in line and "def refused" not in line
               for word in re.findall(r'"(\w+)"', line)}
    assert set(ALL_REASONS) - covered == set()
