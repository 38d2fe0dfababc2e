"""`cookwala-ros schemas list|bundle`: show the project's Core 0.2 schemas, write the offline bundle.

`bundle` writes schemas/bundle.json (one self-contained file, no network needed to use it);
`bundle --check` exits 1 when the committed bundle is out of date with the schema sources.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from cookwala_ros.core import schemas


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    sub.add_parser("list", help="list document kinds and schema files")
    bundle = sub.add_parser("bundle", help="write the self-contained schema bundle")
    bundle.add_argument("--output", "-o", type=pathlib.Path, default=None,
                        help="where to write (default: schemas/bundle.json in the share directory)")
    bundle.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the existing bundle differs from the sources")


def _default_output() -> pathlib.Path:
    from cookwala_ros.resources import share_path

    return share_path("schemas", "bundle.json")


def _list() -> int:
    loaded = schemas.default_schemas()
    by_file = {f: k for k, f in schemas.KINDS.items()}
    for uri in sorted(loaded.schemas):
        name = uri[len(schemas.SCHEMA_BASE):]
        kind = by_file.get(name, "")
        print(f"{kind or '-':16} {name:40} {loaded.schemas[uri].get('title', '')}")
    return 0


def _bundle(output: pathlib.Path | None, check: bool) -> int:
    path = output or _default_output()
    text = schemas.bundle_text()
    if check:
        try:
            current = path.read_text(encoding="utf-8")
        except OSError as exc:
            print(f"{path}: cannot read: {exc.strerror or exc}", file=sys.stderr)
            return 1
        if current != text:
            print(f"{path} is out of date; run `cookwala-ros schemas bundle`", file=sys.stderr)
            return 1
        print(f"{path} is up to date")
        return 0
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        print(f"{path}: cannot write: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"wrote {path} ({len(schemas.default_schemas().schemas)} schemas)")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.action == "list":
        return _list()
    return _bundle(args.output, args.check)
