"""The CLI's long fuzz run: mutated documents through validate, hash, verify, dryrun and
`recipes add`; every answer must be exit 0, 1 or 2 with a message, never an exception.

    python benchmarks/fuzz_bench.py [--documents 10000] [--seed 1]

The documents are the standard's examples ($COOKWALA_SPEC_DIR/examples, default
../shared/cookwala-spec) and ours (examples/), mutated: members replaced by other types, deep
nesting, huge numbers, truncation, invalid UTF-8, binary, empty files and a directory. Prints the
cases tried, the exit codes and every failure (command, mutation, first line of the error); exit 1
when there was one. The fast property version is test/core/test_cli_fuzz.py.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import pathlib
import random
import sys
import tempfile
import time
import traceback

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cookwala_ros import cli  # noqa: E402

COMMANDS = (("validate", "{f}"), ("hash", "{f}"), ("verify", "{f}"), ("dryrun", "{f}", "--device", "{caps}"),
            ("dryrun", "{caps}", "--device", "{f}"), ("recipes", "--library", "{lib}", "add", "{f}"))
ODD_VALUES = (None, True, 0, -1, 1e308, -1e-308, 2 ** 64, "", "x" * 1000, [], {}, [[[]]], {"a": {"b": {}}},
              "\u0000", "\ud7ff", 3.5)


def seeds() -> list[dict]:
    spec = pathlib.Path(os.environ.get("COOKWALA_SPEC_DIR", REPO.parent / "shared" / "cookwala-spec"))
    docs = []
    for folder in (spec / "examples", REPO / "examples"):
        for path in sorted(folder.rglob("*.json")) if folder.is_dir() else ():
            with contextlib.suppress(ValueError, OSError):
                docs.append(json.loads(path.read_text(encoding="utf-8")))
    return docs or [{"core": "0.2.0", "kind": "Recipe"}]


def members(node, path=()):
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from members(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from members(value, (*path, i))


def replaced(doc, path, value):
    if not path:
        return value
    doc = json.loads(json.dumps(doc))
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


def mutate(rng: random.Random, docs: list[dict]) -> tuple[str, bytes]:
    doc = rng.choice(docs)
    kind = rng.choice(("member", "member", "member", "nest", "number", "truncate", "utf8", "binary", "empty"))
    if kind == "member":
        paths = list(members(doc))
        for _ in range(rng.randint(1, 3)):
            doc = replaced(doc, rng.choice(paths), rng.choice(ODD_VALUES))
            paths = list(members(doc))
        return kind, json.dumps(doc).encode()
    if kind == "nest":
        depth = rng.choice((100, 999, 1000, 5000, 100_000))
        return kind, (rng.choice("[{") * depth if rng.random() < 0.3 else "[" * depth + "]" * depth).encode()
    if kind == "number":
        digits = rng.choice((20, 309, 4301, 100_000))
        return kind, json.dumps(doc)[:-1].encode() + b', "x-n": ' + b"9" * digits + (b".5e999}" if rng.random() < 0.5 else b"}")
    text = json.dumps(doc).encode()
    if kind == "truncate":
        return kind, text[:rng.randrange(len(text))]
    if kind == "utf8":
        at = rng.randrange(len(text))
        return kind, text[:at] + rng.choice((b"\xff", b"\xc3\x28", b"\xed\xa0\x80")) + text[at:]
    if kind == "binary":
        return kind, rng.randbytes(rng.randint(1, 512))
    return kind, b""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng, docs = random.Random(args.seed), seeds()
    codes: collections.Counter = collections.Counter()
    failures: list[str] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = pathlib.Path(tmp)
        doc_path, caps = tmp_path / "doc.json", tmp_path / "caps.json"
        caps.write_text(json.dumps({"capabilities": {"ops": [{"op": "cw.op.simmer"}], "sensors": []}}))
        for n in range(args.documents + 1):
            kind, payload = ("directory", b"") if n == args.documents else mutate(rng, docs)
            target = tmp_path if kind == "directory" else doc_path
            if kind != "directory":
                doc_path.write_bytes(payload)
            for command in COMMANDS:
                argv = [a.format(f=target, caps=caps, lib=tmp_path / "library") for a in command]
                out, err = io.StringIO(), io.StringIO()
                try:
                    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                        code = cli.main(argv)
                except SystemExit as exc:
                    code = exc.code
                except BaseException as exc:  # noqa: BLE001 - what the run looks for
                    code = "exception"
                    frame = traceback.extract_tb(exc.__traceback__)[-1]
                    where = f"{pathlib.Path(frame.filename).name}:{frame.lineno} {frame.name}"
                    failures.append(f"{argv[0]} ({kind}): {type(exc).__name__}: {str(exc)[:120]} at {where}")
                codes[(argv[0], code)] += 1
                if code not in (0, 1, 2, "exception"):
                    failures.append(f"{argv[0]} ({kind}): exit {code}")
                elif code in (1, 2) and not (out.getvalue() + err.getvalue()).strip():
                    failures.append(f"{argv[0]} ({kind}): exit {code} without a message")
    elapsed = time.monotonic() - started
    print(f"{args.documents} mutated documents + a directory, {len(COMMANDS)} commands each, "
          f"{sum(codes.values())} runs in {elapsed:.1f} s (seed {args.seed})")
    for command in sorted({c for c, _ in codes}):
        print(f"  {command:<9} " + ", ".join(f"exit {code}: {count}" for (c, code), count in sorted(codes.items(), key=str)
                                             if c == command))
    print(f"failures: {len(failures)}")
    for line in failures[:30]:
        print(f"  {line}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
