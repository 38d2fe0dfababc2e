"""`cookwala-ros hash / sign / verify / conformance`: output and exit codes."""

from __future__ import annotations

import json
import pathlib

import pytest

from cookwala_ros import cli
from cookwala_ros.core.trust import document_hash

REPO = pathlib.Path(__file__).resolve().parents[2]
DOC = {"kind": "Recall", "id": "rc-cli", "issuedAt": "2026-04-01T00:00:00Z", "action": "block", "note": "caf\u00e9"}


@pytest.fixture
def doc_file(tmp_path):
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(DOC), encoding="utf-8")
    return path


@pytest.fixture
def key_pair(tmp_path, capsys):
    key = tmp_path / "me.key.json"
    code = cli.main(["sign", "--generate-key", str(key), "--kid", "did:web:me.test#k1",
                     "--actor", "me.test", "--valid-from", "2026-01-01T00:00:00Z"])
    assert code == 0
    record = json.loads(capsys.readouterr().out)
    records = tmp_path / "trusted.json"
    records.write_text(json.dumps([record]))
    return key, records


def run(capsys, *argv):
    code = cli.main(list(map(str, argv)))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---------------------------------------------------------------- hash


def test_hash_prints_the_document_hash(capsys, doc_file):
    code, out, _ = run(capsys, "hash", doc_file)
    assert code == 0 and out.strip() == document_hash(DOC)


def test_hash_canonical_and_several_files(capsys, doc_file, tmp_path):
    other = tmp_path / "other.json"
    other.write_text('{"b": 1, "a": 2.50}')
    code, out, _ = run(capsys, "hash", doc_file, other)
    assert code == 0 and out.splitlines()[1] == f"{document_hash({'a': 2.5, 'b': 1})}  {other}"
    code, out, _ = run(capsys, "hash", "--canonical", other)
    assert out.strip() == '{"a":2.5,"b":1}'


def test_hash_check(capsys, tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps({**DOC, "hash": document_hash(DOC)}))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**DOC, "hash": "sha256:" + "0" * 64}))
    none = tmp_path / "none.json"
    none.write_text(json.dumps(DOC))
    assert run(capsys, "hash", "--check", good)[0] == 0
    code, out, _ = run(capsys, "hash", "--check", bad)
    assert code == 1 and "hashes to" in out
    code, out, _ = run(capsys, "hash", "--check", none)
    assert code == 1 and "no embedded hash" in out


def test_hash_check_on_published_recipe(capsys, spec_dir):
    assert run(capsys, "hash", "--check", spec_dir / "examples" / "shakshuka.cookwala.json")[0] == 0


@pytest.mark.parametrize("content, message", [
    ("{not json", "not JSON"),
    ('{"a": 1, "a": 2}', "duplicate object key"),
    ('{"n": NaN}', "NaN"),
    ('{"n": 12345678901234567890}', "/n: integer"),
    ('{"n": ' + "9" * 100_000 + "}", "an integer of 100000 characters"),  # past CPython's 4,300-digit guard
    ("[" * 1000 + "]" * 1000, "nested too deeply"),
])
@pytest.mark.parametrize("command", ["hash", "validate"])
def test_hash_and_validate_bad_input_exit_2_with_a_message(capsys, tmp_path, content, message, command):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = run(capsys, command, path)
    if command == "validate" and message == "/n: integer":  # JSON validate reads; hash cannot canonicalise it
        assert code == 1 and "Traceback" not in err + out
        return
    assert code == 2 and message in err and "Traceback" not in err


def test_hash_missing_file(capsys, tmp_path):
    code, _, err = run(capsys, "hash", tmp_path / "absent.json")
    assert code == 2 and "cannot read" in err


# ---------------------------------------------------------------- sign and verify


def test_generated_key_file_is_private_and_well_formed(key_pair):
    key, records = key_pair
    assert (key.stat().st_mode & 0o777) == 0o600
    data = json.loads(key.read_text())
    assert data["kid"] == "did:web:me.test#k1" and data["alg"] == "EdDSA" and "privateKey" in data
    record = json.loads(records.read_text())[0]
    assert record["validFrom"] == "2026-01-01T00:00:00Z" and record["actor"] == "me.test"
    assert "privateKey" not in record


def test_generate_key_refuses_to_overwrite(capsys, key_pair):
    key, _ = key_pair
    code, _, err = run(capsys, "sign", "--generate-key", key, "--kid", "x")
    assert code == 2 and "cannot create" in err


def test_sign_then_verify(capsys, doc_file, key_pair, tmp_path):
    key, records = key_pair
    out_file = tmp_path / "signed.json"
    code, _, err = run(capsys, "sign", doc_file, "--key", key, "--signed-at", "2026-04-01T10:00:00Z", "-o", out_file)
    assert code == 0 and "signed sha256:" in err
    signed = json.loads(out_file.read_text(encoding="utf-8"))
    assert signed["hash"] == document_hash(DOC)
    assert signed["signature"]["kid"] == "did:web:me.test#k1"
    code, out, _ = run(capsys, "verify", out_file, "--keys", records)
    assert code == 0 and out.startswith("ok")
    assert run(capsys, "hash", "--check", out_file)[0] == 0


def test_sign_to_stdout_with_kid_override(capsys, doc_file, key_pair):
    key, _ = key_pair
    code, out, _ = run(capsys, "sign", doc_file, "--key", key, "--kid", "did:web:me.test#other")
    assert code == 0 and json.loads(out)["signature"]["kid"] == "did:web:me.test#other"


