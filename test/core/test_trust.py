"""Document hashes, the RFC-0012 signing header, key records and signature verification."""

from __future__ import annotations

import copy
import json

import pytest

from cookwala_ros.core.keys import (
    InvalidTimestamp,
    KeyFileError,
    SigningKey,
    b64u_decode,
    key_status_at,
    parse_instant,
    parse_key_file,
    parse_key_records,
)
from cookwala_ros.core.trust import (
    document_hash,
    sign_document,
    sign_hash,
    signing_header,
    signing_input,
    vector_hash,
    vector_signature,
    verify_document,
    verify_signature,
)

SIGNER = SigningKey(kid="did:web:test.example#k1", seed=bytes(range(32)), actor="test")
OTHER = SigningKey(kid="did:web:other.example#k1", seed=bytes(range(1, 33)))
RECORD = SIGNER.key_record("2026-01-01T00:00:00Z")
DOC = {"kind": "Recall", "id": "rc-1", "issuedAt": "2026-04-01T00:00:00Z", "action": "block"}
AT = "2026-04-01T10:00:00Z"


def signed(doc=DOC, key=SIGNER, at=AT):
    return sign_document(doc, key, at)


# ---------------------------------------------------------------- hash


def test_hash_leaves_out_hash_and_signature_at_top_level_only():
    doc = {"id": "r1", "revision": 3, "hash": "sha256:00", "signature": {"sig": "AA"}}
    assert document_hash(doc) == document_hash({"id": "r1", "revision": 3})
    nested = {"id": "r1", "part": {"hash": "kept"}}
    assert document_hash(nested) != document_hash({"id": "r1", "part": {}})


def test_hash_ignores_key_order_and_number_spelling():
    assert document_hash({"a": 1.0, "b": [1, 2]}) == document_hash({"b": [1, 2], "a": 1})
    assert document_hash({"a": [1, 2]}) != document_hash({"a": [2, 1]})


def test_hash_vector_reports_jcs_refusals_as_codes():
    assert vector_hash({"n": 2**53}) == {"error": "integer_out_of_range"}
    assert vector_hash({"s": "\udfff"}) == {"error": "invalid_unicode"}
    assert vector_hash({"hash": "x", "a": 1}) == {"canonical": '{"a":1}', "hash": document_hash({"a": 1})}


@pytest.mark.parametrize("name", ["shakshuka", "lentil-soup", "kofta-oven"])
def test_published_recipes_hash_to_their_embedded_hash(spec_dir, name):
    recipe = json.loads((spec_dir / "examples" / f"{name}.cookwala.json").read_text(encoding="utf-8"))
    assert recipe["hash"].startswith("sha256:")
    assert document_hash(recipe) == recipe["hash"]
    recipe["x-test-edit"] = True
    assert document_hash(recipe) != recipe["hash"]


# ---------------------------------------------------------------- signing


def test_signing_header_includes_kind_only_when_there_is_one():
    assert signing_header("sha256:ab", "k", "EdDSA", AT) == {"alg": "EdDSA", "hash": "sha256:ab", "kid": "k", "signedAt": AT}
    assert signing_header("sha256:ab", "k", "EdDSA", AT, "Event")["kind"] == "Event"
    assert signing_input("sha256:ab", "k", "EdDSA", AT, "Event") == (
        b'{"alg":"EdDSA","hash":"sha256:ab","kid":"k","kind":"Event","signedAt":"2026-04-01T10:00:00Z"}')


def test_sign_document_sets_hash_and_signature_and_is_deterministic():
    doc = signed()
    assert doc["hash"] == document_hash(DOC)
    assert set(doc["signature"]) == {"alg", "kid", "signedAt", "sig"}
    assert doc["signature"]["kid"] == SIGNER.kid and doc["signature"]["signedAt"] == AT
    assert signed() == doc
    assert len(b64u_decode(doc["signature"]["sig"])) == 64


def test_sign_document_replaces_a_stale_hash_and_signature():
    stale = {**DOC, "hash": "sha256:" + "0" * 64, "signature": {"sig": "x"}}
    assert signed(stale) == signed()


def test_signed_document_verifies():
    verdict = verify_document(signed(), [RECORD])
    assert verdict.ok and verdict.reason == "ok" and SIGNER.kid in verdict.detail


