"""`cookwala-ros sign`: sign a document with an Ed25519 key file, or make a key file.

    cookwala-ros sign --generate-key me.key.json --kid did:web:me.example#k1   # prints the KeyRecord
    cookwala-ros sign recipe.json --key me.key.json [--output signed.json]
    cookwala-ros sign --key me.key.json --key-record                          # print the KeyRecord

Key file (ours): {"kid", "alg": "EdDSA", "privateKey": base64url 32-byte seed, "actor"?, "validFrom"?},
written with mode 0600. Publish only the KeyRecord.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys

from cookwala_ros.commands.hash import InputError, read_json
from cookwala_ros.core.canonical import CanonicalError
from cookwala_ros.core.keys import InvalidTimestamp, KeyFileError, SigningKey, now_rfc3339, parse_instant
from cookwala_ros.core.trust import sign_document


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", metavar="FILE", help="JSON document to sign; - for standard input")
    parser.add_argument("--key", metavar="KEYFILE", help="private key file")
    parser.add_argument("--kid", help="key id to sign as (default: the key file's kid; required with --generate-key)")
    parser.add_argument("--signed-at", metavar="TIME", help="RFC 3339 signing time (default: now)")
    parser.add_argument("--output", "-o", metavar="OUT", help="write the signed document here (default: stdout)")
    parser.add_argument("--generate-key", metavar="OUT", help="write a new private key file and print its KeyRecord")
    parser.add_argument("--actor", help="with --generate-key: the actor the key belongs to")
    parser.add_argument("--valid-from", metavar="TIME", help="with --generate-key: KeyRecord validFrom (default: now)")
    parser.add_argument("--key-record", action="store_true", help="print the public KeyRecord of --key")


def _dump(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _write(text: str, out: str | None) -> None:
    if out in (None, "-"):
        sys.stdout.write(text)
    else:
        pathlib.Path(out).write_text(text, encoding="utf-8")


def _check_time(value: str, option: str) -> None:
    try:
        parse_instant(value)
    except InvalidTimestamp as exc:
        raise InputError(f"{option}: {exc}") from None


def load_key(path: str, kid: str | None) -> SigningKey:
    data = read_json(path)
    key = SigningKey.from_json(data, path)
    return SigningKey(kid=kid, seed=key.seed, actor=key.actor, valid_from=key.valid_from) if kid else key


def _generate(args: argparse.Namespace) -> int:
    if not args.kid:
        raise InputError("--generate-key needs --kid (e.g. did:web:you.example#k1)")
    valid_from = args.valid_from or now_rfc3339()
    _check_time(valid_from, "--valid-from")
    key = SigningKey.generate(args.kid, actor=args.actor, valid_from=valid_from)
    try:
        fd = os.open(args.generate_key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise InputError(f"{args.generate_key}: cannot create ({exc.strerror})") from None
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(_dump(key.to_json()))
    print(f"private key written to {args.generate_key}; publish this KeyRecord:", file=sys.stderr)
    sys.stdout.write(_dump(key.key_record()))
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        if args.generate_key:
            return _generate(args)
        if not args.key:
            raise InputError("--key KEYFILE is required (or --generate-key OUT to make one)")
        key = load_key(args.key, args.kid)
        if args.key_record:
            sys.stdout.write(_dump(key.key_record()))
            return 0
        if not args.file:
            raise InputError("FILE is required: the document to sign")
        doc = read_json(args.file)
        if not isinstance(doc, dict):
            raise InputError(f"{args.file}: a signed document is a JSON object")
        signed_at = args.signed_at or now_rfc3339()
        _check_time(signed_at, "--signed-at")
        signed = sign_document(doc, key, signed_at)
        _write(_dump(signed), args.output)
        if args.output not in (None, "-"):
            print(f"signed {signed['hash']} as {key.kid} -> {args.output}", file=sys.stderr)
        return 0
    except (InputError, KeyFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except CanonicalError as exc:
        print(f"error: {args.file}: cannot be canonicalised: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
