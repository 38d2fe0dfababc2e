"""Schemas work with no network at all, and the committed one-file bundle matches the sources."""

from __future__ import annotations

import json
import pathlib
import socket

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from cookwala_ros.core import schemas
from cookwala_ros.resources import share_path

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for d in ("recipes", "requests", "capabilities", "events", "documents")
                  for p in (REPO / "examples" / d).rglob("*.json"))


def documents():
    return [json.loads(p.read_text(encoding="utf-8")) for p in EXAMPLES]


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a socket or resolve a name fails the test loudly."""
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("network access attempted during schema validation")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    yield attempts
    assert attempts == []


def test_loading_and_validating_every_kind_needs_no_network(no_network):
    loaded = schemas.SchemaSet.from_directory(share_path("schemas"))  # fresh: nothing cached
    seen = set()
    for document in documents():
        kind = schemas.infer_kind(document)
        seen.add(kind)
        assert loaded.validate(document) == []
        broken = dict(document, unknownMember=1)
        assert [i.pointer for i in loaded.validate(broken, kind)] == ["/unknownMember"]
    assert loaded.validate("busy", "RefusalReason") == []
    assert seen | {"RefusalReason"} == set(schemas.KINDS)


def test_bundle_validation_needs_no_network(no_network):
    from_bundle = schemas.SchemaSet.from_bundle(share_path("schemas", "bundle.json"))
    for document in documents():
        assert from_bundle.validate(document) == []


def test_a_foreign_ref_is_never_fetched(no_network):
    """Unknown $refs fail at load time with our error; referencing is never asked to retrieve."""
    loaded = dict(schemas.default_schemas().schemas)
    uri = schemas.SCHEMA_BASE + "signature.schema.json"
    loaded[uri] = dict(loaded[uri], properties={"alg": {"$ref": "https://json-schema.org/draft/2020-12/schema"}})
    with pytest.raises(schemas.SchemaSetError, match="does not resolve"):
        schemas.SchemaSet(loaded)


def test_committed_bundle_is_up_to_date():
    committed = share_path("schemas", "bundle.json").read_text(encoding="utf-8")
    assert json.loads(committed) == schemas.bundle(), "run `cookwala-ros schemas bundle`"
    assert committed == schemas.bundle_text(), "run `cookwala-ros schemas bundle`"


def test_bundle_holds_every_schema_file_once():
    bundle = schemas.bundle()
    files = sorted(p.name for p in share_path("schemas").glob("*.schema.json"))
    assert sorted(bundle["$defs"]) == files
    assert all(bundle["$defs"][name]["$id"] == schemas.SCHEMA_BASE + name for name in files)


def test_bundle_alone_validates_like_the_sources_with_a_generic_validator():
    """A third party with only bundle.json and plain jsonschema gets the same verdicts."""
    bundle = json.loads(share_path("schemas", "bundle.json").read_text(encoding="utf-8"))
    registry = Registry().with_resource(schemas.BUNDLE_ID, Resource.from_contents(bundle)).crawl()
    for document in documents():
        kind = schemas.infer_kind(document)
        validator = Draft202012Validator({"$ref": schemas.SCHEMA_BASE + schemas.KINDS[kind]}, registry=registry)
        assert validator.is_valid(document), kind
        assert not validator.is_valid(dict(document, unknownMember=1)), kind


def test_bundle_and_sources_report_the_same_issues():
    from_bundle = schemas.SchemaSet.from_bundle(schemas.bundle())
    recipe = json.loads((REPO / "examples/recipes/tomato-soup.cookwala.json").read_text(encoding="utf-8"))
    recipe["process"]["nodes"][2]["params"]["target"]["unit"] = "degF"
    recipe["process"]["nodes"][2]["params"]["tempC"] = "hot"
    recipe["yield"]["colour"] = "red"
    assert from_bundle.validate(recipe) == schemas.validate(recipe)
    assert {i.pointer for i in from_bundle.validate(recipe)} == {
        "/process/nodes/2/params/target/unit", "/process/nodes/2/params/tempC", "/yield/colour"}


def test_a_bundle_from_elsewhere_is_refused():
    with pytest.raises(schemas.SchemaSetError, match="bundle"):
        schemas.SchemaSet.from_bundle({"$id": "https://example.org/other.json", "$defs": {}})
