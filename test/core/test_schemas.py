"""The project's Core 0.2 schemas: they load offline, accept our examples, and reject broken
documents naming the JSON pointer of the bad member."""

from __future__ import annotations

import copy
import json
import pathlib

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from cookwala_ros.core import schemas
from cookwala_ros.resources import share_path

REPO = pathlib.Path(__file__).resolve().parents[2]
# The sample documents of this module: one or more of every Core kind.
EXAMPLE_DIRS = ("recipes", "requests", "capabilities", "events", "documents")
EXAMPLES = sorted(p for d in EXAMPLE_DIRS for p in (REPO / "examples" / d).rglob("*.json"))
SCHEMA_FILES = sorted(share_path("schemas").glob("*.schema.json"))


def load(relative: str) -> dict:
    return json.loads((REPO / "examples" / relative).read_text(encoding="utf-8"))


def expected_kind(path: pathlib.Path) -> str:
    if path.name.endswith(".cookwala.json"):
        return "Recipe"
    if path.parent.name == "capabilities":
        return "Capabilities"
    if path.parent.name == "events":
        return "CloudEvent"
    by_suffix = {".key-record.json": "KeyRecord", ".signature.json": "Signature", ".mandate.json": "AgentMandate",
                 ".safety-limits.json": "SafetyLimits", ".log.json": "ExecutionLog", ".recall.json": "Recall",
                 ".incident-report.json": "IncidentReport", ".status.json": "ExecutionStatus",
                 ".refused.json": "ExecutionStatus", ".execute.json": "ExecuteRequest", "stop.json": "StopRequest"}
    return next(kind for suffix, kind in by_suffix.items() if path.name.endswith(suffix))


# --- the schema files themselves --------------------------------------------------------------

@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: p.name)
def test_schema_file_is_a_valid_2020_12_schema_with_our_id(path):
    schema = json.loads(path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == schemas.SCHEMA_BASE + path.name
    assert "cookwala.ai" not in path.read_text(encoding="utf-8"), "no reference to upstream schema ids"


def test_every_kind_has_a_schema_file():
    names = {p.name for p in SCHEMA_FILES}
    assert {f for f in schemas.KINDS.values()} <= names


def test_unresolvable_ref_is_an_error_when_schemas_load():
    loaded = copy.deepcopy(schemas.default_schemas().schemas)
    uri = schemas.SCHEMA_BASE + "stop-request.schema.json"
    loaded[uri]["properties"]["reason"] = {"$ref": "https://example.org/elsewhere.json#/$defs/Reason"}
    with pytest.raises(schemas.SchemaSetError, match="elsewhere.json"):
        schemas.SchemaSet(loaded)


def test_schema_with_wrong_id_is_rejected(tmp_path):
    for path in SCHEMA_FILES:
        (tmp_path / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    broken = json.loads((tmp_path / "recall.schema.json").read_text(encoding="utf-8"))
    broken["$id"] = "https://cookwala-ros.org/schemas/0.2/other.schema.json"
    (tmp_path / "recall.schema.json").write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(schemas.SchemaSetError, match="recall.schema.json"):
        schemas.SchemaSet.from_directory(tmp_path)


# --- valid documents --------------------------------------------------------------------------

@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(REPO / "examples")))
def test_example_is_valid_and_its_kind_is_inferred(path):
    document = json.loads(path.read_text(encoding="utf-8"))
    assert schemas.infer_kind(document) == expected_kind(path)
    assert schemas.validate(document) == []
    assert schemas.check(document) == expected_kind(path)


def test_examples_cover_every_document_kind():
    kinds = {schemas.infer_kind(json.loads(p.read_text(encoding="utf-8"))) for p in EXAMPLES}
    assert kinds | {"RefusalReason"} == set(schemas.KINDS)


def test_sample_recipe_is_a_soup_simmered_on_liquid_targets():
    recipe = load("recipes/tomato-soup.cookwala.json")
    simmers = [n for n in recipe["process"]["nodes"] if n["op"] == "cw.op.simmer"]
    assert simmers and all(n["params"]["target"]["sensor"] == "cw.sense.liquid_temp" for n in simmers)
    assert all(85 <= n["params"]["target"]["value"] <= 96 for n in simmers)  # the simmer envelope
    assert "hash" not in recipe and "signature" not in recipe


