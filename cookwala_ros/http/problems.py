"""RFC 9457 problem documents for the Core HTTP API.

Every error answer of the device API is one of these: a JSON object with `type`, `title`,
`status`, `detail`, our machine-readable `code`, and, when one field is to blame, the JSON
pointer of that field (`pointer`) plus the full list of problems (`errors: [{pointer, detail}]`).
A refusal is never a problem: it is a normal 202 ExecutionStatus with state `refused`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

PROBLEM_MEDIA_TYPE = "application/problem+json"
PROBLEM_BASE = "https://cookwala-ros.org/problems/"
MAX_ECHO_CHARS = 200  # what a problem repeats of the client's input (a 64 KiB id is not sent back whole)

# code -> (HTTP status, title). Service codes come from the executor contract.
CODES: dict[str, tuple[int, str]] = {
    "invalid_request": (400, "The request is not valid"),
    "malformed_json": (400, "The body is not JSON"),
    "json_too_deep": (400, "The body is nested too deeply"),
    "bad_request": (400, "The HTTP request is malformed"),
    "invalid_header": (400, "A request header is not valid"),
    "idempotency_mismatch": (400, "Idempotency-Key header and body disagree"),
    "unauthorized": (401, "Authentication required"),
    "not_found": (404, "No such resource"),
    "method_not_allowed": (405, "Method not allowed"),
    "not_acceptable": (406, "Cannot answer in an acceptable media type"),
    "request_timeout": (408, "The request body did not arrive in time"),
    "idempotency_conflict": (409, "Idempotency-Key reused with a different request"),
    "request_conflict": (409, "Request id already used with another Idempotency-Key"),
    "invalid_state": (409, "Not possible in the execution's current state"),
    "precondition_failed": (412, "If-Match does not match the current seq"),
    "payload_too_large": (413, "Request body too large"),
    "uri_too_long": (414, "Request target too long"),
    "unsupported_media_type": (415, "Unsupported request media type"),
    "precondition_required": (428, "If-Match is required"),
    "header_fields_too_large": (431, "Request header fields too large"),
    "internal_error": (500, "Internal error"),
    "unavailable": (503, "The executor is not available"),
}


class Problem(Exception):
    """An error answer; raise it anywhere in a handler and the app renders it."""

    def __init__(self, code: str, detail: str, *, status: int | None = None, pointer: str | None = None,
                 errors: Iterable[dict[str, str]] | None = None, header: str | None = None,
                 extra: dict[str, Any] | None = None):
        known_status, title = CODES.get(code, (status or 500, code.replace("_", " ").capitalize()))
        self.code = code
        self.status = int(status or known_status)
        self.title = title
        self.detail = detail
        self.pointer = pointer
        self.errors = list(errors) if errors is not None else None
        self.header = header
        self.extra = dict(extra or {})
        super().__init__(f"{self.status} {code}: {detail}")

    def document(self, instance: str | None = None) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "type": PROBLEM_BASE + self.code,
            "title": self.title,
            "status": self.status,
            "detail": clip(self.detail, 4 * MAX_ECHO_CHARS),
            "code": self.code,
        }
        if instance:
            doc["instance"] = clip(instance)
        if self.pointer is not None:
            doc["pointer"] = self.pointer
        if self.header is not None:
            doc["header"] = self.header
        errors = self.errors
        if errors is None and self.pointer is not None:
            errors = [{"pointer": self.pointer, "detail": self.detail}]
        if errors:
            doc["errors"] = errors
        doc.update(self.extra)
        return doc


def clip(text: str, limit: int = MAX_ECHO_CHARS) -> str:
    """`text` cut to `limit` characters, saying how long it was."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def problem_bytes(problem: Problem, instance: str | None = None) -> bytes:
    """The problem document as UTF-8 JSON (lone surrogates from a client's input escaped)."""
    return json_bytes(problem.document(instance=instance))


def json_bytes(document: Any) -> bytes:
    """Compact UTF-8 JSON; a string with a lone surrogate (valid JSON input) falls back to \\u escapes."""
    try:
        return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(document, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def from_service_error(exc: BaseException) -> Problem:
    """Turn the executor's ServiceError(code, status, detail, pointer) into a Problem."""
    code = str(getattr(exc, "code", "") or "internal_error")
    status = getattr(exc, "status", None)
    detail = str(getattr(exc, "detail", "") or exc)
    pointer = getattr(exc, "pointer", None)
    return Problem(code, detail, status=int(status) if status else None, pointer=pointer or None)


def from_issues(issues: Iterable[Any], what: str, prefix: str = "") -> Problem:
    """A 400 for schema issues (core.schemas.ValidationIssue): first one in `detail`, all in `errors`."""
    errors = [{"pointer": prefix + issue.pointer, "detail": issue.message} for issue in issues]
    first = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    where = first["pointer"] or "(body)"
    return Problem("invalid_request", f"{what} is invalid at {where}: {first['detail']}{more}",
                   pointer=first["pointer"], errors=errors)
