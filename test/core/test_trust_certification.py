"""Certifications (RFC-0010): signature by the authority's own key, subject, status and window."""

from __future__ import annotations

import pytest

from cookwala_ros.core.certification import current_certifications, key_owner, verify_certification
from cookwala_ros.core.keys import SigningKey
from cookwala_ros.core.trust import sign_document

AUTH = "did:web:board.test"
BOARD = SigningKey(kid=AUTH + "#k1", seed=b"\x05" * 32, actor=AUTH)
SHOP = SigningKey(kid="did:web:shop.test#k1", seed=b"\x06" * 32, actor="did:web:shop.test")
KEYS = [BOARD.key_record("2025-01-01T00:00:00Z"), SHOP.key_record("2025-01-01T00:00:00Z")]
SUBJECT = "sha256:" + "5" * 64
NOW = "2026-06-01T00:00:00Z"


def cert(id="c1", key=BOARD, scheme="halal", issued="2026-01-01T00:00:00Z", **fields):
    body = {"cookwala": "0.2.0", "kind": "Certification", "id": id, "scheme": scheme,
            "subject": {"kind": "recipe", "ref": "cw:x:y", "hash": SUBJECT}, "authority": {"id": AUTH},
            "status": "valid", "issuedAt": issued, "validFrom": "2026-01-01T00:00:00Z",
            "validUntil": "2026-12-31T00:00:00Z", **fields}
    return sign_document(body, key, issued)


def reason(c, now=NOW, subject=SUBJECT, keys=KEYS):
    return verify_certification(c, keys, now, subject).reason


def test_key_owner_is_the_actor_or_the_did_of_the_kid():
    assert key_owner({"kid": "did:web:a.test#k", "actor": "org:a"}) == "org:a"
    assert key_owner({"kid": "did:web:a.test#k"}) == "did:web:a.test"


@pytest.mark.parametrize("c, now, subject, expected", [
    (cert(), NOW, SUBJECT, "ok"),
    (cert(), NOW, None, "ok"),
    (cert(key=SHOP), NOW, SUBJECT, "authority_mismatch"),
    (cert(), NOW, "sha256:" + "6" * 64, "subject_mismatch"),
    (cert(status="revoked"), NOW, SUBJECT, "revoked"),
    (cert(status="revoked", revokedAt="2026-07-01T00:00:00Z"), NOW, SUBJECT, "ok"),
    (cert(status="revoked", revokedAt=NOW), NOW, SUBJECT, "revoked"),
    (cert(status="suspended"), NOW, SUBJECT, "suspended"),
    (cert(), "2025-12-31T23:59:59Z", SUBJECT, "not_yet_valid"),
    (cert(), "2026-12-31T00:00:00Z", SUBJECT, "ok"),
    (cert(), "2026-12-31T00:00:00.5Z", SUBJECT, "expired"),
    (cert(validUntil="soon"), NOW, SUBJECT, "invalid_timestamp"),
    (cert(), "now", SUBJECT, "invalid_timestamp"),
    ({"kind": "Recall"}, NOW, SUBJECT, "not_a_certification"),
])
def test_certification_reasons(c, now, subject, expected):
    assert reason(c, now, subject) == expected


def test_signature_failures_come_from_the_shared_verifier():
    tampered = {**cert(), "scheme": "kosher"}
    assert reason(tampered) == "hash_mismatch"
    assert reason(cert(), keys=[]) == "unknown_key"


def test_newest_verifying_certification_of_an_authority_and_scheme_wins():
    old, new = cert("old"), cert("new", issued="2026-03-01T00:00:00Z")
    other_scheme = cert("kosher", scheme="kosher")
    bad = cert("bad", key=SHOP)
    result = current_certifications([new, bad, old, other_scheme], KEYS, NOW, SUBJECT)
    assert result == {"current": ["kosher", "new"], "rejected": {"bad": "authority_mismatch", "old": "superseded"}}
    expired_newer = cert("newer", issued="2026-03-01T00:00:00Z", validUntil="2026-04-01T00:00:00Z")
    assert current_certifications([old, expired_newer], KEYS, NOW)["current"] == ["old"]
    assert current_certifications([], KEYS, NOW) == {"current": [], "rejected": {}}
