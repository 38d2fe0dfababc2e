"""`cookwala-ros conformance`: run conformance vector files and print a table per file.

    cookwala-ros conformance                                  # the package's own conformance/
    cookwala-ros conformance --vectors $COOKWALA_SPEC_DIR/conformance
    cookwala-ros conformance --vectors a.json --vectors dir/ -k ledger --strict

A directory runs its *.json and profiles/*.json. Exit 1 when a vector fails, when a Core kind
has no handler, or (with --strict) when any kind has none; profile kinds we do not implement
are listed as "not implemented (profile)" otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from cookwala_ros.core import conformance
from cookwala_ros.resources import share_path

MAX_SHOWN = 300


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--vectors", action="append", metavar="DIR_OR_FILE",
                        help="vector file or directory (repeatable; default: the package's conformance/)")
    parser.add_argument("--strict", action="store_true", help="unsupported kinds fail the run, profiles included")
    parser.add_argument("-k", dest="select", metavar="SUBSTRING", help="only vectors whose id contains SUBSTRING")


def _short(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + f"... ({len(text)} chars)"


class _Progress:
    """A live counter on a terminal; one plain line when stderr is a file or a pipe."""

    def __init__(self) -> None:
        self.live = sys.stderr.isatty()
        self.started = False

    def __call__(self, done: int, total: int, label: str) -> None:
        if self.live:
            sys.stderr.write(f"\r\033[Kconformance {done}/{total}  {label}")
            sys.stderr.flush()
        elif not self.started:
            sys.stderr.write(f"conformance: running {total} vectors\n")
        self.started = True

    def close(self) -> None:
        if self.live:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def print_report(report: conformance.RunReport) -> None:
    width = max([len("file")] + [len(f.label) for f in report.files])
    print(f"{'file':<{width}}  {'passed':>6}  {'failed':>6}  {'unsupported':>11}")
    for f in report.files:
        print(f"{f.label:<{width}}  {f.count(conformance.PASSED):>6}  {f.failed:>6}  "
              f"{f.count(conformance.UNSUPPORTED):>11}")
    for f in report.files:
        if f.error:
            print(f"\nFAIL {f.label}: {f.error}")
        for r in f.results:
            if r.status != conformance.FAILED:
                continue
            print(f"\nFAIL {f.label} :: {r.id} ({r.kind}): {r.message}")
            print(f"  expected: {_short(r.expected)}")
            if r.got is not None:
                print(f"  got:      {_short(r.got)}")
    unsupported: dict[tuple[str, str], int] = {}
    for f in report.files:
        for r in f.results:
            if r.status == conformance.UNSUPPORTED:
                unsupported[(r.kind, r.message)] = unsupported.get((r.kind, r.message), 0) + 1
    if unsupported:
        print("\nunsupported kinds" + (" (--strict: they fail the run)" if report.strict else "") + ":")
        for (kind, note), n in sorted(unsupported.items()):
            print(f"  {kind}: {n} vector(s), {note}")
    failed = sum(f.failed for f in report.files)
    print(f"\nconformance: {report.count(conformance.PASSED)} passed, {failed} failed, "
          f"{report.count(conformance.UNSUPPORTED)} unsupported in {len(report.files)} file(s): "
          + ("OK" if report.ok else "FAILED"))


def run(args: argparse.Namespace) -> int:
    targets = args.vectors
    if not targets:
        try:
            targets = [str(share_path("conformance"))]
        except FileNotFoundError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    missing = [t for t in targets if not os.path.exists(t)]
    if missing:
        print(f"error: no such vector file or directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    progress = _Progress()
    try:
        report = conformance.run(targets, strict=args.strict, select=args.select, progress=progress)
    finally:
        progress.close()
    if not report.files:
        print("error: no vector files found" + (f" with ids matching {args.select!r}" if args.select else ""),
              file=sys.stderr)
        return 2
    print_report(report)
    return 0 if report.ok else 1
