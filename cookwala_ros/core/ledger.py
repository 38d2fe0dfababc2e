"""Hash-chained event logs, witnessed checkpoints and fork proofs (CORE §5, Mission profile).

One sequencer per log assigns `seq` (0, 1, 2 ...) and `prev` (`genesis`, then the previous
event's hash), so the chain never forks. Each event's `hash` covers the event without `hash`,
`signature` and `proposedBy` (the actor's own proposal signature, added after hashing: the
reference verifier excludes it too). Event signatures use kind `Event`.

A checkpoint states the head at a `seq`; its hash covers it without `signature` and
`witnesses`. The sequencer signs it and at least one witness whose key is not the
sequencer's counter-signs it (kind `Checkpoint`). "Not the sequencer's key" means a
different kid *and* different key material: the same public key registered under an alias
kid is still the sequencer (stricter than the reference, which compares kids only).

Two checkpoints of one log at the same seq with different heads prove a fork (or a rewrite).
With trusted keys at hand, only checkpoints whose sequencer signature verifies count as
evidence; without keys the check is structural, as in the reference.

Reasons (stable codes): seq_gap_at_<i>, broken_link_at_<i>, hash_mismatch_at_<i>,
log_mismatch_at_<i>, <signature reason>_at_<i>, head_mismatch, sequencer_<signature reason>,
witness_<signature reason>, no_independent_witness, fork_detected.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Sequence

from cookwala_ros.core.canonical import CanonicalError
from cookwala_ros.core.keys import SigningKey, find_key
from cookwala_ros.core.trust import Verdict, document_hash, sign_hash, verify_signature

GENESIS = "genesis"
EVENT_KIND = "Event"
CHECKPOINT_KIND = "Checkpoint"
EVENT_UNHASHED = ("hash", "signature", "proposedBy")
CHECKPOINT_UNHASHED = ("signature", "witnesses")


@dataclasses.dataclass(frozen=True)
class ChainVerdict(Verdict):
    head: str | None = None


def _log_id(doc: dict) -> Any:
    return doc.get("mission", doc.get("log"))


def event_hash(event: dict) -> str:
    return document_hash(event, EVENT_UNHASHED)


def checkpoint_hash(checkpoint: dict) -> str:
    return document_hash(checkpoint, CHECKPOINT_UNHASHED)


def verify_chain(events: Sequence[Any], keys: Iterable[Any] | None = None) -> ChainVerdict:
    """Check seq order, prev links, hashes, one log id and (with keys) every event signature.

    Unsigned events are accepted (a witnessed checkpoint still pins them); a signed event's
    signature must verify when keys are given.
    """
    keys = None if keys is None else list(keys)
    prev = GENESIS
    log = _log_id(events[0]) if events and isinstance(events[0], dict) else None
    for i, event in enumerate(events):
        if not isinstance(event, dict) or event.get("seq") != i or isinstance(event.get("seq"), bool):
            return ChainVerdict(False, f"seq_gap_at_{i}", f"event {i} does not carry seq {i}")
        if event.get("prev") != prev:
            return ChainVerdict(False, f"broken_link_at_{i}", f"event {i} prev is not {prev}")
        try:
            actual = event_hash(event)
        except CanonicalError as exc:
            return ChainVerdict(False, f"hash_mismatch_at_{i}", f"event {i} cannot be canonicalised: {exc}")
        if event.get("hash") != actual:
            return ChainVerdict(False, f"hash_mismatch_at_{i}", f"event {i} hashes to {actual}, not {event.get('hash')}")
        if _log_id(event) != log:
            return ChainVerdict(False, f"log_mismatch_at_{i}", f"event {i} belongs to log {_log_id(event)!r}, not {log!r}")
        if keys is not None and event.get("signature"):
            verdict = verify_signature(event["hash"], event["signature"], keys, EVENT_KIND)
            if not verdict.ok:
                return ChainVerdict(False, f"{verdict.reason}_at_{i}", f"event {i}: {verdict.detail}")
        prev = event["hash"]
    return ChainVerdict(True, "ok", f"{len(events)} events", head=prev)


def verify_checkpoint(checkpoint: dict, events: Sequence[dict], keys: Iterable[Any]) -> Verdict:
    """A checkpoint is valid when its head is the event at its seq, the sequencer's and every
    witness's signature verify over the checkpoint hash, and one witness key is independent."""
    keys = list(keys)
    seq = checkpoint.get("seq")
    if (not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq < len(events)
            or events[seq].get("hash") != checkpoint.get("head")):
        return Verdict(False, "head_mismatch", f"checkpoint head is not the hash of event {seq}")
    try:
        cp_hash = checkpoint_hash(checkpoint)
    except CanonicalError as exc:
        return Verdict(False, "sequencer_bad_signature", f"checkpoint cannot be canonicalised: {exc}")
    verdict = verify_signature(cp_hash, checkpoint.get("signature"), keys, CHECKPOINT_KIND)
    if not verdict.ok:
        return Verdict(False, "sequencer_" + verdict.reason, f"sequencer: {verdict.detail}")
    sequencer_kid = checkpoint["signature"]["kid"]
    sequencer_key = find_key(keys, sequencer_kid)["publicKey"]
    independent = False
    for n, witness in enumerate(checkpoint.get("witnesses") or []):
        signature = witness.get("signature") if isinstance(witness, dict) else None
        verdict = verify_signature(cp_hash, signature, keys, CHECKPOINT_KIND)
        if not verdict.ok:
            return Verdict(False, "witness_" + verdict.reason, f"witness {n}: {verdict.detail}")
        witness_key = find_key(keys, signature["kid"])["publicKey"]
        if signature["kid"] != sequencer_kid and witness_key != sequencer_key:
            independent = True
    if not independent:
        return Verdict(False, "no_independent_witness", "no witness signed with a key other than the sequencer's")
    return Verdict(True, "ok", f"checkpoint at seq {seq} witnessed")


