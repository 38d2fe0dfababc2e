"""`cookwala-ros dryrun RECIPE --device CAPS`: can this device cook this recipe, and how?

Prints, per node, the operation, who does it (device or person) and how it is verified (sensor,
model, time or person), or the first refusal reason with its node. Exit 0 accepted, 1 refused,
2 unreadable or malformed input.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Any

from cookwala_ros.core import dryrun, json_limits


class _BadInput(Exception):
    pass


def _read(path: str, what: str) -> Any:
    try:
        text = sys.stdin.read() if path == "-" else pathlib.Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise _BadInput(f"{what} {path}: cannot read ({exc.strerror})") from None
    try:
        return json_limits.loads(text)  # bounded depth and numbers: the plan walks the document
    except json_limits.JsonInputError as exc:
        accepts = "" if exc.kind == "malformed" else " this reader accepts"
        raise _BadInput(f"{what} {path}: not JSON{accepts} ({exc.message})") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("recipe", metavar="RECIPE", help="recipe document (JSON); - for standard input")
    parser.add_argument("--device", required=True, metavar="CAPS", help="device capabilities document (JSON)")
    parser.add_argument("--human-present", action="store_true", help="a responsible person is present")
    parser.add_argument("--no-model", action="store_true", help="do not accept logged estimates (model rung)")
    parser.add_argument("--limits", action="append", default=[], metavar="PACK",
                        help="SafetyLimits pack (repeatable; the stricter limit wins). Default: the standard's draft pack")
    parser.add_argument("--altitude", type=float, default=0.0, metavar="M", help="kitchen altitude in metres (default 0)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    try:
        recipe = _read(args.recipe, "recipe")
        caps = _read(args.device, "capabilities")
        packs = [_read(p, "limits") for p in args.limits]
        result = dryrun.precheck(recipe, caps, limits=packs or None, human_present=args.human_present,
                                 allow_model=not args.no_model, altitude_m=args.altitude)
    except (_BadInput, ValueError) as exc:
        print(f"cookwala-ros dryrun: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.to_wire(), indent=1, ensure_ascii=False))
    else:
        for step in result.plan:
            how = f"sensor {step.sensor or step.rung}" if step.verified_by == "sensor" else step.verified_by
            print(f"{step.node:<8} {step.op:<24} {step.by:<7} verified by {how}")
        if result.accepted:
            print(f"accepted: {len(result.plan)} node(s)")
        else:
            where = f" at node {result.node}" if result.node else ""
            print(f"refused: {result.reason}{where}: {result.detail}")
    return 0 if result.accepted else 1
