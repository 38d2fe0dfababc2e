"""Validation of Cookwala Core 0.2 documents against the project's own JSON Schemas.

The schemas live in the package's share directory (`schemas/*.schema.json`, one file per
document kind plus shared parts) and are also published as one self-contained bundle
(`schemas/bundle.json`). Both load into an offline `referencing` registry: a `$ref` that is
not one of ours is an error at load time, never a download.

Every problem comes back as a `ValidationIssue` naming the JSON pointer of the bad member, so
HTTP problem documents, CLI output and refusals can say exactly what is wrong.
"""

from __future__ import annotations

import ast
import datetime
import functools
import json
import pathlib
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource, Unresolvable
from referencing.jsonschema import DRAFT202012

SCHEMA_BASE = "https://cookwala-ros.org/schemas/0.2/"
BUNDLE_ID = SCHEMA_BASE + "bundle.json"
SCHEMA_GLOB = "*.schema.json"
OP_PARAMS_ID = SCHEMA_BASE + "op-params.schema.json"

# Document kind -> schema file (its $id is SCHEMA_BASE + file). Names follow the standard.
KINDS: dict[str, str] = {
    "Recipe": "recipe-document.schema.json",
    "ExecuteRequest": "execute-request.schema.json",
    "StopRequest": "stop-request.schema.json",
    "ExecutionStatus": "execution-status.schema.json",
    "ExecutionLog": "execution-log.schema.json",
    "RefusalReason": "refusal-reason.schema.json",
    "SafetyLimits": "safety-limits.schema.json",
    "Capabilities": "device-capabilities.schema.json",
    "KeyRecord": "key-record.schema.json",
    "Signature": "signature.schema.json",
    "AgentMandate": "agent-mandate.schema.json",
    "Recall": "recall.schema.json",
    "IncidentReport": "incident-report.schema.json",
    "CloudEvent": "cloudevent.schema.json",
}

# Kinds a document names in its own `kind` member; the others are recognised by shape.
_SELF_NAMED = {"ExecuteRequest", "StopRequest", "ExecutionStatus", "ExecutionLog", "SafetyLimits",
               "Recall", "IncidentReport"}


class SchemaSetError(RuntimeError):
    """The schema files themselves are broken (bad JSON, duplicate $id, unresolvable $ref)."""


@dataclass(frozen=True, order=True)
class ValidationIssue:
    """One problem in a document: where (RFC 6901 pointer, "" = the whole document) and what."""

    pointer: str
    message: str
    keyword: str = ""

    def __str__(self) -> str:
        return f"{self.pointer or '(document)'}: {self.message}"


class DocumentInvalid(ValueError):
    """A document broke its schema; `issues` lists every problem found."""

    def __init__(self, kind: str | None, issues: list[ValidationIssue]):
        self.kind = kind
        self.issues = list(issues)
        first = str(self.issues[0]) if self.issues else "invalid"
        more = f" (and {len(self.issues) - 1} more)" if len(self.issues) > 1 else ""
        super().__init__(f"invalid {kind or 'document'}: {first}{more}")


def normalize_kind(name: str) -> str:
    """Map a user-typed kind ('execute-request', 'executerequest', 'ExecuteRequest') to its name."""
    key = re.sub(r"[-_\s]", "", name).lower()
    for kind in KINDS:
        if kind.lower() == key:
            return kind
    raise ValueError(f"unknown document kind {name!r}; choose from {', '.join(KINDS)}")


def infer_kind(document: Any) -> str | None:
    """The kind of a document: its `kind` member for Core objects, else its shape."""
    if isinstance(document, str):
        return "RefusalReason"
    if not isinstance(document, dict):
        return None
    declared = document.get("kind")
    if isinstance(declared, str) and declared in _SELF_NAMED:
        return declared
    if "specversion" in document:
        return "CloudEvent"
    if "process" in document or ("cookwala" in document and "ingredients" in document):
        return "Recipe"
    if "capabilities" in document and "actor" in document:
        return "Capabilities"
    if "publicKey" in document and "kid" in document:
        return "KeyRecord"
    if "sig" in document and "kid" in document:
        return "Signature"
    if "principal" in document and "scopes" in document:
        return "AgentMandate"
    return None


