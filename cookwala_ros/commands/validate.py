"""`cookwala-ros validate FILE... [--kind KIND]`: check documents against the Core 0.2 schemas.

Prints `OK <file> (<kind>)` or one `<file>: <pointer>: <message>` line per problem.
A document's own version is checked too (CORE §9): a Recipe or Capabilities document whose
`cookwala` member is not 0.2.x (`0.3.0`, `0.2.banana`) gets one `/cookwala: unsupported_version`
line. Exit 0 when every file is valid, 1 when one is invalid, 2 when one cannot be read as JSON.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cookwala_ros.core import schemas, versions
from cookwala_ros.core.canonical import JsonReadError, loads_strict

EXIT_OK, EXIT_INVALID, EXIT_UNREADABLE = 0, 1, 2


class UnreadableInput(Exception):
    """The file could not be read, or is not strict JSON (UTF-8, no duplicate names, no NaN)."""


def _kind(value: str) -> str:
    try:
        return schemas.normalize_kind(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="JSON documents to check ('-' reads stdin)")
    parser.add_argument("--kind", type=_kind, default=None,
                        help=f"document kind (default: from its `kind` member or shape): {', '.join(schemas.KINDS)}")


def load_json(name: str) -> Any:
    """Read and parse one file strictly; raise UnreadableInput with a one-line reason."""
    try:
        if name == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(name, "rb") as handle:
                data = handle.read()
    except OSError as exc:
        raise UnreadableInput(f"cannot read: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableInput(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    try:
        return loads_strict(text)
    except JsonReadError as exc:
        raise UnreadableInput(str(exc)) from exc


VERSIONED_KINDS = ("Recipe", "Capabilities")  # documents whose `cookwala` member is the Core version


def check(document: Any, kind: str | None) -> list:
    """Schema issues, with a version that is not 0.2.x reported once as unsupported_version."""
    issues = schemas.validate(document, kind)
    refused = versions.recipe_refusal(document, f"{kind} version") if kind in VERSIONED_KINDS else None
    if refused:
        issues = [schemas.ValidationIssue("/cookwala", f"{refused[0]}: {refused[1]}", "version")] + \
                 [i for i in issues if i.pointer != "/cookwala"]
    return issues


def run(args: argparse.Namespace) -> int:
    status = EXIT_OK
    for name in args.files:
        label = "<stdin>" if name == "-" else name
        try:
            document = load_json(name)
        except UnreadableInput as exc:
            print(f"{label}: error: {exc}", file=sys.stderr)
            status = EXIT_UNREADABLE
            continue
        kind = args.kind or schemas.infer_kind(document)
        issues = check(document, kind)
        if not issues:
            print(f"OK {label} ({kind})")
            continue
        for issue in issues:
            print(f"{label}: {issue}")
        status = max(status, EXIT_INVALID)
    return status
