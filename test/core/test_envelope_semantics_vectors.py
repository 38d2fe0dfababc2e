"""Conformance vectors of the semantic kinds: the standard's (read through spec_dir) and ours.

The handlers are called directly, so these tests do not depend on the vector runner.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from cookwala_ros.core import dryrun, envelope, lifecycle, sensor_trust, units

HANDLERS = {
    "units": units.vector_units,
    "envelope": envelope.vector_envelope,
    "dryrun": dryrun.vector_dryrun,
    "execution_transition": lifecycle.vector_execution_transition,
    "mission_transition": lifecycle.vector_mission_transition,
    "sensor_trust": sensor_trust.vector_sensor_trust,
    "plausibility": sensor_trust.vector_plausibility,
}
OURS_DIR = pathlib.Path(__file__).resolve().parents[2] / "conformance"
OUR_FILES = sorted(OURS_DIR.glob("semantics-*.json"))
OUR_VECTORS = [(path.name, v) for path in OUR_FILES for v in json.loads(path.read_text(encoding="utf-8"))]
UPSTREAM_FILES = ["conformance/units.json", "conformance/envelope.json", "conformance/dryrun.json",
                  "conformance/transitions.json", "conformance/profiles/sensor_trust.json"]


@pytest.mark.parametrize("name, vector", OUR_VECTORS, ids=[v["id"] for _, v in OUR_VECTORS])
def test_our_vector(name, vector):
    assert {"id", "kind", "description", "input", "expected"} <= set(vector) <= \
        {"id", "kind", "profile", "rfc", "description", "input", "expected"}
    assert ("profile" in vector) == (vector["kind"] in ("sensor_trust", "plausibility"))
    assert HANDLERS[vector["kind"]](vector["input"]) == vector["expected"]


def test_our_vector_set_is_large_and_unique():
    ids = [v["id"] for _, v in OUR_VECTORS]
    assert len(ids) == len(set(ids)) >= 130
    assert {p.name for p in OUR_FILES} == {"semantics-units.json", "semantics-envelope.json", "semantics-dryrun.json",
                                          "semantics-transitions.json", "semantics-sensor-trust.json"}


def test_our_dryrun_vectors_cover_every_refusal_reason():
    reasons = {v["expected"]["reason"] for _, v in OUR_VECTORS if v["kind"] == "dryrun"} - {None}
    assert reasons == {"unsupported_version", "recipe_hash_mismatch", "recipe_recalled", "missing_equipment",
                       "missing_capability", "missing_sensor_no_fallback", "envelope_out_of_range", "safety_limit",
                       "allergen_block", "not_authorized", "mandate_scope", "needs_human_present", "busy"}


@pytest.mark.parametrize("relative", UPSTREAM_FILES)
def test_upstream_vectors(spec_dir, relative):
    vectors = json.loads((spec_dir / relative).read_text(encoding="utf-8"))
    assert vectors
    failures = []
    for vector in vectors:
        got = HANDLERS[vector["kind"]](vector["input"])
        if got != vector["expected"]:
            failures.append(f"{vector['id']}: expected {vector['expected']}, got {got}")
    assert not failures, "\n".join(failures)


def test_our_vectors_do_not_reuse_upstream_ids(spec_dir):
    upstream = {v["id"] for rel in UPSTREAM_FILES for v in json.loads((spec_dir / rel).read_text(encoding="utf-8"))}
    assert not upstream & {v["id"] for _, v in OUR_VECTORS}