def test_any_covered_change_breaks_the_signature():
    for field, value in [("action", "warn"), ("kind", "Recipe")]:
        doc = signed()
        doc[field] = value
        del doc["hash"]
        assert verify_document(doc, [RECORD]).reason == "bad_signature", field
    doc = signed()
    doc["signature"]["signedAt"] = "2026-04-01T09:00:00Z"
    assert verify_document(doc, [RECORD]).reason == "bad_signature"


def test_embedded_hash_mismatch_is_reported_before_the_signature():
    doc = signed()
    doc["hash"] = "sha256:" + "1" * 64
    assert verify_document(doc, [RECORD]).reason == "hash_mismatch"
    assert verify_document(doc, [RECORD], check_embedded_hash=False).reason == "ok"


def test_signature_over_a_hash_uses_the_kind_given():
    sig = sign_hash("sha256:ab", SIGNER, AT, "Event")
    assert verify_signature("sha256:ab", sig, [RECORD], "Event").ok
    assert verify_signature("sha256:ab", sig, [RECORD], "Checkpoint").reason == "bad_signature"
    assert verify_signature("sha256:ab", sig, [RECORD], None).reason == "bad_signature"


@pytest.mark.parametrize("mutate, keys, reason", [
    (lambda s: None, [RECORD], "unsigned"),
    (lambda s: "text", [RECORD], "unsigned"),
    (lambda s: {**s, "signedAt": None}, [RECORD], "unsigned_time"),
    (lambda s: s, [], "unknown_key"),
    (lambda s: {**s, "kid": OTHER.kid}, [RECORD, OTHER.key_record("2026-01-01T00:00:00Z")], "bad_signature"),
    (lambda s: {**s, "alg": "ES256"}, [RECORD], "alg_mismatch"),
    (lambda s: {**s, "alg": "ES256"}, [{**RECORD, "alg": "ES256"}], "unsupported_alg"),
    (lambda s: {**s, "signedAt": "2026-04-01"}, [RECORD], "invalid_timestamp"),
    (lambda s: s, [{**RECORD, "validFrom": "soon"}], "invalid_timestamp"),
    (lambda s: s, [{**RECORD, "validFrom": "2026-05-01T00:00:00Z"}], "key_not_valid_at_signing_time"),
    (lambda s: s, [{**RECORD, "validTo": "2026-04-01T09:59:59Z"}], "key_not_valid_at_signing_time"),
    (lambda s: s, [{**RECORD, "revokedAt": AT}], "key_revoked"),
    (lambda s: s, [{**RECORD, "revokedAt": "2026-04-01T10:00:01Z"}], "ok"),
    (lambda s: s, [{**RECORD, "validTo": AT}], "ok"),
    (lambda s: {**s, "sig": "%%%"}, [RECORD], "bad_signature"),
    (lambda s: s, [{**RECORD, "publicKey": "AAAA"}], "bad_signature"),
])
def test_verification_reasons(mutate, keys, reason):
    doc = signed()
    doc["signature"] = mutate(copy.deepcopy(doc["signature"]))
    assert verify_document(doc, keys).reason == reason


def test_reason_order_follows_the_reference_verifier():
    # unknown alg on an unknown key: the key lookup comes first
    doc = signed()
    doc["signature"]["alg"] = "RS256"
    assert verify_document(doc, []).reason == "unknown_key"
    # window is checked before revocation
    record = {**RECORD, "validTo": "2026-02-01T00:00:00Z", "revokedAt": "2026-03-01T00:00:00Z"}
    assert verify_document(signed(), [record]).reason == "key_not_valid_at_signing_time"
    # a missing signedAt is reported even when the kid is unknown
    doc = signed()
    del doc["signature"]["signedAt"]
    assert verify_document(doc, []).reason == "unsigned_time"


