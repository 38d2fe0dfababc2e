"""The published Cookwala vectors for the trust kinds (hash, signature, disclosure, ledger, and
the certification profile), one test per vector id, and the full published set through the
command line."""

from __future__ import annotations

import json

import pytest

from cookwala_ros import cli
from cookwala_ros.core import conformance

TRUST_KINDS = ("hash", "signature", "disclosure", "ledger", "certification", "certification_set")
FILES = ("hash.json", "signature.json", "disclosure.json", "ledger.json", "profiles/federation.json",
         "profiles/certifications.json")


def _ids():
    """Vector ids for parametrisation; the files themselves are read through `spec_dir`."""
    from spec_location import spec_dir_or_none

    spec = spec_dir_or_none()
    if spec is None:
        return [pytest.param("hash.json", "<published standard absent>", id="no-spec")]
    out = []
    for name in FILES:
        for vector in json.loads((spec / "conformance" / name).read_text(encoding="utf-8")):
            if vector["kind"] in TRUST_KINDS:
                out.append(pytest.param(name, vector["id"], id=f"{name.removesuffix('.json')}::{vector['id']}"))
    return out


@pytest.mark.parametrize("name, vector_id", _ids())
def test_published_trust_vector(spec_dir, name, vector_id):
    path = spec_dir / "conformance" / name
    vectors = {v["id"]: v for v in json.loads(path.read_text(encoding="utf-8"))}
    vector = vectors[vector_id]
    handler = conformance.HandlerTable(conformance.HANDLERS).get(vector["kind"])
    assert callable(handler), handler
    assert conformance.json_equal(handler(vector["input"]), vector["expected"])


def test_published_trust_files_all_pass_in_the_runner(spec_dir):
    paths = [spec_dir / "conformance" / name for name in FILES]
    report = conformance.run(paths)
    assert report.ok, [(f.label, r.id, r.message) for f in report.files for r in f.results if r.status != "passed"]
    assert report.count("passed") == sum(len(json.loads(p.read_text())) for p in paths)


def test_cookwala_ros_conformance_passes_on_the_published_set(spec_dir, capsys):
    code = cli.main(["conformance", "--vectors", str(spec_dir / "conformance")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "not implemented (profile)" in out or "0 unsupported" in out
