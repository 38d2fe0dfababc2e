"""Our OpenAPI document (`schemas/openapi.yaml`) as one self-contained dict.

On disk the document points at our JSON Schemas with relative file refs
(`./execute-request.schema.json`), which is how it reads best next to them. Tools that want a
single document (the app's /openapi.json, schemathesis, API browsers) get this bundled form:
every schema file reachable from the document is copied under `components/schemas/<file stem>`
and every `$ref` is rewritten to a local pointer, so nothing is resolved over the network.
"""

from __future__ import annotations

import copy
import functools
import json
import pathlib
from typing import Any

import yaml

from cookwala_ros.resources import share_path

SCHEMA_SUFFIX = ".schema.json"
_DROPPED = ("$id", "$schema")


def _stem(file_name: str) -> str:
    name = pathlib.PurePosixPath(file_name).name
    return name[: -len(SCHEMA_SUFFIX)] if name.endswith(SCHEMA_SUFFIX) else name.rsplit(".", 1)[0]


def _local(ref: str, current: str | None) -> str:
    """`file#/frag` (relative to the schemas folder) -> `#/components/schemas/<stem>/frag`."""
    file_part, _, fragment = ref.partition("#")
    target = _stem(file_part) if file_part else current
    if target is None:  # a plain local ref inside the OpenAPI document itself
        return ref
    return f"#/components/schemas/{target}" + (fragment if fragment.startswith("/") else "")


def _rewrite(node: Any, current: str | None, wanted: set[str]) -> Any:
    if isinstance(node, list):
        return [_rewrite(item, current, wanted) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str):
            file_part = value.partition("#")[0]
            if file_part:
                wanted.add(pathlib.PurePosixPath(file_part).name)
            out[key] = _local(value, current)
        elif key in ("const", "enum", "example", "examples", "default"):
            out[key] = value
        elif current is not None and key in _DROPPED:
            continue
        else:
            out[key] = _rewrite(value, current, wanted)
    return out


def bundle_openapi(path: str | pathlib.Path) -> dict:
    """The document at `path` with the schema files it reaches (beside it) embedded."""
    path = pathlib.Path(path)
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    wanted: set[str] = set()
    bundled = _rewrite(document, None, wanted)
    components = bundled.setdefault("components", {}).setdefault("schemas", {})
    done: set[str] = set()
    while wanted - done:
        name = sorted(wanted - done)[0]
        done.add(name)
        schema = json.loads((path.parent / name).read_text(encoding="utf-8"))
        stem = _stem(name)
        if stem in components:
            raise ValueError(f"{path}: components/schemas/{stem} clashes with the schema file {name}")
        components[stem] = _rewrite(schema, stem, wanted)
    return bundled


@functools.lru_cache(maxsize=1)
def _shipped() -> dict:
    return bundle_openapi(share_path("schemas", "openapi.yaml"))


def load_openapi() -> dict:
    """The shipped device API document, bundled (a fresh copy each call)."""
    return copy.deepcopy(_shipped())
