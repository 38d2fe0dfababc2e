"""Document hashes and signatures (CORE §5, RFC-0012).

- hash: `sha256:` + hex of the RFC 8785 canonical JSON of the document without its top-level
  `hash` and `signature` fields;
- signature: Ed25519 over the canonical JSON of the signing header
  `{alg, hash, kid, kind, signedAt}` (`kind` only when the document has one; `Event` for log
  events, `Checkpoint` for checkpoints), so the key id, algorithm, time and kind cannot be
  changed after signing.

Verification has one path for documents, events and checkpoints, and reports the first
failing check in this order (the reference verifier's order; the vectors pin it):
unsigned, unsigned_time, unknown_key, alg_mismatch, unsupported_alg, invalid_timestamp,
key_not_valid_at_signing_time, key_revoked, bad_signature. `verify_document` checks one
thing more, first: an embedded `hash` that does not match the body is `hash_mismatch`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

from cookwala_ros.core.canonical import CanonicalError, canonical_bytes, canonical_text, sha256_hex
from cookwala_ros.core.keys import (
    SUPPORTED_ALGS,
    InvalidTimestamp,
    KeyStatus,
    SigningKey,
    b64u_encode,
    find_key,
    key_status_at,
    parse_instant,
    verify_ed25519,
)

EXCLUDED_FIELDS = ("hash", "signature")


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Outcome of a check: `reason` is a stable code ("ok" when it passed), `detail` is prose."""

    ok: bool
    reason: str
    detail: str = ""

    def __bool__(self) -> bool:
        return self.ok


OK = Verdict(True, "ok")


def document_body(doc: dict, exclude: Iterable[str] = EXCLUDED_FIELDS) -> dict:
    excluded = set(exclude)
    return {k: v for k, v in doc.items() if k not in excluded}


def document_hash(doc: Any, exclude: Iterable[str] = EXCLUDED_FIELDS) -> str:
    """`sha256:<hex>` of the canonical JSON of `doc` without the excluded top-level fields."""
    body = document_body(doc, exclude) if isinstance(doc, dict) else doc
    return "sha256:" + sha256_hex(canonical_bytes(body))


def signing_header(doc_hash: str, kid: str, alg: str, signed_at: str, kind: Any = None) -> dict:
    """The object a signature covers (RFC-0012)."""
    header = {"alg": alg, "hash": doc_hash, "kid": kid, "signedAt": signed_at}
    if kind:
        header["kind"] = kind
    return header


def signing_input(doc_hash: str, kid: str, alg: str, signed_at: str, kind: Any = None) -> bytes:
    return canonical_bytes(signing_header(doc_hash, kid, alg, signed_at, kind))


def sign_hash(doc_hash: str, key: SigningKey, signed_at: str, kind: Any = None) -> dict:
    """A Signature object over a hash. Ed25519 is deterministic, so equal inputs give equal output."""
    sig = key.sign(signing_input(doc_hash, key.kid, key.alg, signed_at, kind))
    return {"alg": key.alg, "kid": key.kid, "signedAt": signed_at, "sig": b64u_encode(sig)}


def sign_document(doc: dict, key: SigningKey, signed_at: str, kind: Any = None) -> dict:
    """A copy of `doc` with its `hash` and `signature` set (existing ones are replaced)."""
    out = document_body(doc)
    out["hash"] = document_hash(out)
    out["signature"] = sign_hash(out["hash"], key, signed_at, kind if kind is not None else doc.get("kind"))
    return out


