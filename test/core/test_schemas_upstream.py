"""Interoperability with the published standard: its examples validate against our schemas, and
our schemas carry the same members, types, enums and limits as its schemas."""

from __future__ import annotations

import json
from urllib.parse import urljoin

import pathlib

import pytest

from cookwala_ros.core import schemas

ROOT_CONFTEST = pathlib.Path(__file__).resolve().parents[1] / "conftest.py"

# Example folders of the standard that hold profile documents, which have no Core schema of ours.
PROFILE_FOLDERS = {
    "advice": "advice profile (AdviceRequest/AdviceResponse)",
    "mission": "mission profile (Mission)",
    "fleet": "kitchens-and-fleets profile (Kitchen, ProductionRun)",
}


def _example_files(config) -> list[str]:
    """Example paths for parametrizing, found with the root conftest's locator (the tests themselves
    read through the `spec_dir` fixture, which skips when the standard is absent)."""
    conftest = next((p for p in config.pluginmanager.get_plugins()
                     if getattr(p, "__file__", None) and pathlib.Path(p.__file__).resolve() == ROOT_CONFTEST), None)
    spec = conftest.spec_dir_or_none() if conftest is not None else None
    if spec is None:
        return ["<standard not available>"]
    root = spec / "examples"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.json"))


def pytest_generate_tests(metafunc):
    if "relative" in metafunc.fixturenames:
        metafunc.parametrize("relative", _example_files(metafunc.config))


def _expected_kind(relative: str, document: dict) -> str:
    if relative.endswith(".cookwala.json"):
        return "Recipe"
    if relative.startswith("capabilities/"):
        return "Capabilities"
    return document["kind"]


def test_upstream_example_validates(spec_dir, relative):
    folder = relative.split("/", 1)[0] if "/" in relative else ""
    if folder in PROFILE_FOLDERS:
        pytest.skip(f"{relative}: {PROFILE_FOLDERS[folder]} document, not a Core 0.2 document")
    document = json.loads((spec_dir / "examples" / relative).read_text(encoding="utf-8"))
    if "core" in document and not str(document["core"]).startswith("0.2."):
        pytest.skip(f"{relative}: declares core {document['core']}, not 0.2.x")
    kind = schemas.infer_kind(document)
    assert kind == _expected_kind(relative, document)
    assert schemas.validate(document) == [], [str(i) for i in schemas.validate(document)]


def test_upstream_examples_cover_the_core_kinds(spec_dir):
    kinds = set()
    for path in (spec_dir / "examples").rglob("*.json"):
        if path.parent.name not in PROFILE_FOLDERS:
            kinds.add(schemas.infer_kind(json.loads(path.read_text(encoding="utf-8"))))
    assert {"Recipe", "Capabilities", "ExecuteRequest", "ExecutionStatus", "ExecutionLog", "Recall",
            "IncidentReport"} <= kinds


# --- same constraints as the standard -------------------------------------------------------

UPSTREAM_BASE = "https://cookwala.ai/v1/schemas/"
# kind -> (upstream file, JSON pointer of its definition)
UPSTREAM_DEFS = {
    "Recipe": ("recipe", ""),
    "Capabilities": ("capabilities", ""),
    "CloudEvent": ("event", ""),
    "ExecuteRequest": ("core", "/$defs/ExecuteRequest"),
    "StopRequest": ("core", "/$defs/StopRequest"),
    "ExecutionStatus": ("core", "/$defs/ExecutionStatus"),
    "ExecutionLog": ("core", "/$defs/ExecutionLog"),
    "RefusalReason": ("core", "/$defs/RefusalReason"),
    "SafetyLimits": ("core", "/$defs/SafetyLimits"),
    "Recall": ("core", "/$defs/Recall"),
    "IncidentReport": ("core", "/$defs/IncidentReport"),
    "KeyRecord": ("common", "/$defs/KeyRecord"),
    "Signature": ("common", "/$defs/Signature"),
    "AgentMandate": ("common", "/$defs/AgentMandate"),
}
PROSE = {"description", "title", "errorMessage", "$comment", "$schema", "$id", "x-cookwala-status"}
# Upstream's number-or-{placeholder}; our recipes take numbers only (the standard's own rule).
NUMBER_OR_PLACEHOLDER = {"oneOf": [{"type": "number"}, {"type": "string", "pattern": "^\\{[a-z_]+\\}$"}]}


