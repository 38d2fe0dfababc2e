"""Certifications (RFC-0010 profile): detached, signed attestations that a subject meets a scheme.

A Certification verifies when, in this order:
1. it is a `Certification` document;
2. its hash and signature verify against the trusted KeyRecords (trust.verify_document);
3. the signing key belongs to the certifying authority: the KeyRecord's `actor` (or, without
   one, the kid before `#`) is `authority.id`. Without this any trusted key, a grocer's say,
   could issue a halal certificate in the authority's name (stricter than the reference,
   which does not compare them; the published vectors agree with both);
4. its subject hash is the document the verifier holds (when one is given);
5. at `now`: not revoked (status `revoked` from `revokedAt`, or at once without it), not
   suspended, inside `validFrom` .. `validUntil` (both inclusive).
Unreadable dates fail closed with `invalid_timestamp`.

Several authorities may certify one subject and scheme, and each counts; within one authority
and scheme the newest verifying document (by `issuedAt`) supersedes the earlier ones.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from cookwala_ros.core.keys import InvalidTimestamp, find_key, now_rfc3339, parse_instant
from cookwala_ros.core.trust import Verdict, verify_document

OK = Verdict(True, "ok")


def key_owner(record: dict) -> Any:
    return record.get("actor") or str(record.get("kid", "")).split("#", 1)[0]


def verify_certification(cert: Any, keys: Iterable[Any], now: str, subject_hash: str | None = None) -> Verdict:
    if not isinstance(cert, dict) or cert.get("kind") != "Certification":
        return Verdict(False, "not_a_certification", "kind is not Certification")
    keys = list(keys)
    verdict = verify_document(cert, keys)
    if not verdict.ok:
        return verdict
    authority = cert["authority"].get("id") if isinstance(cert.get("authority"), dict) else None
    owner = key_owner(find_key(keys, cert["signature"]["kid"]))
    if owner != authority:
        return Verdict(False, "authority_mismatch", f"signed by a key of {owner!r}, not of the authority {authority!r}")
    subject = cert.get("subject") if isinstance(cert.get("subject"), dict) else {}
    if subject_hash and subject.get("hash") != subject_hash:
        return Verdict(False, "subject_mismatch", f"certifies {subject.get('hash')}, not {subject_hash}")
    try:
        t = parse_instant(now)
        parse_instant(cert.get("issuedAt"))
        status = cert.get("status")
        if status == "revoked" and (not cert.get("revokedAt") or t >= parse_instant(cert["revokedAt"])):
            return Verdict(False, "revoked", f"revoked {cert.get('revokedAt') or ''}".strip())
        if status == "suspended":
            return Verdict(False, "suspended", "suspended by the authority")
        if cert.get("validFrom") and t < parse_instant(cert["validFrom"]):
            return Verdict(False, "not_yet_valid", f"valid from {cert['validFrom']}")
        if cert.get("validUntil") and t > parse_instant(cert["validUntil"]):
            return Verdict(False, "expired", f"expired {cert['validUntil']}")
    except InvalidTimestamp as exc:
        return Verdict(False, "invalid_timestamp", str(exc))
    return OK


def current_certifications(certs: Sequence[dict], keys: Iterable[Any], now: str,
                           subject_hash: str | None = None) -> dict:
    """{"current": [ids, sorted], "rejected": {id: reason}} for a set of certifications."""
    keys = list(keys)
    rejected: dict[str, str] = {}
    groups: dict[tuple[Any, Any], list[dict]] = {}
    for cert in certs:
        verdict = verify_certification(cert, keys, now, subject_hash)
        if not verdict.ok:
            rejected[cert.get("id") if isinstance(cert, dict) else "?"] = verdict.reason
            continue
        groups.setdefault((cert["authority"]["id"], cert.get("scheme")), []).append(cert)
    current = []
    for members in groups.values():
        members.sort(key=lambda c: (parse_instant(c["issuedAt"]), str(c.get("id"))))
        current.append(members[-1]["id"])
        for older in members[:-1]:
            rejected[older["id"]] = "superseded"
    return {"current": sorted(current), "rejected": rejected}


def vector_certification(input: dict) -> dict:
    """kind `certification`: {ok, reason} for one certification."""
    verdict = verify_certification(input["certification"], input.get("keys") or [],
                                   input.get("now") or now_rfc3339(), input.get("subjectHash"))
    return {"ok": verdict.ok, "reason": verdict.reason}


def vector_certification_set(input: dict) -> dict:
    """kind `certification_set`: which certifications currently hold."""
    return current_certifications(input["certifications"], input.get("keys") or [],
                                  input.get("now") or now_rfc3339(), input.get("subjectHash"))