def _kind_problem(document: Any) -> ValidationIssue:
    declared = document.get("kind") if isinstance(document, dict) else None
    if isinstance(declared, str):
        return ValidationIssue("/kind", f"{declared!r} is not a Core 0.2 document kind this validator knows "
                                        f"({', '.join(sorted(_SELF_NAMED))})", "kind")
    if not isinstance(document, dict):
        return ValidationIssue("", f"a Cookwala document is a JSON object, not {_json_type(document)}", "type")
    return ValidationIssue("", "cannot tell which Cookwala document this is (no `kind` member and no "
                               "recognisable shape); give the kind explicitly", "kind")


# --- formats --------------------------------------------------------------------------------

_DATE_TIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$")


def _is_date_time(value: str) -> bool:
    """RFC 3339 date-time (leap second allowed), without relying on fromisoformat's version quirks."""
    match = _DATE_TIME.match(value)
    if not match:
        return False
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    off_h, off_m = (int(g) if g else 0 for g in match.groups()[7:])
    try:
        datetime.date(year, month, day)
    except ValueError:
        return False
    return hour < 24 and minute < 60 and second <= 60 and off_h < 24 and off_m < 60


def _format_checker() -> FormatChecker:
    """RFC 3339 date-time/date and absolute URIs, checked with the standard library only."""
    checker = FormatChecker(formats=())

    @checker.checks("date-time")
    def _date_time(value: object) -> bool:
        return not isinstance(value, str) or _is_date_time(value)

    @checker.checks("date", raises=ValueError)
    def _date(value: object) -> bool:
        if not isinstance(value, str):
            return True
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            return False
        datetime.date.fromisoformat(value)
        return True

    @checker.checks("uri")
    def _uri(value: object) -> bool:
        return not isinstance(value, str) or bool(_URI.match(value))

    return checker


# --- errors -> issues -----------------------------------------------------------------------