def _target(documents: dict, uri: str):
    doc_uri, _, fragment = uri.partition("#")
    node = documents[doc_uri]
    for part in [p for p in fragment.split("/") if p]:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def canonical(node, documents: dict, base: str, stack: tuple = ()):
    """Inline every $ref, drop prose and x- extension allowances: what is left is the constraint."""
    if isinstance(node, list):
        return [canonical(item, documents, base, stack) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        uri = urljoin(base, node["$ref"])
        rest = {k: v for k, v in node.items() if k != "$ref" and k not in PROSE}
        if uri in stack:
            resolved = {"recursive": uri.rsplit("/", 1)[-1]}
        else:
            resolved = canonical(_target(documents, uri), documents, uri.partition("#")[0], stack + (uri,))
        return {"allOf": [resolved], **canonical(rest, documents, base, stack)} if rest else resolved
    out = {}
    for key, value in node.items():
        if key in PROSE or key.startswith("x-cookwala-untrusted"):
            continue
        if key in ("const", "enum", "default"):
            out[key] = value
        elif key in ("properties", "$defs"):
            out[key] = {k: canonical(v, documents, base, stack) for k, v in value.items() if not k.startswith("x-")}
        elif key == "patternProperties":
            kept = {k: canonical(v, documents, base, stack) for k, v in value.items() if k != "^x-"}
            if kept:
                out[key] = kept
        else:
            out[key] = canonical(value, documents, base, stack)
    if out == NUMBER_OR_PLACEHOLDER:
        return {"type": "number"}
    out.pop("$defs", None)
    return out


def first_difference(a, b, path=""):
    if type(a) is not type(b):
        return f"{path or '/'}: {json.dumps(a)[:120]} != {json.dumps(b)[:120]}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}/{key}: only in {'ours' if key in a else 'upstream'}"
            found = first_difference(a[key], b[key], f"{path}/{key}")
            if found:
                return found
    elif isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}/{i}")
            if found:
                return found
    elif a != b:
        return f"{path}: {a!r} != {b!r}"
    return None


@pytest.fixture(scope="module")
def upstream_documents(spec_dir):
    return {UPSTREAM_BASE + p.name: json.loads(p.read_text(encoding="utf-8"))
            for p in (spec_dir / "schemas").glob("*.schema.json")}


@pytest.mark.parametrize("kind", sorted(UPSTREAM_DEFS))
def test_our_schema_has_the_standard_constraints(upstream_documents, kind):
    ours_docs = schemas.default_schemas().schemas
    our_uri = schemas.SCHEMA_BASE + schemas.KINDS[kind]
    ours = canonical({"$ref": our_uri}, ours_docs, our_uri)
    file, pointer = UPSTREAM_DEFS[kind]
    up_uri = f"{UPSTREAM_BASE}{file}.schema.json"
    upstream = canonical({"$ref": f"{up_uri}#{pointer}"}, upstream_documents, up_uri)
    if kind == "CloudEvent":
        # Ours adds the data of execution and heartbeat events, which the standard leaves open.
        extra = ours["allOf"][len(upstream["allOf"]):]
        assert [rule["if"]["properties"]["type"] for rule in extra] == [
            {"pattern": "^cookwala\\.execution\\."}, {"const": "cookwala.device.heartbeat"}]
        ours["allOf"] = ours["allOf"][:len(upstream["allOf"])]
    difference = first_difference(ours, upstream)
    assert difference is None, f"{kind} differs from the standard at {difference}"


def test_op_parameter_schemas_match_the_operation_vocabulary(spec_dir, upstream_documents):
    ops = json.loads((spec_dir / "vocab" / "ops.json").read_text(encoding="utf-8"))["entries"]
    ours_docs = schemas.default_schemas().schemas
    ours = ours_docs[schemas.OP_PARAMS_ID]["$defs"]
    with_params = {e["id"]: e["paramsSchema"] for e in ops if e.get("paramsSchema", {}).get("properties")}
    assert set(ours) == set(with_params)
    for op, upstream in with_params.items():
        mine = canonical(ours[op], ours_docs, schemas.OP_PARAMS_ID)
        theirs = canonical(upstream, upstream_documents, UPSTREAM_BASE + "ops.json")
        assert first_difference(mine, theirs) is None, op