def check_signer(signature: Any, keys: Iterable[Any]) -> tuple[dict | None, Verdict]:
    """Find the KeyRecord a signature names and decide whether it may vouch at `signedAt`."""
    if not signature:
        return None, Verdict(False, "unsigned", "no signature")
    if not isinstance(signature, dict):
        return None, Verdict(False, "unsigned", "signature is not an object")
    if not signature.get("signedAt"):
        return None, Verdict(False, "unsigned_time", "signature has no signedAt; revocation cannot be checked")
    kid = signature.get("kid")
    record = find_key(keys, kid)
    if record is None:
        return None, Verdict(False, "unknown_key", f"no trusted key record for kid {kid!r}")
    if record.get("alg") != signature.get("alg"):
        return None, Verdict(False, "alg_mismatch",
                             f"signature alg {signature.get('alg')!r} but key {kid} is {record.get('alg')!r}")
    if signature.get("alg") not in SUPPORTED_ALGS:
        return None, Verdict(False, "unsupported_alg",
                             f"alg {signature.get('alg')!r} is not supported (EdDSA only)")
    try:
        when = parse_instant(signature["signedAt"])
    except InvalidTimestamp as exc:
        return None, Verdict(False, "invalid_timestamp", f"signedAt: {exc}")
    status = key_status_at(record, when)
    if status == KeyStatus.INVALID_TIMESTAMP:
        return None, Verdict(False, status, f"key record {kid} has an unreadable validFrom/validTo/revokedAt")
    if status == KeyStatus.NOT_VALID:
        window = f"{record.get('validFrom')} .. {record.get('validTo') or 'open'}"
        return None, Verdict(False, status, f"signedAt {signature['signedAt']} is outside key {kid} validity {window}")
    if status == KeyStatus.REVOKED:
        return None, Verdict(False, status,
                             f"key {kid} was revoked at {record['revokedAt']}; signedAt {signature['signedAt']}")
    return record, OK


def verify_signature(doc_hash: str, signature: Any, keys: Iterable[Any], kind: Any = None) -> Verdict:
    """The one verification path (RFC-0012) for a signature over `doc_hash`."""
    keys = list(keys)
    record, verdict = check_signer(signature, keys)
    if record is None:
        return verdict
    try:
        message = signing_input(doc_hash, signature["kid"], signature["alg"], signature["signedAt"], kind)
    except CanonicalError as exc:
        return Verdict(False, "bad_signature", f"signing header cannot be canonicalised: {exc}")
    if not verify_ed25519(record["publicKey"], signature.get("sig"), message):
        return Verdict(False, "bad_signature", f"signature does not verify with key {signature['kid']}")
    return Verdict(True, "ok", f"signed by {signature['kid']} at {signature['signedAt']}")


def verify_document(doc: dict, keys: Iterable[Any], check_embedded_hash: bool = True) -> Verdict:
    """Verify a document's signature; with `check_embedded_hash`, an embedded `hash` must match too."""
    try:
        actual = document_hash(doc)
    except CanonicalError as exc:
        return Verdict(False, "not_canonicalisable", str(exc))
    if check_embedded_hash and "hash" in doc and doc["hash"] != actual:
        return Verdict(False, "hash_mismatch", f"embedded hash {doc['hash']} but the body hashes to {actual}")
    return verify_signature(actual, doc.get("signature"), keys, doc.get("kind"))


# ---------------------------------------------------------------- conformance vector handlers


def vector_hash(input: Any) -> dict:
    """kind `hash`: {canonical, hash} of the input document, or {error: code} if JCS refuses it."""
    try:
        body = document_body(input) if isinstance(input, dict) else input
        return {"canonical": canonical_text(body), "hash": document_hash(input)}
    except CanonicalError as exc:
        return {"error": exc.code}


def vector_signature(input: dict) -> dict:
    """kind `signature`: raw Ed25519 from a seed (RFC 8032 form) or verify a document against keys."""
    if "seed" in input:
        key = SigningKey(kid="vector", seed=bytes.fromhex(input["seed"]))
        return {"publicKey": key.public_key, "signatureHex": key.sign(bytes.fromhex(input.get("messageHex", ""))).hex()}
    verdict = verify_document(input["document"], input.get("keys") or [])
    return {"ok": verdict.ok, "reason": verdict.reason}
