"""Core trust throughput: validate, hash and verify rates for one recipe, and the wall time of a
full conformance run (our vectors, plus the published ones when present).

    python benchmarks/core_bench.py [--seconds 1.0]

The recipe is the published shakshuka ($COOKWALA_SPEC_DIR/examples/shakshuka.cookwala.json,
default ../shared/cookwala-spec), else the first of our examples/recipes/*.cookwala.json.
Figures are documents per second on this machine; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cookwala_ros.core import conformance  # noqa: E402
from cookwala_ros.core.keys import SigningKey  # noqa: E402
from cookwala_ros.core.trust import document_hash, sign_document, verify_document  # noqa: E402


def spec_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("COOKWALA_SPEC_DIR", REPO.parent / "shared" / "cookwala-spec"))


def load_recipe() -> tuple[str, dict]:
    published = spec_dir() / "examples" / "shakshuka.cookwala.json"
    candidates = [published] + sorted((REPO / "examples" / "recipes").glob("*.cookwala.json"))
    for path in candidates:
        if path.is_file():
            return str(path), json.loads(path.read_text(encoding="utf-8"))
    raise SystemExit("no recipe found: set COOKWALA_SPEC_DIR or add examples/recipes/*.cookwala.json")


def rate(fn, seconds: float) -> float:
    """Calls per second of fn() over at least `seconds` of wall time."""
    fn()
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return calls / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    args = parser.parse_args()

    source, recipe = load_recipe()
    key = SigningKey(kid="did:web:bench.example#k1", seed=b"\x07" * 32)
    keys = [key.key_record("2026-01-01T00:00:00Z")]
    signed = sign_document(recipe, key, "2026-04-01T00:00:00Z")
    assert verify_document(signed, keys).ok
    size = len(json.dumps(recipe))
    print(f"recipe: {source} ({size} bytes of JSON)")

    try:
        from cookwala_ros.core.schemas import validate
    except Exception as exc:  # written by another part of the project; may be absent
        validate = None
        print(f"validate: n/a ({type(exc).__name__}: {exc})")
    if validate is not None:
        try:
            validate(recipe)
            print(f"validate: {rate(lambda: validate(recipe), args.seconds):10.1f} documents/s")
        except Exception as exc:
            print(f"validate: n/a ({type(exc).__name__}: {exc})")
    print(f"hash:     {rate(lambda: document_hash(recipe), args.seconds):10.1f} documents/s")
    print(f"verify:   {rate(lambda: verify_document(signed, keys), args.seconds):10.1f} documents/s "
          "(hash + Ed25519)")

    targets = [REPO / "conformance"]
    if (spec_dir() / "conformance").is_dir():
        targets.append(spec_dir() / "conformance")
    start = time.perf_counter()
    report = conformance.run(targets)
    wall = time.perf_counter() - start
    total = sum(len(f.results) for f in report.files)
    print(f"conformance: {total} vectors in {len(report.files)} files, {wall * 1000:.0f} ms wall "
          f"({report.count('passed')} passed, {sum(f.failed for f in report.files)} failed, "
          f"{report.count('unsupported')} unsupported)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