def test_signature_vector_handler_shapes():
    out = vector_signature({"seed": "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "messageHex": ""})
    assert out["publicKey"] == "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
    assert out["signatureHex"].startswith("e5564300c360ac72")
    assert vector_signature({"document": signed(), "keys": [RECORD]}) == {"ok": True, "reason": "ok"}


# ---------------------------------------------------------------- keys and time


def test_instants_compare_across_offsets_and_fractions():
    assert parse_instant("2026-05-01T14:00:00+02:00") == parse_instant("2026-05-01T12:00:00Z")
    assert parse_instant("2026-05-01T07:00:00-05:00") == parse_instant("2026-05-01t12:00:00z")
    assert parse_instant("2026-05-01T12:00:00.000000001Z") > parse_instant("2026-05-01T12:00:00Z")
    assert parse_instant("2026-05-01T12:00:00.100Z") == parse_instant("2026-05-01T12:00:00.1Z")
    assert parse_instant("2026-05-01 12:00:00Z") == parse_instant("2026-05-01T12:00:00Z")


@pytest.mark.parametrize("text", [
    "2026-05-01", "2026-05-01T12:00:00", "2026-02-30T00:00:00Z", "2026-05-01T24:00:00Z",
    "2026-05-01T12:00:00+25:00", "tomorrow", 1714564800, None,
])
def test_unreadable_instants_are_refused(text):
    with pytest.raises(InvalidTimestamp):
        parse_instant(text)


def test_key_status_window_edges_are_inclusive_and_revocation_is_immediate():
    record = {"validFrom": "2026-01-01T00:00:00Z", "validTo": "2026-12-31T23:59:59Z", "revokedAt": "2026-06-01T00:00:00Z"}
    at = parse_instant
    assert key_status_at(record, at("2026-01-01T00:00:00Z")) == "ok"
    assert key_status_at(record, at("2025-12-31T23:59:59.999Z")) == "key_not_valid_at_signing_time"
    assert key_status_at(record, at("2026-05-31T23:59:59Z")) == "ok"
    assert key_status_at(record, at("2026-06-01T00:00:00Z")) == "key_revoked"
    assert key_status_at({**record, "revokedAt": None}, at("2026-12-31T23:59:59Z")) == "ok"
    assert key_status_at({**record, "revokedAt": None}, at("2027-01-01T00:00:00Z")) == "key_not_valid_at_signing_time"


def test_signing_key_file_round_trip_and_record():
    data = SIGNER.to_json()
    assert data["alg"] == "EdDSA" and len(b64u_decode(data["privateKey"])) == 32
    again = SigningKey.from_json(data)
    assert again.public_key == SIGNER.public_key and again.kid == SIGNER.kid
    record = SIGNER.key_record("2026-01-01T00:00:00Z")
    assert record == {"kid": SIGNER.kid, "alg": "EdDSA", "publicKey": SIGNER.public_key,
                      "validFrom": "2026-01-01T00:00:00Z", "actor": "test"}
    assert SigningKey.generate("k").seed != SigningKey.generate("k").seed


@pytest.mark.parametrize("data, message", [
    ([], "expected an object"),
    ({"kid": "k"}, "/privateKey is missing"),
    ({"privateKey": "AAAA"}, "/kid is missing"),
    ({"kid": "k", "privateKey": "!!"}, "/privateKey is not base64url"),
    ({"kid": "k", "privateKey": "AAAA"}, "32-byte"),
    ({"kid": "k", "alg": "ES256", "privateKey": "AAAA"}, "/alg 'ES256' is not supported"),
])
def test_bad_key_files_name_the_field(data, message):
    with pytest.raises(KeyFileError, match=message):
        SigningKey.from_json(data)


def test_key_record_sources():
    assert parse_key_records(RECORD) == [RECORD]
    assert parse_key_records({"keys": [RECORD]}) == [RECORD]
    assert parse_key_records([RECORD, RECORD]) == [RECORD, RECORD]
    with pytest.raises(KeyFileError, match=r"/0/publicKey"):
        parse_key_records([{"kid": "k", "alg": "EdDSA", "validFrom": AT}], "keys.json")
    with pytest.raises(KeyFileError, match="expected a KeyRecord"):
        parse_key_records("nope")


@pytest.mark.parametrize("raw, message", [
    (b"[" * 2000 + b"]" * 2000, "nested more than 64 levels deep"),
    (b"- kid: caf\xe9\n", "not UTF-8"),
    (b'"nope"', "expected a KeyRecord"),
    (b"42", "expected a KeyRecord"),
    (b"keys: &k [*k]\n", "contain itself"),
])
def test_hostile_key_files_are_a_key_file_error_naming_the_file(raw, message):
    """Issue 15: what a trusted-keys file gives at start-up, never a RecursionError or UnicodeDecodeError."""
    with pytest.raises(KeyFileError) as caught:
        parse_key_file(raw, "keys.yaml")
    assert str(caught.value).startswith("keys.yaml: ") and message in str(caught.value)
    assert parse_key_file(json.dumps([RECORD]).encode(), "keys.json") == [RECORD]
