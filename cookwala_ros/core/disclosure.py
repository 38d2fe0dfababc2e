"""Selective disclosure (CORE §5): a signed document keeps only `sha256(JCS([salt, value]))`.

The holder reveals salt and value to the parties allowed to see them; they recompute the
digest and compare, while the document's signature (which covers only the digest) still
verifies. A disclosed copy whose salt is not a string, or that lacks salt or value, never
matches: the salt is what keeps a guessable value (a diet, a yes/no) from being brute-forced.
"""

from __future__ import annotations

import os
from typing import Any

from cookwala_ros.core.canonical import CanonicalError, canonical_bytes, sha256_hex
from cookwala_ros.core.keys import b64u_encode

SALT_BYTES = 16  # 128 bits, 22 base64url characters (the Disclosure schema minimum)


def disclosure_digest(salt: str, value: Any) -> str:
    return "sha256:" + sha256_hex(canonical_bytes([salt, value]))


def make_disclosure(value: Any, salt: str | None = None) -> dict:
    """A disclosed copy {digest, salt, value}; store only {"digest": ...} in the signed document."""
    salt = salt if salt is not None else b64u_encode(os.urandom(SALT_BYTES))
    return {"digest": disclosure_digest(salt, value), "salt": salt, "value": value}


def check_disclosure(disclosed: Any) -> tuple[bool, str]:
    """(matches, reason) for a disclosed copy: ok, missing_salt, missing_value, bad_salt,
    bad_digest, digest_mismatch."""
    if not isinstance(disclosed, dict) or not isinstance(disclosed.get("digest"), str):
        return False, "bad_digest"
    if "salt" not in disclosed:
        return False, "missing_salt"
    if "value" not in disclosed:
        return False, "missing_value"
    if not isinstance(disclosed["salt"], str):
        return False, "bad_salt"
    try:
        digest = disclosure_digest(disclosed["salt"], disclosed["value"])
    except CanonicalError:
        return False, "digest_mismatch"
    return (True, "ok") if digest == disclosed["digest"] else (False, "digest_mismatch")


def verify_disclosure(disclosed: Any) -> bool:
    return check_disclosure(disclosed)[0]


def vector_disclosure(input: Any) -> dict:
    """kind `disclosure`: {ok} for a disclosed copy {digest, salt, value}."""
    return {"ok": verify_disclosure(input)}
