"""Conformance vector runner: load vector files, dispatch each vector by kind, compare exactly.

A vector file is a JSON list of `{id, kind, description?, input, expected}` (or an object
`{"vectors": [...]}`). A vector passes when its handler's output equals `expected` as JSON
(objects by key, arrays in order, `true` never equals `1`).

Handlers are `"module:function"` paths, imported only when a vector of that kind runs, so a
kind whose module is missing or broken fails its vectors with "handler not available" and
never stops the run.

A kind with no handler is *unsupported*. Core kinds are normative, so an unsupported kind in
a Core file fails the run; in a profile file (under `profiles/`, or a vector with a `profile`
field) it is reported as "not implemented (profile)" and fails the run only when `strict`.

`input.keys` may name KeyRecord files instead of listing records: a string, or strings inside
the list, are paths relative to the vector file (our own vectors share `keys-*.json`).
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import os
import pathlib
from typing import Any, Callable, Iterable

from cookwala_ros.core.canonical import JsonReadError, loads_strict
from cookwala_ros.core.keys import KeyFileError, parse_key_records

HANDLERS: dict[str, str] = {
    "hash": "cookwala_ros.core.trust:vector_hash",
    "signature": "cookwala_ros.core.trust:vector_signature",
    "disclosure": "cookwala_ros.core.disclosure:vector_disclosure",
    "ledger": "cookwala_ros.core.ledger:vector_ledger",
    "units": "cookwala_ros.core.units:vector_units",
    "envelope": "cookwala_ros.core.envelope:vector_envelope",
    "dryrun": "cookwala_ros.core.dryrun:vector_dryrun",
    "execution_transition": "cookwala_ros.core.lifecycle:vector_execution_transition",
    "mission_transition": "cookwala_ros.core.lifecycle:vector_mission_transition",
    "sensor_trust": "cookwala_ros.core.sensor_trust:vector_sensor_trust",
    "plausibility": "cookwala_ros.core.sensor_trust:vector_plausibility",
    "certification": "cookwala_ros.core.certification:vector_certification",
    "certification_set": "cookwala_ros.core.certification:vector_certification_set",
}

PASSED, FAILED, UNSUPPORTED = "passed", "failed", "unsupported"


class VectorFileError(ValueError):
    """A file that cannot be read as a vector set."""


@dataclasses.dataclass
class VectorResult:
    id: str
    kind: str
    status: str
    message: str = ""
    expected: Any = None
    got: Any = None
    profile: bool = False


@dataclasses.dataclass
class FileResult:
    path: pathlib.Path
    label: str
    results: list[VectorResult] = dataclasses.field(default_factory=list)
    error: str | None = None

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)

    @property
    def failed(self) -> int:
        return self.count(FAILED) + (1 if self.error else 0)


@dataclasses.dataclass
class RunReport:
    files: list[FileResult]
    strict: bool = False

    def count(self, status: str) -> int:
        return sum(f.count(status) for f in self.files)

    @property
    def blocking_unsupported(self) -> list[VectorResult]:
        """Unsupported vectors that fail the run: all with strict, else Core kinds only."""
        return [r for f in self.files for r in f.results
                if r.status == UNSUPPORTED and (self.strict or not r.profile)]

    @property
    def ok(self) -> bool:
        return all(f.failed == 0 for f in self.files) and not self.blocking_unsupported


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: 1 == 1.0, but true != 1 and key order does not matter."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def is_key_file(data: Any) -> bool:
    """KeyRecord lists live beside vector files (keys-*.json); they are not vector sets."""
    return (isinstance(data, list) and bool(data)
            and all(isinstance(x, dict) and "publicKey" in x and "input" not in x for x in data))


def load_vectors(path: pathlib.Path) -> list[Any]:
    try:
        data = loads_strict(path.read_bytes())
    except OSError as exc:
        raise VectorFileError(f"cannot read: {exc.strerror}") from None
    except JsonReadError as exc:
        raise VectorFileError(str(exc)) from None
    if isinstance(data, dict) and isinstance(data.get("vectors"), list):
        data = data["vectors"]
    if not isinstance(data, list):
        raise VectorFileError("not a vector file: expected a JSON list of vectors or {\"vectors\": [...]}")
    return data


def _label(path: pathlib.Path) -> str:
    rel = os.path.relpath(path)
    return str(path) if rel.startswith(".." + os.sep + "..") else rel


def collect_files(targets: Iterable[str | os.PathLike]) -> list[pathlib.Path]:
    """Vector files for each target: a file as given; a directory's *.json then profiles/*.json.
    KeyRecord files found in directories are left out."""
    out: list[pathlib.Path] = []
    for target in targets:
        path = pathlib.Path(target)
        if path.is_dir():
            for candidate in sorted(path.glob("*.json")) + sorted((path / "profiles").glob("*.json")):
                try:
                    if is_key_file(loads_strict(candidate.read_bytes())):
                        continue
                except (OSError, JsonReadError):
                    pass  # reported when the file is run
                out.append(candidate)
        else:
            out.append(path)
    return out


class HandlerTable:
    """Lazy import of "module:function" handlers; failures are remembered, not raised."""

    def __init__(self, table: dict[str, str]) -> None:
        self.table = table
        self.cache: dict[str, Callable[[Any], Any] | str] = {}

    def get(self, kind: str) -> Callable[[Any], Any] | str | None:
        """The handler, an error string if it cannot be imported, or None for an unknown kind."""
        if kind not in self.table:
            return None
        if kind not in self.cache:
            module_name, _, attr = self.table[kind].partition(":")
            try:
                self.cache[kind] = getattr(importlib.import_module(module_name), attr)
            except Exception as exc:  # any import-time failure is reported per vector
                self.cache[kind] = f"{type(exc).__name__}: {exc}"
        return self.cache[kind]


def resolve_key_refs(input: Any, base_dir: pathlib.Path) -> Any:
    """Replace file names in `input.keys` with the KeyRecords they hold."""
    if not isinstance(input, dict) or "keys" not in input:
        return input
    refs = input["keys"]
    if isinstance(refs, str):
        refs = [refs]
    if not isinstance(refs, list) or not any(isinstance(r, str) for r in refs):
        return input
    records: list[Any] = []
    for ref in refs:
        if not isinstance(ref, str):
            records.append(ref)
            continue
        key_path = base_dir / ref
        try:
            records.extend(parse_key_records(loads_strict(key_path.read_bytes()), str(key_path)))
        except OSError as exc:
            raise KeyFileError(f"keys file {key_path}: {exc.strerror}") from None
        except JsonReadError as exc:
            raise KeyFileError(f"keys file {key_path}: {exc}") from None
    return {**input, "keys": records}


def run_vector(vector: Any, base_dir: pathlib.Path, handlers: HandlerTable, in_profiles: bool) -> VectorResult:
    if not isinstance(vector, dict):
        return VectorResult("?", "?", FAILED, "malformed vector: not an object")
    vid, kind = str(vector.get("id", "?")), str(vector.get("kind", "?"))
    missing = [f for f in ("id", "kind", "input", "expected") if f not in vector]
    if missing:
        return VectorResult(vid, kind, FAILED, f"malformed vector: missing {', '.join(missing)}")
    profile = in_profiles or "profile" in vector
    handler = handlers.get(kind)
    if handler is None:
        note = "not implemented (profile)" if profile else "unsupported kind (Core kinds must be implemented)"
        return VectorResult(vid, kind, UNSUPPORTED, note, profile=profile)
    if isinstance(handler, str):
        return VectorResult(vid, kind, FAILED, f"handler not available: {handler}", vector["expected"], profile=profile)
    try:
        input = resolve_key_refs(copy.deepcopy(vector["input"]), base_dir)
    except KeyFileError as exc:
        return VectorResult(vid, kind, FAILED, f"keys: {exc}", vector["expected"], profile=profile)
    try:
        got = handler(input)
    except Exception as exc:  # a crashing handler is a failed vector, never a crashed run
        return VectorResult(vid, kind, FAILED, f"handler error: {type(exc).__name__}: {exc}",
                            vector["expected"], profile=profile)
    if json_equal(got, vector["expected"]):
        return VectorResult(vid, kind, PASSED, expected=vector["expected"], got=got, profile=profile)
    return VectorResult(vid, kind, FAILED, "output differs from expected", vector["expected"], got, profile)


def _selected(vector: Any, select: str | None, label: str) -> bool:
    if not select:
        return True
    vid = str(vector.get("id", "")) if isinstance(vector, dict) else ""
    return select.lower() in vid.lower() or select.lower() in f"{label}::{vid}".lower()


Progress = Callable[[int, int, str], None]


def run(targets: Iterable[str | os.PathLike], strict: bool = False, select: str | None = None,
        progress: Progress | None = None, handlers: dict[str, str] | None = None) -> RunReport:
    """Run every vector of the targets (files or directories). `select` keeps vectors whose id
    (or "file::id") contains it. `progress(done, total, label)` is called after each vector."""
    table = HandlerTable(HANDLERS if handlers is None else handlers)
    plan: list[tuple[FileResult, list[Any]]] = []
    for path in collect_files(targets):
        result = FileResult(path, _label(path))
        try:
            vectors = [v for v in load_vectors(path) if _selected(v, select, result.label)]
        except VectorFileError as exc:
            result.error, vectors = str(exc), []
        if result.error or vectors or not select:
            plan.append((result, vectors))
    total, done = sum(len(v) for _, v in plan), 0
    for result, vectors in plan:
        in_profiles = result.path.parent.name == "profiles"
        seen: set[str] = set()
        for vector in vectors:
            outcome = run_vector(vector, result.path.parent, table, in_profiles)
            if outcome.id in seen and outcome.id != "?":
                outcome = VectorResult(outcome.id, outcome.kind, FAILED, "duplicate vector id in this file")
            seen.add(outcome.id)
            result.results.append(outcome)
            done += 1
            if progress:
                progress(done, total, result.label)
    return RunReport([r for r, _ in plan], strict)
