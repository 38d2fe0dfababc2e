"""`cookwala-ros verify FILE --keys KEYS.json ...`: check a document's hash and signature.

FILE is a signed document, an event log (a JSON list of events, or {"events": [...],
"checkpoint"?: {...}}), and the keys are trusted KeyRecords (a list, one record, or an object
with a `keys` list such as /.well-known/cookwala.json). Exit 0 when it verifies, 1 with the
reason when it does not, 2 when an input cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cookwala_ros.commands.hash import InputError, read_json
from cookwala_ros.core.keys import KeyFileError, parse_key_records
from cookwala_ros.core.ledger import verify_chain, verify_checkpoint
from cookwala_ros.core.trust import Verdict, document_hash, verify_document


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="signed document or event log; - for standard input")
    parser.add_argument("--keys", action="append", default=[], metavar="KEYRECORDS.json",
                        help="trusted KeyRecords (repeatable); nothing is trusted without them")
    parser.add_argument("--checkpoint", metavar="CHECKPOINT.json", help="for an event log: a checkpoint to verify")


def _verify_log(events: list, checkpoint: Any, keys: list[dict]) -> Verdict:
    chain = verify_chain(events, keys)
    if not chain.ok or checkpoint is None:
        return Verdict(chain.ok, chain.reason, f"{chain.detail}; head {chain.head}" if chain.ok else chain.detail)
    if not isinstance(checkpoint, dict):
        raise InputError("the checkpoint is not a JSON object")
    return verify_checkpoint(checkpoint, events, keys)


def run(args: argparse.Namespace) -> int:
    try:
        keys: list[dict] = []
        for path in args.keys:
            keys.extend(parse_key_records(read_json(path), path))
        doc = read_json(args.file)
        checkpoint = read_json(args.checkpoint) if args.checkpoint else None
        if isinstance(doc, list):
            verdict = _verify_log(doc, checkpoint, keys)
        elif isinstance(doc, dict) and isinstance(doc.get("events"), list):
            verdict = _verify_log(doc["events"], checkpoint or doc.get("checkpoint"), keys)
        elif isinstance(doc, dict):
            verdict = verify_document(doc, keys)
            if verdict.ok:
                verdict = Verdict(True, "ok", f"{document_hash(doc)} {verdict.detail}")
        else:
            raise InputError(f"{args.file}: expected a signed JSON object or a list of events")
    except (InputError, KeyFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if verdict.ok:
        print(f"ok: {verdict.detail}" if verdict.detail else "ok")
        return 0
    hint = " (no --keys given: nothing is trusted)" if not args.keys and "unknown_key" in verdict.reason else ""
    print(f"FAIL {verdict.reason}: {verdict.detail}{hint}")
    return 1
