"""Hash-chained event logs, witnessed checkpoints and fork proofs."""

from __future__ import annotations

import copy

import pytest

from cookwala_ros.core.keys import SigningKey
from cookwala_ros.core.ledger import (
    GENESIS,
    add_witness,
    append_event,
    checkpoint_hash,
    detect_fork,
    event_hash,
    make_checkpoint,
    payload_matches,
    vector_ledger,
    verify_chain,
    verify_checkpoint,
)
from cookwala_ros.core.trust import document_hash

HUB = SigningKey(kid="did:web:hub.test#seq", seed=b"\x01" * 32)
WITNESS = SigningKey(kid="did:web:witness.test#w", seed=b"\x02" * 32)
HUB_ALIAS = SigningKey(kid="did:web:hub.test#alias", seed=b"\x01" * 32)
KEYS = [k.key_record("2026-01-01T00:00:00Z") for k in (HUB, WITNESS, HUB_ALIAS)]


def build(n=3, mission="m-1", key=HUB):
    events = []
    for i in range(n):
        events.append(append_event(events, {"mission": mission, "at": f"2026-10-04T17:0{i}:00Z",
                                            "actor": "hub", "type": "progress", "payload": {"step": i}}, key))
    return events


def witnessed(events, seq=None):
    seq = len(events) - 1 if seq is None else seq
    cp = make_checkpoint(events, seq, "hub", HUB, "2026-10-04T18:00:00Z")
    return add_witness(cp, "witness", WITNESS, "2026-10-04T18:01:00Z")


def test_append_event_assigns_seq_prev_hash_and_event_signature():
    events = build(3)
    assert [e["seq"] for e in events] == [0, 1, 2]
    assert events[0]["prev"] == GENESIS and events[2]["prev"] == events[1]["hash"]
    assert all(e["hash"] == event_hash(e) for e in events)
    assert events[1]["signature"]["signedAt"] == events[1]["at"]
    unsigned = build(2, key=None)
    assert "signature" not in unsigned[0]


def test_append_event_ignores_seq_prev_and_hash_given_by_the_caller():
    events = build(1)
    nxt = append_event(events, {"mission": "m-1", "at": "2026-10-04T17:05:00Z", "actor": "a", "type": "closed",
                                "seq": 9, "prev": "genesis", "hash": "sha256:00", "signature": {}}, HUB)
    assert nxt["seq"] == 1 and nxt["prev"] == events[0]["hash"] and nxt["hash"] == event_hash(nxt)


def test_event_hash_leaves_out_proposed_by():
    event = build(1)[0]
    assert event_hash({**event, "proposedBy": {"sig": "x"}}) == event["hash"]
    assert event_hash({**event, "x-note": 1}) != event["hash"]


def test_valid_chain_reports_its_head():
    events = build(3)
    verdict = verify_chain(events, KEYS)
    assert verdict.ok and verdict.head == events[-1]["hash"]
    assert verify_chain([], KEYS).head == GENESIS


@pytest.mark.parametrize("mutate, reason", [
    (lambda e: e[1].update(seq=2), "seq_gap_at_1"),
    (lambda e: e.pop(1), "seq_gap_at_1"),
    (lambda e: e[2].update(prev=e[0]["hash"]), "broken_link_at_2"),
    (lambda e: e[1]["payload"].update(step=7), "hash_mismatch_at_1"),
    (lambda e: e[0].update(hash=None), "hash_mismatch_at_0"),
    (lambda e: e[2]["signature"].update(sig=e[1]["signature"]["sig"]), "bad_signature_at_2"),
    (lambda e: e[0]["signature"].update(kid="did:web:nobody#k"), "unknown_key_at_0"),
    (lambda e: e.__setitem__(1, "not an event"), "seq_gap_at_1"),
])
def test_broken_chains_name_the_first_bad_event(mutate, reason):
    events = copy.deepcopy(build(3))
    mutate(events)
    assert verify_chain(events, KEYS).reason == reason


def test_an_event_of_another_log_does_not_belong():
    events = build(2)
    stray = append_event(events, {"mission": "m-2", "at": "2026-10-04T17:09:00Z", "actor": "a", "type": "closed"}, HUB)
    assert verify_chain(events + [stray], KEYS).reason == "log_mismatch_at_2"


