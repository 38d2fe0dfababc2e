"""The conformance vector runner, and the project's own vectors in conformance/."""

from __future__ import annotations

import json
import pathlib

import pytest

from cookwala_ros.core import conformance
from cookwala_ros.core.conformance import json_equal
from cookwala_ros.core.trust import document_hash

REPO = pathlib.Path(__file__).resolve().parents[2]
OWN = REPO / "conformance"
ECHO = {"echo": "json:loads", "hash": "cookwala_ros.core.trust:vector_hash"}


def write(path: pathlib.Path, data) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def vec(id, kind="hash", input=None, expected=None, **extra):
    return {"id": id, "kind": kind, "input": {} if input is None else input,
            "expected": {"canonical": "{}", "hash": document_hash({})} if expected is None else expected, **extra}


@pytest.mark.parametrize("a, b, equal", [
    ({"a": 1}, {"a": 1.0}, True),
    ({"a": True}, {"a": 1}, False),
    ({"a": False}, {"a": 0}, False),
    ({"a": None}, {}, False),
    ([1, 2], [2, 1], False),
    ({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "x"}]}, True),
    ({"a": "1"}, {"a": 1}, False),
    ((1, 2), [1, 2], True),
])
def test_json_equality_is_exact(a, b, equal):
    assert json_equal(a, b) is equal


def test_passing_failing_and_crashing_vectors(tmp_path):
    path = write(tmp_path / "v.json", [
        vec("good"),
        vec("wrong", expected={"canonical": "{}", "hash": "sha256:00"}),
        vec("crash", kind="units-of-nothing"),
    ])
    report = conformance.run([path], handlers={"hash": ECHO["hash"], "units-of-nothing": "json:dumps_not_there"})
    results = {r.id: r for r in report.files[0].results}
    assert results["good"].status == "passed"
    assert results["wrong"].status == "failed" and results["wrong"].got["canonical"] == "{}"
    assert results["crash"].status == "failed"
    assert results["crash"].message.startswith("handler not available: AttributeError")
    assert not report.ok


def test_handler_that_raises_fails_its_vector_only(tmp_path):
    path = write(tmp_path / "v.json", [vec("boom", kind="json", input=5), vec("fine")])
    report = conformance.run([path], handlers={"json": "json:loads", "hash": ECHO["hash"]})
    boom, fine = report.files[0].results
    assert boom.status == "failed" and boom.message.startswith("handler error: TypeError")
    assert fine.status == "passed"


def test_missing_handler_module_is_reported_not_raised(tmp_path):
    path = write(tmp_path / "v.json", [vec("a", kind="units"), vec("b", kind="units")])
    report = conformance.run([path], handlers={"units": "cookwala_ros.core.no_such_module:vector_units"})
    assert [r.message for r in report.files[0].results] == [
        "handler not available: ModuleNotFoundError: No module named 'cookwala_ros.core.no_such_module'"] * 2


def test_unsupported_kinds_fail_core_files_but_not_profiles_unless_strict(tmp_path):
    core = write(tmp_path / "core.json", [vec("c1", kind="brand_new")])
    prof = write(tmp_path / "profiles" / "p.json", [vec("p1", kind="brand_new")])
    tagged = write(tmp_path / "tagged.json", [vec("t1", kind="brand_new", profile="x")])
    report = conformance.run([prof, tagged], handlers=ECHO)
    assert report.ok and report.count("unsupported") == 2
    assert {r.message for f in report.files for r in f.results} == {"not implemented (profile)"}
    assert not conformance.run([prof], strict=True, handlers=ECHO).ok
    core_report = conformance.run([core], handlers=ECHO)
    assert not core_report.ok and core_report.files[0].results[0].status == "unsupported"
    assert "Core kinds must be implemented" in core_report.files[0].results[0].message


def test_directories_run_top_level_then_profiles_and_skip_key_files(tmp_path):
    write(tmp_path / "b.json", [vec("b")])
    write(tmp_path / "a.json", {"vectors": [vec("a")]})
    write(tmp_path / "keys-x.json", [{"kid": "k", "alg": "EdDSA", "publicKey": "AA", "validFrom": "2026-01-01T00:00:00Z"}])
    write(tmp_path / "profiles" / "p.json", [vec("p")])
    (tmp_path / "README.md").write_text("not json")
    report = conformance.run([tmp_path], handlers=ECHO)
    assert [f.path.name for f in report.files] == ["a.json", "b.json", "p.json"]
    assert report.ok and report.count("passed") == 3


