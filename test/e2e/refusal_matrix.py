"""One request per RefusalReason, and the test device that refuses each for exactly that reason.

The request files live in `data/requests/<reason>.json`, the recipes they name in
`data/recipes/` (plus the sample deep-fry recipe in examples/recipes/). The test device is the
shipped device file with three changes a real integrator could make: no oil thermometer, a site
safety pack that caps oil at 180 degC, and one trusted key (that signs mandates and recalls).
Some reasons need the device in a given situation: nobody present, a recall cached, another
execution running; `run_case` sets that up through the callbacks the caller provides, so the same
matrix runs in-process and against the live executor.
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Callable
from typing import Any

from cookwala_ros.core.keys import SigningKey
from cookwala_ros.core.trust import document_hash, sign_hash

HERE = pathlib.Path(__file__).resolve().parent
DATA = HERE / "data"
REPO = HERE.parents[1]
RECIPE_FILES = sorted((DATA / "recipes").glob("*.cookwala.json")) + [
    REPO / "examples" / "recipes" / "chips-deep-fry.cookwala.json"]
SITE_LIMITS = DATA / "site-limits.json"
REMOVED_SENSOR = "cw.sense.oil_temp"
SIGNER_ACTOR = "did:web:kitchen.example"
SIGNED_AT = "2026-11-29T12:00:00Z"

# Reasons whose check needs nobody present (the others run with a person present).
NOBODY_PRESENT = {"missing_capability", "needs_human_present"}
# Request-level reasons carry no node; the per-node ones name the node that failed.
NODE_REASONS = {"missing_capability", "missing_equipment", "envelope_out_of_range", "safety_limit",
                "needs_human_present", "missing_sensor_no_fallback"}
BUSY_REQUEST = "busy"  # the running execution is the same water simmer, started with another key


def signer() -> SigningKey:
    """A fixed test key (deterministic seed), trusted by the test device."""
    return SigningKey(kid=f"{SIGNER_ACTOR}#e2e-1", seed=bytes(range(32)), actor=SIGNER_ACTOR,
                      valid_from="2026-01-01T00:00:00Z")


def trusted_keys() -> list[dict]:
    return [signer().key_record()]


def reasons() -> list[str]:
    return sorted(p.stem for p in (DATA / "requests").glob("*.json"))


def request_for(reason: str) -> dict:
    """The request for `reason`; a mandate in it is signed by the trusted key first."""
    body = json.loads((DATA / "requests" / f"{reason}.json").read_text(encoding="utf-8"))
    if isinstance(body.get("mandate"), dict):
        mandate = body["mandate"]  # an AgentMandate carries its signature but no hash member
        mandate["signature"] = sign_hash(document_hash(mandate), signer(), SIGNED_AT)
    return body


def recipe_documents() -> dict[str, dict]:
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in RECIPE_FILES}


def recall_of(recipe_id: str, recipe_hash: str) -> dict:
    """A signed block recall of one recipe revision."""
    recall = {"core": "0.2.0", "kind": "Recall", "id": "recall-e2e-0001", "issuedAt": SIGNED_AT,
              "issuer": SIGNER_ACTOR, "targets": [{"ref": recipe_id, "hash": recipe_hash}],
              "severity": "high", "reason": "food_safety", "action": "block",
              "detail": "End-to-end test recall."}
    recall["signature"] = sign_hash(document_hash(recall), signer(), SIGNED_AT, kind="Recall")
    return recall  # a Recall carries its signature but no hash member


def recall_for_matrix() -> dict:
    body = json.loads((DATA / "requests" / "recipe_recalled.json").read_text(encoding="utf-8"))
    return recall_of(body["recipe"], body["recipeHash"])


def test_capabilities(capabilities: dict) -> dict:
    """The shipped capabilities without the oil thermometer."""
    caps = json.loads(json.dumps(capabilities))
    inner = caps["capabilities"]
    inner["sensors"] = [s for s in inner.get("sensors", []) if s.get("sensor") != REMOVED_SENSOR]
    return caps


def run_case(client: Any, reason: str, *, post: Callable[[Any, dict], Any],
             set_presence: Callable[[bool], None], set_recalls: Callable[[list], None],
             start_busy: Callable[[], str], stop: Callable[[str], None]) -> dict:
    """Put the device in the case's situation, POST the request for `reason`, undo the situation,
    and return the status answered (the caller asserts on it)."""
    set_presence(reason not in NOBODY_PRESENT)
    if reason == "recipe_recalled":
        set_recalls([recall_for_matrix()])
    running = start_busy() if reason == BUSY_REQUEST else None
    try:
        response = post(client, request_for(reason))
        assert response.status_code == 202, f"{reason}: {response.status_code} {response.text}"
        status = response.json()
        if status.get("state") != "refused":  # a wrong answer must not leave the device busy
            stop(status["id"])
        return status
    finally:
        if running:
            stop(running)
        if reason == "recipe_recalled":
            set_recalls([])


def check_hashes() -> list[str]:
    """Request files whose recipeHash no longer matches their recipe (stale fixtures)."""
    by_id = {doc["id"]: document_hash(doc) for doc in recipe_documents().values()}
    stale = []
    for reason in reasons():
        body = request_for(reason)
        if reason in ("recipe_hash_mismatch",):
            continue
        if by_id.get(body["recipe"]) != body["recipeHash"]:
            stale.append(reason)
    return stale
