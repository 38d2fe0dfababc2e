"""Selective disclosure digests: sha256(JCS([salt, value]))."""

from __future__ import annotations

import hashlib

from cookwala_ros.core.disclosure import (
    check_disclosure,
    disclosure_digest,
    make_disclosure,
    vector_disclosure,
    verify_disclosure,
)


def test_digest_is_sha256_of_the_canonical_pair():
    expected = "sha256:" + hashlib.sha256(b'["salt-0123456789abcdefgh",{"a":1,"b":2}]').hexdigest()
    assert disclosure_digest("salt-0123456789abcdefgh", {"b": 2, "a": 1}) == expected


def test_made_disclosures_verify_and_use_fresh_128_bit_salts():
    first, second = make_disclosure({"diet": "halal"}), make_disclosure({"diet": "halal"})
    assert verify_disclosure(first) and verify_disclosure(second)
    assert first["salt"] != second["salt"] and len(first["salt"]) == 22
    assert first["digest"] != second["digest"]


def test_mismatches_and_malformed_copies():
    good = make_disclosure("low_sodium", salt="s" * 22)
    assert check_disclosure(good) == (True, "ok")
    assert check_disclosure({**good, "value": "none"}) == (False, "digest_mismatch")
    assert check_disclosure({**good, "salt": "t" * 22}) == (False, "digest_mismatch")
    assert check_disclosure({"digest": good["digest"], "value": "low_sodium"}) == (False, "missing_salt")
    assert check_disclosure({"digest": good["digest"], "salt": good["salt"]}) == (False, "missing_value")
    assert check_disclosure({**good, "salt": 5}) == (False, "bad_salt")
    assert check_disclosure({"salt": "x", "value": 1}) == (False, "bad_digest")
    assert check_disclosure("digest") == (False, "bad_digest")
    assert check_disclosure({**good, "value": 2**60}) == (False, "digest_mismatch")


def test_vector_handler_output_shape():
    good = make_disclosure([1, 2])
    assert vector_disclosure(good) == {"ok": True}
    assert vector_disclosure({**good, "value": [2, 1]}) == {"ok": False}