def test_sample_request_names_the_sample_recipe_by_its_hash():
    from cookwala_ros.core.trust import document_hash

    recipe, request = load("recipes/tomato-soup.cookwala.json"), load("requests/tomato-soup.execute.json")
    assert request["recipe"] == recipe["id"]
    assert request["recipeHash"] == document_hash(recipe)


def test_refusal_reason_is_a_plain_string_kind():
    assert schemas.validate("busy") == []
    issues = schemas.validate("too_hot", "RefusalReason")
    assert [i.pointer for i in issues] == [""]


# --- broken documents: the issue names the bad member -----------------------------------------

RECIPE = "recipes/tomato-soup.cookwala.json"
REQUEST = "requests/tomato-soup.execute.json"
CAPS = "capabilities/sim-kitchen-robot.json"
EVENT = "events/execution-step.json"
MANDATE = "documents/planner.mandate.json"


def set_at(document, path, value):
    *parents, last = path
    for key in parents:
        document = document[key]
    document[last] = value


def delete_at(document, path):
    *parents, last = path
    for key in parents:
        document = document[key]
    del document[last]


MUTATIONS = [
    # (id, example, mutate, pointer, words in the message)
    ("unknown-field-on-node", RECIPE, lambda d: set_at(d, ["process", "nodes", 0, "colour"], "red"),
     "/process/nodes/0/colour", "unknown field"),
    ("unknown-top-level-field", REQUEST, lambda d: set_at(d, ["priority"], 1), "/priority", "unknown field"),
    ("unknown-field-escaped", CAPS, lambda d: set_at(d, ["safety", "a/b~c"], True), "/safety/a~1b~0c",
     "unknown field"),
    ("wrong-type", REQUEST, lambda d: set_at(d, ["servings"], "four"), "/servings", "must be number"),
    ("wrong-type-in-op-params", RECIPE, lambda d: set_at(d, ["process", "nodes", 2, "params", "tempC"], "hot"),
     "/process/nodes/2/params/tempC", "must be number"),
    ("bad-enum-in-op-params", RECIPE, lambda d: set_at(d, ["process", "nodes", 2, "params", "lid"], "half"),
     "/process/nodes/2/params/lid", "is not one of"),
    ("float-money", MANDATE, lambda d: set_at(d, ["spendCap", "amount"], 25.0), "/spendCap/amount",
     "decimal string"),
    ("float-money-in-request-mandate", REQUEST,
     lambda d: set_at(d, ["mandate"], {**load(MANDATE), "perOrderCap": {"amount": 9.5, "currency": "EUR"}}),
     "/mandate/perOrderCap/amount", "decimal string"),
    ("fahrenheit-target", RECIPE, lambda d: set_at(d, ["process", "nodes", 2, "params", "target", "unit"], "degF"),
     "/process/nodes/2/params/target/unit", "degC"),
    ("fahrenheit-reading", EVENT, lambda d: set_at(d, ["data", "step", "readings", 0, "unit"], "degF"),
     "/data/step/readings/0/unit", "degC"),
    ("relative-tolerance-on-celsius", RECIPE,
     lambda d: set_at(d, ["yield", "totalMass"], {"value": 90, "unit": "degC", "tolerance": 0.05}),
     "/yield/totalMass/unit", "relative tolerance"),
    ("both-tolerances", RECIPE,
     lambda d: set_at(d, ["ingredients", 0, "qty"], {"value": 20, "unit": "ml", "tolerance": 0.1, "toleranceAbs": 2}),
     "/ingredients/0/qty", "not both"),
    ("relative-tolerance-above-one", RECIPE, lambda d: set_at(d, ["ingredients", 0, "qty", "tolerance"], 1.5),
     "/ingredients/0/qty/tolerance", "1.5"),
    ("placeholder-threshold", RECIPE,
     lambda d: set_at(d, ["process", "nodes", 0, "until", "all", 0, "gte"], "{pan_temp}"),
     "/process/nodes/0/until/all/0/gte", "must be number"),
    ("bad-on-sensor-missing", RECIPE,
     lambda d: set_at(d, ["process", "nodes", 0, "until", "onSensorMissing"], "guess"),
     "/process/nodes/0/until/onSensorMissing", "is not one of"),
    ("bad-duration", RECIPE, lambda d: set_at(d, ["process", "nodes", 0, "until", "minTime"], "5 minutes"),
     "/process/nodes/0/until/minTime", "ISO 8601"),
    ("missing-required", REQUEST, lambda d: delete_at(d, ["idempotencyKey"]), "/idempotencyKey",
     "required field 'idempotencyKey' is missing"),
    ("missing-required-in-node", RECIPE, lambda d: delete_at(d, ["process", "nodes", 1, "op"]),
     "/process/nodes/1/op", "required field"),
    ("short-idempotency-key", REQUEST, lambda d: set_at(d, ["idempotencyKey"], "abc"), "/idempotencyKey",
     "too short"),
    ("bad-hash", REQUEST, lambda d: set_at(d, ["recipeHash"], "sha256:ABC"), "/recipeHash", "sha256:"),
    ("bad-date-time", REQUEST, lambda d: set_at(d, ["serveBy"], "2026-13-01T19:00:00Z"), "/serveBy", "date-time"),
    ("other-core-minor", REQUEST, lambda d: set_at(d, ["core"], "0.3.0"), "/core", "0.2.x"),
    ("wrong-kind-const", REQUEST, lambda d: set_at(d, ["kind"], "ExecuteRequest "), "/kind", "must be"),
    ("legacy-step-capability", CAPS, lambda d: set_at(d, ["capabilities", "ops", 0, "op"], "cw.op.legacy_step"),
     "/capabilities/ops/0/op", ""),
    ("unknown-event-type", EVENT, lambda d: set_at(d, ["type"], "cookwala.kitchen.exploded"), "/type",
     "not a Cookwala event type"),
    ("execution-event-without-seq", EVENT, lambda d: delete_at(d, ["data", "seq"]), "/data/seq", "required"),
    ("safety-event-needs-safety-priority", EVENT,
     lambda d: (set_at(d, ["type"], "cookwala.safety.overtemp"),
                set_at(d, ["data"], {"level": "alarm", "action": "heat_off_all"})),
     "/cookwalapriority", "safety"),
    ("negative-seq", EVENT, lambda d: set_at(d, ["cookwalaseq"], -1), "/cookwalaseq", "minimum"),
    ("bad-latency-class", EVENT, lambda d: set_at(d, ["cookwalalatency"], "soon"), "/cookwalalatency",
     "is not one of"),
]