def _pointer(path: Iterable[Any]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


_EXTRAS = re.compile(r"\((.*) (?:was|were) unexpected\)")


def _unexpected_names(error: ValidationError) -> list[str] | None:
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known, patterns = error.schema.get("properties", {}), error.schema.get("patternProperties", {})
        return sorted(k for k in error.instance if k not in known and not any(re.search(p, k) for p in patterns))
    match = _EXTRAS.search(error.message)
    if not match:
        return None
    try:
        names = ast.literal_eval("[" + match.group(1) + "]")
    except (ValueError, SyntaxError):
        return None
    return [str(n) for n in names]


def _message(error: ValidationError) -> str:
    custom = error.schema.get("errorMessage") if isinstance(error.schema, dict) else None
    if custom:
        return f"{custom} (got {json.dumps(error.instance)[:80]})"
    if error.validator == "type":
        wanted = error.validator_value
        wanted = " or ".join(wanted) if isinstance(wanted, list) else wanted
        return f"must be {wanted}, not {_json_type(error.instance)} ({json.dumps(error.instance)[:60]})"
    if error.validator == "enum":
        values = [json.dumps(v) for v in error.validator_value]
        shown = ", ".join(values[:8]) + (f", ... ({len(values)} values)" if len(values) > 8 else "")
        return f"{json.dumps(error.instance)[:60]} is not one of {shown}"
    if error.validator == "const":
        return f"must be {json.dumps(error.validator_value)}, not {json.dumps(error.instance)[:60]}"
    if error.validator == "format":
        return f"{json.dumps(error.instance)[:60]} is not a valid {error.validator_value}"
    return error.message


def _without_shadowed(issues: set[ValidationIssue]) -> list[ValidationIssue]:
    """Drop "unknown field" reports for members that are known but invalid (reported themselves)."""
    pointers = {i.pointer for i in issues if i.keyword != "unevaluatedProperties"}
    return sorted(i for i in issues if i.keyword != "unevaluatedProperties"
                  or not any(p == i.pointer or p.startswith(i.pointer + "/") for p in pointers))


def _explain(error: ValidationError) -> Iterator[ValidationIssue]:
    has_custom = isinstance(error.schema, dict) and "errorMessage" in error.schema
    if error.validator in ("anyOf", "oneOf") and error.context and not has_custom:
        # Explain the alternative that got furthest into the document (ties: fewest problems).
        branches: dict[Any, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        chosen = max(branches.values(), key=lambda errs: (max(len(e.absolute_path) for e in errs), -len(errs)))
        for sub in chosen:
            yield from _explain(sub)
        return
    where = _pointer(error.absolute_path)
    if error.validator in ("unevaluatedProperties", "additionalProperties") and error.validator_value is False:
        names = _unexpected_names(error)
        if names:
            for name in names:
                yield ValidationIssue(f"{where}/{_pointer([name])[1:]}",
                                      f"unknown field {name!r} (only x- extension fields may be added)",
                                      error.validator)
            return
    if error.validator == "required":
        match = re.match(r"^'(.*)' is a required property$", error.message)
        if match:
            yield ValidationIssue(f"{where}/{_pointer([match.group(1)])[1:]}",
                                  f"required field {match.group(1)!r} is missing", "required")
            return
    yield ValidationIssue(where, _message(error), str(error.validator))


# --- the schema set -------------------------------------------------------------------------

def _refuse_retrieval(uri: str):
    raise NoSuchResource(ref=uri)


def _walk_refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _walk_refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk_refs(item)


# Keywords that apply subschemas to the same instance; their `properties` count as evaluated.
_IN_PLACE = ("allOf", "anyOf", "oneOf", "if", "then", "else", "not")
_OPENING = {"$ref", "$dynamicRef", "patternProperties", "additionalProperties", "unevaluatedProperties",
            "dependentSchemas"}


def _stays_inside(node: dict, names: set) -> bool:
    """True when the in-place subschemas of `node` can only evaluate members named in `names`."""
    for key in _IN_PLACE:
        subs = node.get(key)
        for sub in subs if isinstance(subs, list) else [subs] if subs is not None else []:
            if not isinstance(sub, dict):
                continue
            if _OPENING & sub.keys() or not set(sub.get("properties", {})) <= names:
                return False
            if not _stays_inside(sub, names):
                return False
    return True


def _compiled(node: Any) -> Any:
    """A copy that validates the same but faster: `unevaluatedProperties: false` becomes
    `additionalProperties: false` wherever nothing beside `properties`/`patternProperties` could
    evaluate other members (then both keywords reject exactly the same members)."""
    if isinstance(node, list):
        return [_compiled(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _compiled(value) if key not in ("const", "enum") else value for key, value in node.items()}
    if out.get("unevaluatedProperties") is False and not {"$ref", "$dynamicRef", "dependentSchemas",
                                                          "additionalProperties"} & out.keys() \
            and _stays_inside(out, set(out.get("properties", {}))):
        del out["unevaluatedProperties"]
        out["additionalProperties"] = False
    return out


_ANNOTATIONS = {"description", "title", "$comment", "examples", "default"}


def _inlined(schemas: Mapping[str, dict]) -> dict[str, dict]:
    """Copies with every non-recursive $ref replaced by its target (fewer lookups per validation).

    Recursive references (a Quantity's massPerPiece, nested conditions, nodes inside prep tasks)
    stay as absolute $refs into the registry; JSON pointers into $defs are unchanged by inlining.
    """

    def target(uri: str) -> Any:
        doc_uri, _, fragment = uri.partition("#")
        node: Any = schemas[doc_uri]
        for part in fragment.lstrip("/").split("/") if fragment.strip("/") else []:
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def walk(node: Any, base: str, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(item, base, stack) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return {k: walk(v, base, stack) if k not in ("const", "enum") else v for k, v in node.items()}
        absolute = urljoin(base, ref)
        siblings = {k: walk(v, base, stack) for k, v in node.items() if k != "$ref" and k not in _ANNOTATIONS}
        if absolute in stack:
            return {"$ref": absolute, **siblings}
        resolved = walk(target(absolute), absolute.partition("#")[0], stack + (absolute,))
        if not siblings:
            return resolved
        return {"allOf": [resolved], **siblings}

    return {uri: walk(contents, uri, (uri + "#",)) for uri, contents in schemas.items()}


class SchemaSet:
    """Our schemas, an offline registry over them, and cached validators per document kind."""

    def __init__(self, schemas: Mapping[str, dict]):
        """`schemas` maps each schema's $id to its contents."""
        self.schemas: dict[str, dict] = dict(schemas)
        registry: Registry = Registry(retrieve=_refuse_retrieval)
        for uri, contents in self.schemas.items():
            registry = registry.with_resource(uri, Resource(contents=contents, specification=DRAFT202012))
        self.registry = registry.crawl()
        self._check_refs()
        # Validation runs on an equivalent, faster form; self.schemas stay as written.
        fast: Registry = Registry(retrieve=_refuse_retrieval)
        for uri, contents in _inlined(self.schemas).items():
            fast = fast.with_resource(uri, Resource(contents=_compiled(contents), specification=DRAFT202012))
        self._fast_registry = fast.crawl()
        missing = [k for k, f in KINDS.items() if SCHEMA_BASE + f not in self.schemas]
        if missing:
            raise SchemaSetError(f"no schema for kinds {', '.join(missing)}")
        self._validators: dict[str, Draft202012Validator] = {}
        self._lock = threading.Lock()
        self._formats = _format_checker()

    @classmethod
    def from_directory(cls, directory: str | pathlib.Path) -> SchemaSet:
        directory = pathlib.Path(directory)
        schemas: dict[str, dict] = {}
        for path in sorted(directory.glob(SCHEMA_GLOB)):
            try:
                contents = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise SchemaSetError(f"cannot load schema {path}: {exc}") from exc
            uri = contents.get("$id") if isinstance(contents, dict) else None
            if uri != SCHEMA_BASE + path.name:
                raise SchemaSetError(f"{path}: $id must be {SCHEMA_BASE + path.name!r}, not {uri!r}")
            schemas[uri] = contents
        if not schemas:
            raise SchemaSetError(f"no {SCHEMA_GLOB} files in {directory}")
        return cls(schemas)

    @classmethod
    def from_bundle(cls, bundle: dict | str | pathlib.Path) -> SchemaSet:
        if not isinstance(bundle, dict):
            bundle = json.loads(pathlib.Path(bundle).read_text(encoding="utf-8"))
        if bundle.get("$id") != BUNDLE_ID:
            raise SchemaSetError(f"not a cookwala_ros schema bundle ($id {bundle.get('$id')!r})")
        return cls({s["$id"]: s for s in bundle.get("$defs", {}).values()})

    def _check_refs(self) -> None:
        for uri, contents in self.schemas.items():
            resolver = self.registry.resolver(base_uri=uri)
            for ref in set(_walk_refs(contents)):
                try:
                    resolver.lookup(ref)
                except Unresolvable as exc:
                    raise SchemaSetError(f"{uri}: $ref {ref!r} does not resolve to one of our schemas") from exc

    def bundle(self) -> dict:
        """Every schema in one document, each under $defs by file name with its own $id."""
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": BUNDLE_ID,
            "title": "cookwala_ros Core 0.2 schemas (offline bundle)",
            "description": "All cookwala_ros document schemas in one file; each embedded schema keeps its "
                           "$id, so $refs resolve inside this document without any network access. "
                           "Generated by `cookwala-ros schemas bundle`; edit the *.schema.json sources.",
            "$defs": {uri[len(SCHEMA_BASE):]: self.schemas[uri] for uri in sorted(self.schemas)},
        }

    def validator(self, kind: str) -> Draft202012Validator:
        kind = normalize_kind(kind)
        found = self._validators.get(kind)
        if found is None:
            with self._lock:
                found = self._validators.get(kind)
                if found is None:
                    found = self._validator_for(SCHEMA_BASE + KINDS[kind])
                    self._validators[kind] = found
        return found

    def _validator_for(self, uri: str) -> Draft202012Validator:
        # A whole file is used as is (it has its $id); a part of one through an absolute $ref.
        schema = self._fast_registry.contents(uri) if "#" not in uri else {"$ref": uri}
        return Draft202012Validator(schema, registry=self._fast_registry, format_checker=self._formats)

    def _op_params_validator(self, op: str) -> Draft202012Validator | None:
        key = "op:" + op
        found = self._validators.get(key)
        if found is None:
            if op not in self.schemas.get(OP_PARAMS_ID, {}).get("$defs", {}):
                return None
            with self._lock:
                found = self._validator_for(f"{OP_PARAMS_ID}#/$defs/{op}")
                self._validators[key] = found
        return found

    def _op_params_issues(self, recipe: Any) -> Iterator[ValidationIssue]:
        """Each step's params against its op's parameter schema (one lookup per step)."""
        process = recipe.get("process") if isinstance(recipe, dict) else None
        nodes = process.get("nodes") if isinstance(process, dict) else None
        if not isinstance(nodes, list):
            return
        for i, node in enumerate(nodes):
            if not isinstance(node, dict):
                continue
            steps = [((i,), node)]
            alternatives = node.get("alternatives")
            if isinstance(alternatives, list):
                steps += [((i, "alternatives", j), alt) for j, alt in enumerate(alternatives) if isinstance(alt, dict)]
            for where, step in steps:
                op, params = step.get("op"), step.get("params")
                if not isinstance(op, str) or not isinstance(params, dict):
                    continue
                validator = self._op_params_validator(op)
                if validator is None:
                    continue
                prefix = _pointer(("process", "nodes") + where + ("params",))
                for error in validator.iter_errors(params):
                    for issue in _explain(error):
                        yield ValidationIssue(prefix + issue.pointer, issue.message, issue.keyword)

    def validate(self, document: Any, kind: str | None = None) -> list[ValidationIssue]:
        """All problems of `document` as `kind` (inferred when None); [] when it is valid."""
        if kind is None:
            kind = infer_kind(document)
            if kind is None:
                return [_kind_problem(document)]
        issues: set[ValidationIssue] = set()
        kind = normalize_kind(kind)
        for error in self.validator(kind).iter_errors(document):
            issues.update(_explain(error))
        if kind == "Recipe":
            issues.update(self._op_params_issues(document))
        return _without_shadowed(issues)

    def check(self, document: Any, kind: str | None = None) -> str:
        """Raise DocumentInvalid unless `document` is valid; returns the kind it was checked as."""
        resolved = normalize_kind(kind) if kind else infer_kind(document)
        issues = self.validate(document, resolved)
        if issues:
            raise DocumentInvalid(resolved, issues)
        return resolved  # type: ignore[return-value]


@functools.lru_cache(maxsize=1)
def default_schemas() -> SchemaSet:
    """The schemas shipped with the package (share_path('schemas')), loaded once."""
    from cookwala_ros.resources import share_path

    return SchemaSet.from_directory(share_path("schemas"))


def validate(document: Any, kind: str | None = None) -> list[ValidationIssue]:
    """Problems of `document` against the shipped schemas ([] = valid); kind inferred when None."""
    return default_schemas().validate(document, kind)


def check(document: Any, kind: str | None = None) -> str:
    """Raise DocumentInvalid unless valid against the shipped schemas; return the kind checked."""
    return default_schemas().check(document, kind)


def bundle() -> dict:
    """The shipped schemas as one self-contained document (what schemas/bundle.json holds)."""
    return default_schemas().bundle()


def bundle_text(bundle_doc: dict | None = None) -> str:
    """The bundle as written to schemas/bundle.json (stable formatting, trailing newline)."""
    return json.dumps(bundle() if bundle_doc is None else bundle_doc, indent=1, ensure_ascii=False) + "\n"