def test_without_keys_signatures_are_not_checked():
    events = copy.deepcopy(build(2))
    events[1]["signature"]["kid"] = "did:web:nobody#k"
    assert verify_chain(events).ok
    assert not verify_chain(events, KEYS).ok


def test_checkpoint_needs_an_independent_witness():
    events = build(3)
    assert verify_checkpoint(witnessed(events), events, KEYS).ok
    bare = make_checkpoint(events, 2, "hub", HUB, "2026-10-04T18:00:00Z")
    assert verify_checkpoint(bare, events, KEYS).reason == "no_independent_witness"
    self_signed = add_witness(bare, "hub", HUB, "2026-10-04T18:01:00Z")
    assert verify_checkpoint(self_signed, events, KEYS).reason == "no_independent_witness"
    alias = add_witness(bare, "hub", HUB_ALIAS, "2026-10-04T18:01:00Z")
    assert verify_checkpoint(alias, events, KEYS).reason == "no_independent_witness"
    both = add_witness(alias, "witness", WITNESS, "2026-10-04T18:02:00Z")
    assert verify_checkpoint(both, events, KEYS).ok


def test_checkpoint_signatures_and_head():
    events = build(3)
    cp = witnessed(events)
    assert checkpoint_hash(cp) == document_hash(cp, ("signature", "witnesses"))
    edited = {**cp, "at": "2026-10-04T19:00:00Z"}
    assert verify_checkpoint(edited, events, KEYS).reason == "sequencer_bad_signature"
    bad_witness = copy.deepcopy(cp)
    bad_witness["witnesses"][0]["signature"]["sig"] = cp["signature"]["sig"]
    assert verify_checkpoint(bad_witness, events, KEYS).reason == "witness_bad_signature"
    assert verify_checkpoint(cp, events, KEYS[1:]).reason == "sequencer_unknown_key"
    assert verify_checkpoint(cp, events[:2], KEYS).reason == "head_mismatch"
    assert verify_checkpoint({**cp, "seq": "2"}, events, KEYS).reason == "head_mismatch"
    rewritten = events[:2] + [append_event(events[:2], {"mission": "m-1", "at": "2026-10-04T17:02:00Z",
                                                        "actor": "hub", "type": "failed"}, HUB)]
    assert verify_chain(rewritten, KEYS).ok
    assert verify_checkpoint(cp, rewritten, KEYS).reason == "head_mismatch"


def test_forks_are_two_heads_at_one_seq_of_one_log():
    events = build(3)
    fork = events[:2] + [append_event(events[:2], {"mission": "m-1", "at": "2026-10-04T17:02:00Z",
                                                   "actor": "hub", "type": "failed"}, HUB)]
    a, b = witnessed(events), witnessed(fork)
    assert detect_fork([a, b], KEYS) == {"fork": True, "reason": "fork_detected"}
    assert detect_fork([a, witnessed(events, 1)], KEYS) == {"fork": False, "reason": "ok"}
    assert detect_fork([a, a], KEYS) == {"fork": False, "reason": "ok"}
    other_log = witnessed(build(3, mission="m-2"))
    assert detect_fork([a, other_log], KEYS)["fork"] is False
    forged = {**a, "head": "sha256:" + "ab" * 32}
    assert detect_fork([a, forged]) == {"fork": True, "reason": "fork_detected"}
    assert detect_fork([a, forged], KEYS) == {"fork": False, "reason": "sequencer_bad_signature_at_1"}


def test_hash_only_payloads_match_their_digest():
    payload = {"note": "erasable", "n": 1}
    event = {"payloadDigest": document_hash(payload, ())}
    assert payload_matches(event, payload)
    assert not payload_matches(event, {**payload, "n": 2})
    assert not payload_matches(event, {"n": 2**60})


def test_vector_handler_dispatches_on_input_shape():
    events = build(2)
    assert vector_ledger({"events": events, "keys": KEYS}) == {"ok": True, "reason": "ok", "head": events[-1]["hash"]}
    assert vector_ledger({"events": events, "checkpoint": witnessed(events), "keys": KEYS}) == {"ok": True, "reason": "ok"}
    broken = copy.deepcopy(events)
    broken[0]["actor"] = "x"
    assert vector_ledger({"events": broken, "checkpoint": witnessed(events), "keys": KEYS}) == {
        "ok": False, "reason": "hash_mismatch_at_0"}
    assert vector_ledger({"checkpoints": [witnessed(events)]}) == {"fork": False, "reason": "ok"}
