"""RFC 8785 (JCS) canonical JSON, the byte form every Cookwala hash and signature covers.

The canonical text comes from the `rfc8785` package, which passes every upstream hash vector
(the RFC 8785 example, UTF-16 key order, ECMAScript number layout). This module adds what the
package leaves out: errors that name the JSON pointer of the value that cannot be
canonicalised, and a strict JSON reader (no duplicate keys, no NaN/Infinity) so a document is
never hashed in a form other readers would parse differently.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import rfc8785

MAX_SAFE_INTEGER = 2**53 - 1


class CanonicalError(ValueError):
    """A value has no RFC 8785 form. `code` is a stable reason, `pointer` the JSON pointer."""

    def __init__(self, code: str, pointer: str, detail: str) -> None:
        self.code = code
        self.pointer = pointer
        super().__init__(f"{pointer or '/'}: {detail}")


def _pointer(parts: list[str]) -> str:
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def _find_problem(value: Any, path: list[str]) -> CanonicalError | None:
    """Walk `value` and describe the first thing JCS cannot encode."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            return CanonicalError(
                "integer_out_of_range", _pointer(path),
                f"integer {value} is beyond 2^53-1; a JSON reader using doubles would round it "
                "(send it as a string)",
            )
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return CanonicalError("non_finite_number", _pointer(path), f"{value} is not a JSON number")
        return None
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return CanonicalError("invalid_unicode", _pointer(path), "string holds an unpaired UTF-16 surrogate")
        return None
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            problem = _find_problem(item, path + [str(i)])
            if problem:
                return problem
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return CanonicalError("non_string_key", _pointer(path), f"object key {key!r} is not a string")
            try:
                key.encode("utf-8")
            except UnicodeEncodeError:
                return CanonicalError("invalid_unicode", _pointer(path), f"key {key!r} holds an unpaired surrogate")
            problem = _find_problem(item, path + [key])
            if problem:
                return problem
        return None
    return CanonicalError("not_json", _pointer(path), f"{type(value).__name__} is not a JSON value")


def canonical_bytes(value: Any) -> bytes:
    """The RFC 8785 canonical UTF-8 bytes of a JSON value; CanonicalError names the bad value."""
    try:
        return rfc8785.dumps(value)
    except RecursionError:
        raise CanonicalError("too_deep", "", "value is nested too deeply to canonicalise") from None
    except (rfc8785.CanonicalizationError, UnicodeError, TypeError, AttributeError, ValueError) as exc:
        problem = _find_problem(value, [])
        if problem is not None:
            raise problem from None
        raise CanonicalError("not_json", "", str(exc)) from None


def canonical_text(value: Any) -> str:
    return canonical_bytes(value).decode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_hash(value: Any) -> str:
    """`sha256:<hex>` of the canonical JSON of any value (no fields removed)."""
    return "sha256:" + sha256_hex(canonical_bytes(value))


MAX_INT_CHARS = 4300  # CPython's default int_max_str_digits


class JsonReadError(ValueError):
    """JSON text that a strict Cookwala reader refuses (syntax, duplicate key, NaN)."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise JsonReadError(f"duplicate object key {key!r}")
        out[key] = value
    return out


def _no_constants(name: str) -> Any:
    raise JsonReadError(f"{name} is not valid JSON (RFC 8259 has no NaN or Infinity)")


def _bounded_int(text: str) -> int:
    """CPython refuses to convert more than 4,300 digits (a ValueError naming its own setting)."""
    if len(text) > MAX_INT_CHARS:
        raise JsonReadError(f"not JSON this reader accepts: an integer of {len(text)} characters "
                            f"(at most {MAX_INT_CHARS})")
    return int(text)


def loads_strict(text: str | bytes) -> Any:
    """Parse JSON the way RFC 8785 assumes (I-JSON): duplicate keys and NaN/Infinity are errors."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        raise JsonReadError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise JsonReadError("not JSON this reader accepts: nested too deeply") from None
    except UnicodeDecodeError:
        raise JsonReadError("not JSON: the text is not UTF-8") from None