def test_verify_failures_exit_1_with_the_reason(capsys, doc_file, key_pair, tmp_path):
    key, records = key_pair
    signed_path = tmp_path / "signed.json"
    run(capsys, "sign", doc_file, "--key", key, "--signed-at", "2026-04-01T10:00:00Z", "-o", signed_path)
    signed = json.loads(signed_path.read_text())

    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps({k: v for k, v in {**signed, "action": "warn"}.items() if k != "hash"}))
    code, out, _ = run(capsys, "verify", tampered, "--keys", records)
    assert code == 1 and out.startswith("FAIL bad_signature")

    wrong_hash = tmp_path / "wrong-hash.json"
    wrong_hash.write_text(json.dumps({**signed, "action": "warn"}))
    code, out, _ = run(capsys, "verify", wrong_hash, "--keys", records)
    assert code == 1 and out.startswith("FAIL hash_mismatch")

    code, out, _ = run(capsys, "verify", signed_path)
    assert code == 1 and "unknown_key" in out and "no --keys" in out

    revoked = tmp_path / "revoked.json"
    record = json.loads(records.read_text())[0]
    revoked.write_text(json.dumps({"keys": [{**record, "revokedAt": "2026-04-01T10:00:00Z"}]}))
    code, out, _ = run(capsys, "verify", signed_path, "--keys", revoked)
    assert code == 1 and out.startswith("FAIL key_revoked")


def test_verify_event_log_and_checkpoint(capsys, spec_dir, tmp_path):
    vector = next(v for v in json.loads((spec_dir / "conformance" / "ledger.json").read_text())
                  if v["id"] == "ledger-checkpoint-valid")
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps(vector["input"]["keys"]))
    log = tmp_path / "log.json"
    log.write_text(json.dumps(vector["input"]["events"]))
    cp = tmp_path / "cp.json"
    cp.write_text(json.dumps(vector["input"]["checkpoint"]))
    code, out, _ = run(capsys, "verify", log, "--keys", keys)
    assert code == 0 and vector["input"]["checkpoint"]["head"] in out
    assert run(capsys, "verify", log, "--keys", keys, "--checkpoint", cp)[0] == 0
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps({"events": vector["input"]["events"][:2], "checkpoint": vector["input"]["checkpoint"]}))
    code, out, _ = run(capsys, "verify", bundle, "--keys", keys)
    assert code == 1 and "head_mismatch" in out


@pytest.mark.parametrize("argv, message", [
    (["sign", "{doc}"], "--key KEYFILE is required"),
    (["sign", "{doc}", "--key", "{missing}"], "cannot read"),
    (["sign", "{doc}", "--key", "{doc}"], "/kid is missing"),
    (["sign", "--generate-key", "{new}"], "needs --kid"),
    (["sign", "--generate-key", "{new}", "--kid", "k", "--valid-from", "now"], "--valid-from"),
    (["verify", "{doc}", "--keys", "{doc}"], "expected a KeyRecord"),
    (["verify", "{missing}"], "cannot read"),
])
def test_bad_usage_exits_2_without_traceback(capsys, doc_file, tmp_path, argv, message):
    values = {"doc": doc_file, "missing": tmp_path / "missing.json", "new": tmp_path / "new.key.json"}
    code, _, err = run(capsys, *[a.format(**values) for a in argv])
    assert code == 2 and message in err and "Traceback" not in err


def test_sign_with_bad_signed_at(capsys, doc_file, key_pair):
    key, _ = key_pair
    code, _, err = run(capsys, "sign", doc_file, "--key", key, "--signed-at", "2026-04-01")
    assert code == 2 and "--signed-at" in err


# ---------------------------------------------------------------- conformance


def test_conformance_on_own_vectors_passes(capsys):
    code, out, _ = run(capsys, "conformance", "--vectors", REPO / "conformance")
    assert code == 0, out
    assert "trust-signature.json" in out and "FAILED" not in out


def test_conformance_default_is_the_package_conformance_dir(capsys, monkeypatch):
    from cookwala_ros import resources
    monkeypatch.setenv("COOKWALA_ROS_SHARE", str(REPO))
    resources.share_dir.cache_clear()
    try:
        code, out, _ = run(capsys, "conformance", "-k", "jcs-number")
    finally:
        resources.share_dir.cache_clear()
    assert code == 0 and "trust-hash.json" in out and "ledger-chains.json" not in out


def test_conformance_reports_failures_and_exits_1(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": "wrong-hash", "kind": "hash", "input": {"a": 1},
                                "expected": {"canonical": '{"a":1}', "hash": "sha256:00"}}]))
    code, out, _ = run(capsys, "conformance", "--vectors", bad)
    assert code == 1
    assert "FAIL" in out and "wrong-hash" in out and "expected:" in out and "got:" in out


def test_conformance_strict_and_missing_paths(capsys, tmp_path):
    prof = tmp_path / "profiles"
    prof.mkdir()
    (prof / "x.json").write_text(json.dumps([{"id": "p", "kind": "made_up", "input": {}, "expected": {}}]))
    code, out, _ = run(capsys, "conformance", "--vectors", tmp_path)
    assert code == 0 and "not implemented (profile)" in out
    assert run(capsys, "conformance", "--vectors", tmp_path, "--strict")[0] == 1
    code, _, err = run(capsys, "conformance", "--vectors", tmp_path / "nope")
    assert code == 2 and "no such vector file" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(capsys, "conformance", "--vectors", empty)[0] == 2