def detect_fork(checkpoints: Sequence[dict], keys: Iterable[Any] | None = None) -> dict:
    """{fork, reason}: two checkpoints of one log at one seq with different heads prove a fork.

    With `keys`, a checkpoint whose sequencer signature fails is not evidence and is reported
    (`sequencer_<reason>_at_<i>`), since anyone can write an unsigned "checkpoint".
    """
    if keys is not None:
        keys = list(keys)
        for i, cp in enumerate(checkpoints):
            try:
                verdict = verify_signature(checkpoint_hash(cp), cp.get("signature"), keys, CHECKPOINT_KIND)
            except CanonicalError:
                verdict = Verdict(False, "bad_signature")
            if not verdict.ok:
                return {"fork": False, "reason": f"sequencer_{verdict.reason}_at_{i}"}
    for i, a in enumerate(checkpoints):
        for b in checkpoints[i + 1:]:
            if _log_id(a) == _log_id(b) and a.get("seq") == b.get("seq") and a.get("head") != b.get("head"):
                return {"fork": True, "reason": "fork_detected"}
    return {"fork": False, "reason": "ok"}


# ---------------------------------------------------------------- building logs (sequencer side)


def append_event(events: Sequence[dict], event: dict, key: SigningKey | None = None) -> dict:
    """The next sequenced event: seq and prev assigned, hash set, signed (signedAt = `at`) if a key is given."""
    out = {k: v for k, v in event.items() if k not in EVENT_UNHASHED}
    out["seq"] = len(events)
    out["prev"] = events[-1]["hash"] if events else GENESIS
    out["hash"] = event_hash(out)
    if key is not None:
        out["signature"] = sign_hash(out["hash"], key, out["at"], EVENT_KIND)
    return out


def make_checkpoint(events: Sequence[dict], seq: int, sequencer: str, key: SigningKey, at: str) -> dict:
    """A checkpoint of `events` at `seq`, signed by the sequencer's key."""
    cp = {"mission": _log_id(events[seq]), "seq": seq, "head": events[seq]["hash"], "at": at, "sequencer": sequencer}
    cp["signature"] = sign_hash(checkpoint_hash(cp), key, at, CHECKPOINT_KIND)
    return cp


def add_witness(checkpoint: dict, actor: str, key: SigningKey, at: str) -> dict:
    """A copy of the checkpoint counter-signed by a witness."""
    signature = sign_hash(checkpoint_hash(checkpoint), key, at, CHECKPOINT_KIND)
    out = dict(checkpoint)
    out["witnesses"] = list(checkpoint.get("witnesses") or []) + [{"actor": actor, "at": at, "signature": signature}]
    return out


def payload_matches(event: dict, payload: Any) -> bool:
    """Hash-only mode: does an off-log payload match the event's `payloadDigest`?"""
    try:
        return document_hash(payload, ()) == event.get("payloadDigest")
    except CanonicalError:
        return False


# ---------------------------------------------------------------- conformance vector handler


def vector_ledger(input: dict) -> dict:
    """kind `ledger`: a chain ({ok, reason, head}), a chain + checkpoint ({ok, reason}), or
    several checkpoints ({fork, reason})."""
    if "checkpoints" in input:
        return detect_fork(input["checkpoints"], input.get("keys"))
    keys = input.get("keys")
    chain = verify_chain(input["events"], keys)
    if "checkpoint" in input:
        if not chain.ok:
            return {"ok": False, "reason": chain.reason}
        verdict = verify_checkpoint(input["checkpoint"], input["events"], keys or [])
        return {"ok": verdict.ok, "reason": verdict.reason}
    return {"ok": chain.ok, "reason": chain.reason, **({"head": chain.head} if chain.ok else {})}