@pytest.mark.parametrize("example, mutate, pointer, words", [m[1:] for m in MUTATIONS], ids=[m[0] for m in MUTATIONS])
def test_mutation_is_rejected_at_the_bad_member(example, mutate, pointer, words):
    document = load(example)
    kind = schemas.infer_kind(document)
    mutate(document)
    issues = schemas.validate(document, kind)
    assert issues, "the mutated document must be invalid"
    at_pointer = [i for i in issues if i.pointer == pointer]
    assert at_pointer, f"expected an issue at {pointer}, got {[str(i) for i in issues]}"
    assert any(words.lower() in i.message.lower() for i in at_pointer), [str(i) for i in at_pointer]
    with pytest.raises(schemas.DocumentInvalid) as raised:
        schemas.check(document, kind)
    assert raised.value.issues == issues and raised.value.kind == kind
    assert pointer in str(raised.value) or len(issues) > 1


EXTENSIONS = [
    (RECIPE, ["x-acme-foo"]),
    (RECIPE, ["process", "nodes", 0, "x-acme-foo"]),
    (RECIPE, ["process", "nodes", 2, "params", "target", "x-acme-foo"]),
    (RECIPE, ["ingredients", 0, "qty", "x-acme-foo"]),
    (REQUEST, ["x-acme-foo"]),
    (CAPS, ["capabilities", "sensors", 0, "x-acme-foo"]),
    (EVENT, ["data", "step", "x-acme-foo"]),
    ("requests/stop.json", ["x-acme-foo"]),
]


