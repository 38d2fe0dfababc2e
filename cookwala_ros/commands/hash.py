"""`cookwala-ros hash FILE...`: print the Cookwala hash of documents, or check the embedded one.

The hash is `sha256:` + hex of the RFC 8785 canonical JSON without `hash` and `signature`
(CORE §5). Also holds the small JSON-file reader the trust commands share.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from typing import Any

from cookwala_ros.core.canonical import CanonicalError, JsonReadError, canonical_text, loads_strict
from cookwala_ros.core.trust import document_body, document_hash


class InputError(Exception):
    """An input file that cannot be used; the message names the file."""


def read_json(path: str) -> Any:
    """Read a JSON file strictly (duplicate keys and NaN refused); `-` reads standard input."""
    try:
        raw = sys.stdin.buffer.read() if path == "-" else pathlib.Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        return loads_strict(raw)
    except JsonReadError as exc:
        raise InputError(f"{path}: {exc}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="JSON document(s); - for standard input")
    parser.add_argument("--check", action="store_true",
                        help="compare with the document's embedded `hash`; exit 1 on a mismatch or none")
    parser.add_argument("--canonical", action="store_true",
                        help="print the canonical JSON that is hashed instead of the hash")


def run(args: argparse.Namespace) -> int:
    status = 0
    many = len(args.files) > 1
    for path in args.files:
        try:
            doc = read_json(path)
            actual = document_hash(doc)
            text = canonical_text(document_body(doc) if isinstance(doc, dict) else doc) if args.canonical else None
        except InputError as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = max(status, 2)
            continue
        except CanonicalError as exc:
            print(f"error: {path}: cannot be canonicalised: {exc}", file=sys.stderr)
            status = max(status, 2)
            continue
        if args.check:
            embedded = doc.get("hash") if isinstance(doc, dict) else None
            if embedded is None:
                print(f"FAIL {path}: no embedded hash (computed {actual})")
                status = max(status, 1)
            elif embedded != actual:
                print(f"FAIL {path}: embedded {embedded} but the document hashes to {actual}")
                status = max(status, 1)
            else:
                print(f"ok {path}: {actual}")
            continue
        out = text if text is not None else actual
        print(f"{out}  {path}" if many and text is None else out)
    return status