def test_malformed_files_and_vectors_are_failures(tmp_path):
    bad_json = tmp_path / "broken.json"
    bad_json.write_text("[{")
    dupes = write(tmp_path / "dupes.json", [vec("same"), vec("same"), {"id": "x", "kind": "hash"}, 7])
    not_list = write(tmp_path / "obj.json", {"id": "x"})
    report = conformance.run([bad_json, dupes, not_list], handlers=ECHO)
    by_name = {f.path.name: f for f in report.files}
    assert by_name["broken.json"].error.startswith("not JSON")
    assert "not a vector file" in by_name["obj.json"].error
    messages = [r.message for r in by_name["dupes.json"].results]
    assert messages == ["", "duplicate vector id in this file", "malformed vector: missing input, expected",
                        "malformed vector: not an object"]
    assert not report.ok


def test_key_references_resolve_relative_to_the_vector_file(tmp_path):
    record = {"kid": "k", "alg": "EdDSA", "publicKey": "AA", "validFrom": "2026-01-01T00:00:00Z"}
    write(tmp_path / "sub" / "keys-a.json", [record])
    resolved = conformance.resolve_key_refs({"keys": "keys-a.json", "x": 1}, tmp_path / "sub")
    assert resolved == {"keys": [record], "x": 1}
    mixed = conformance.resolve_key_refs({"keys": [{"kid": "inline"}, "keys-a.json"]}, tmp_path / "sub")
    assert mixed["keys"] == [{"kid": "inline"}, record]
    assert conformance.resolve_key_refs({"keys": [record]}, tmp_path) == {"keys": [record]}
    path = write(tmp_path / "v.json", [{"id": "k", "kind": "json", "input": {"keys": "missing.json"}, "expected": 1}])
    result = conformance.run([path], handlers={"json": "json:dumps"}).files[0].results[0]
    assert result.status == "failed" and result.message.startswith("keys: keys file")


def test_select_and_progress(tmp_path):
    path = write(tmp_path / "v.json", [vec("alpha-1"), vec("beta-1"), vec("alpha-2")])
    write(tmp_path / "w.json", [vec("gamma")])
    seen = []
    report = conformance.run([tmp_path], select="ALPHA", handlers=ECHO, progress=lambda *a: seen.append(a))
    assert [r.id for f in report.files for r in f.results] == ["alpha-1", "alpha-2"]
    assert [f.path for f in report.files] == [path]
    assert seen == [(1, 2, report.files[0].label), (2, 2, report.files[0].label)]


def test_default_registry_names_every_kind_and_handler():
    assert set(conformance.HANDLERS) >= {"hash", "signature", "disclosure", "ledger", "units", "envelope", "dryrun",
                                        "execution_transition", "mission_transition", "sensor_trust", "plausibility"}
    assert all(":" in target and target.startswith("cookwala_ros.core.") for target in conformance.HANDLERS.values())


# ---------------------------------------------------------------- our own vectors


def _own_vectors():
    for path in sorted(OWN.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if conformance.is_key_file(data):
            continue
        for vector in data:
            yield pytest.param(path, vector, id=f"{path.stem}::{vector['id']}")


OWN_VECTORS = list(_own_vectors())
HANDLERS = conformance.HandlerTable(conformance.HANDLERS)


def test_own_vector_set_is_large_and_uses_our_file_names():
    trust_kinds = {"hash", "signature", "disclosure", "ledger", "certification", "certification_set"}
    assert sum(1 for p in OWN_VECTORS if p.values[1]["kind"] in trust_kinds) >= 80
    upstream_names = {"hash.json", "signature.json", "disclosure.json", "ledger.json"}
    assert not upstream_names & {p.name for p in OWN.glob("*.json")}


@pytest.mark.parametrize("path, vector", OWN_VECTORS)
def test_own_vector(path, vector):
    result = conformance.run_vector(vector, path.parent, HANDLERS, in_profiles=False)
    assert result.status == "passed", f"{result.message}: expected {result.expected}, got {result.got}"