@pytest.mark.parametrize("example, path", EXTENSIONS, ids=lambda v: "/".join(map(str, v)) if isinstance(v, list) else v)
def test_x_extension_fields_are_accepted(example, path):
    document = load(example)
    set_at(document, path, {"anything": [1, "two"]})
    assert schemas.validate(document) == []


def test_absolute_tolerance_on_celsius_is_accepted():
    recipe = load(RECIPE)
    recipe["yield"]["totalMass"] = {"value": 90, "unit": "degC", "toleranceAbs": 2}
    assert schemas.validate(recipe) == []


def test_every_problem_is_reported_not_only_the_first():
    request = load(REQUEST)
    request["servings"] = "four"
    request["colour"] = "red"
    del request["requestedBy"]
    pointers = {i.pointer for i in schemas.validate(request)}
    assert {"/servings", "/colour", "/requestedBy"} <= pointers


# --- kinds ------------------------------------------------------------------------------------

def test_unknown_declared_kind_is_an_issue_at_kind():
    issues = schemas.validate({"core": "0.2.0", "kind": "Certification", "id": "c-1"})
    assert [i.pointer for i in issues] == ["/kind"]
    assert "Certification" in issues[0].message


@pytest.mark.parametrize("document", [[1, 2], 42, None, {"hello": "world"}], ids=["array", "number", "null", "object"])
def test_unrecognisable_document_is_an_issue_at_the_root(document):
    issues = schemas.validate(document)
    assert len(issues) == 1 and issues[0].pointer == ""
    with pytest.raises(schemas.DocumentInvalid):
        schemas.check(document)


def test_explicit_kind_wins_over_inference():
    request = load(REQUEST)
    issues = schemas.validate(request, "StopRequest")
    assert "/execution" in {i.pointer for i in issues}


@pytest.mark.parametrize("typed, kind", [("execute-request", "ExecuteRequest"), ("EXECUTEREQUEST", "ExecuteRequest"),
                                         ("cloud_event", "CloudEvent"), ("Recipe", "Recipe")])
def test_kind_names_are_forgiving(typed, kind):
    assert schemas.normalize_kind(typed) == kind


def test_unknown_kind_name_raises():
    with pytest.raises(ValueError, match="Pizza"):
        schemas.validate({}, "Pizza")


# --- faithful fast path -----------------------------------------------------------------------

def plain_registry() -> Registry:
    loaded = schemas.default_schemas().schemas
    return Registry().with_resources((uri, Resource.from_contents(s)) for uri, s in loaded.items())


def mutated_documents():
    for _, example, mutate, _, _ in MUTATIONS:
        document = load(example)
        kind = schemas.infer_kind(document)
        mutate(document)
        yield kind, document
    for path in EXAMPLES:
        document = json.loads(path.read_text(encoding="utf-8"))
        yield schemas.infer_kind(document), document


def test_fast_validation_agrees_with_plain_jsonschema_on_the_sources():
    """Validation runs on an inlined, compiled copy; its verdicts equal those of the files as written."""
    registry = plain_registry()
    ops = schemas.default_schemas().schemas[schemas.OP_PARAMS_ID]["$defs"]
    for kind, document in mutated_documents():
        plain = Draft202012Validator({"$ref": schemas.SCHEMA_BASE + schemas.KINDS[kind]}, registry=registry,
                                     format_checker=Draft202012Validator.FORMAT_CHECKER)
        plain_ok = plain.is_valid(document)
        if kind == "Recipe" and plain_ok:
            for node in document["process"]["nodes"]:
                if node.get("op") in ops and "params" in node:
                    params_validator = Draft202012Validator(
                        {"$ref": f"{schemas.OP_PARAMS_ID}#/$defs/{node['op']}"}, registry=registry)
                    plain_ok = plain_ok and params_validator.is_valid(node["params"])
        if document.get("serveBy", "").startswith("2026-13"):
            plain_ok = False  # plain jsonschema checks date-time only with an optional extra package
        assert (schemas.validate(document, kind) == []) == plain_ok, (kind, document)


def test_validators_are_cached():
    loaded = schemas.default_schemas()
    assert loaded.validator("Recipe") is loaded.validator("recipe")
