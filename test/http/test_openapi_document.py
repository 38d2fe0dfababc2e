"""Our OpenAPI document: interoperable with the standard's device API and true to the app."""

from __future__ import annotations

import pathlib

import yaml

from cookwala_ros.http.app import create_app
from cookwala_ros.http.openapi_doc import load_openapi

REPO = pathlib.Path(__file__).resolve().parents[2]
METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}
# CORE §7: GET /v1/recalls and POST /v1/incidents are served by catalogs, not by devices.
CATALOG_ONLY = {("get", "/v1/recalls"), ("post", "/v1/incidents")}


def _operations(document: dict) -> dict[tuple[str, str], dict]:
    return {(method, path): op for path, item in document["paths"].items()
            for method, op in item.items() if method in METHODS}


def _refs(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def test_every_device_operation_of_the_standard_is_ours(spec_dir):
    standard = yaml.safe_load((spec_dir / "api" / "core.openapi.yaml").read_text(encoding="utf-8"))
    theirs = _operations(standard)
    assert CATALOG_ONLY <= set(theirs), "the standard's catalog paths moved; revisit CATALOG_ONLY"
    ours = _operations(load_openapi())
    for key, op in theirs.items():
        if key in CATALOG_ONLY:
            continue
        assert key in ours, f"{key[0].upper()} {key[1]} of the standard is missing from schemas/openapi.yaml"
        assert ours[key]["operationId"] == op["operationId"]
        for code in op.get("responses", {}):
            assert code in ours[key]["responses"], f"{key}: status {code} of the standard is not documented"


def test_app_routes_are_exactly_the_documented_operations():
    app = create_app(service=None)
    routed = set()
    for route in app.routes:
        if getattr(route, "include_in_schema", False):
            path = route.path.replace("{execution_id}", "{id}")
            routed |= {(m.lower(), path) for m in route.methods}
    assert routed == set(_operations(load_openapi()))


def test_served_document_is_ours_and_self_contained():
    from fastapi.testclient import TestClient

    with TestClient(create_app(service=None)) as client:
        served = client.get("/openapi.json").json()
    assert served == load_openapi()
    on_disk = yaml.safe_load((REPO / "schemas" / "openapi.yaml").read_text(encoding="utf-8"))
    assert served["info"] == on_disk["info"]
    refs = set(_refs(served))
    assert refs and all(ref.startswith("#/components/") for ref in refs)
    for ref in refs:  # every pointer resolves inside the document
        node = served
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]


def test_on_disk_document_refers_to_our_schema_files():
    on_disk = yaml.safe_load((REPO / "schemas" / "openapi.yaml").read_text(encoding="utf-8"))
    files = {ref.partition("#")[0] for ref in _refs(on_disk) if not ref.startswith("#")}
    assert files, "bodies should reference the schema files beside the document"
    for name in files:
        assert (REPO / "schemas" / name).is_file(), name
