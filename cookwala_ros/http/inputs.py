"""Reading what a client sent: JSON bodies, media types, Idempotency-Key, If-Match, bearer token.

Each reader either returns a clean value or raises a `Problem` that names the bad field (JSON
pointer into the body, or the header name), so handlers stay a few lines long.
"""

from __future__ import annotations

import asyncio
import hmac
import re
from collections.abc import AsyncIterator
from typing import Any

from cookwala_ros.core import json_limits, schemas
from cookwala_ros.core import versions
from cookwala_ros.http.problems import Problem, clip, from_issues

MEDIA_TYPE = "application/vnd.cookwala+json"
JSON_MEDIA_TYPES = (MEDIA_TYPE, "application/json")
MAX_BODY_BYTES = 1 << 20
MAX_JSON_DEPTH = 32  # our request bodies nest 5 levels; 1,000 brackets must not reach the parser
BODY_TIMEOUT_S = 30.0
MAX_SERVINGS = 1000  # a sanity bound, not the device's capacity (the executor checks that)
IDEMPOTENCY_HEADER = "Idempotency-Key"
KEY_MIN, KEY_MAX = 8, 128

_ETAG = re.compile(r'^\s*(?:W/)?"?([0-9]{1,18})"?\s*$')


def _media_type(value: str) -> str:
    return value.split(";", 1)[0].strip().lower()


def check_content_type(value: str | None) -> None:
    """Accept the Cookwala media type, plain JSON and any +json type; no header = JSON."""
    if not value:
        return
    media = _media_type(value)
    if media in JSON_MEDIA_TYPES or media.endswith("+json"):
        return
    raise Problem("unsupported_media_type",
                  f"Content-Type {media!r} is not accepted; send {MEDIA_TYPE} or application/json",
                  header="Content-Type")


def response_media_type(accept: str | None) -> str:
    """Our media type unless the client asked for plain JSON (and not ours)."""
    if not accept:
        return MEDIA_TYPE
    types = {_media_type(part) for part in accept.split(",")}
    if MEDIA_TYPE in types or "*/*" in types or "application/*" in types:
        return MEDIA_TYPE
    if "application/json" in types:
        return "application/json"
    return MEDIA_TYPE


def check_length(value: str | None) -> None:
    """413 before reading a body whose declared length is over the limit."""
    if value and value.strip().isdigit() and int(value) > MAX_BODY_BYTES:
        raise Problem("payload_too_large", f"the body has {int(value)} bytes; the limit is {MAX_BODY_BYTES}")


async def read_body(chunks: AsyncIterator[bytes], timeout_s: float = BODY_TIMEOUT_S) -> bytes:
    """The body, read chunk by chunk and given up (413) as soon as it passes the limit, chunked or not.

    A body that has not ended within `timeout_s` is a 408: a trickling client holds no task forever.
    """
    parts: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout_s):
            async for chunk in chunks:
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise too_large()
                parts.append(chunk)
    except TimeoutError:
        raise Problem("request_timeout", f"the body did not end within {timeout_s:g} s") from None
    return b"".join(parts)


def parse_json(raw: bytes, *, required: bool = True) -> Any:
    """The body as JSON; None for an empty optional body. Bounded: depth and number size (json_limits)."""
    if len(raw) > MAX_BODY_BYTES:
        raise too_large()
    if not raw.strip():
        if required:
            raise Problem("malformed_json", "the request needs a JSON body", pointer="")
        return None
    try:
        return json_limits.loads(raw, max_depth=MAX_JSON_DEPTH)
    except json_limits.JsonInputError as exc:
        if exc.kind == "number":
            raise Problem("invalid_request", exc.message, pointer=exc.pointer) from None
        code = "json_too_deep" if exc.kind == "too_deep" else "malformed_json"
        raise Problem(code, f"the body is {exc.message}", pointer="") from None


def too_large() -> Problem:
    return Problem("payload_too_large", f"the body is over the limit of {MAX_BODY_BYTES} bytes")


def check_servings(body: Any) -> None:
    """400 for a servings count no kitchen cooks (the schema only asks for a positive number)."""
    servings = body.get("servings") if isinstance(body, dict) else None
    if isinstance(servings, (int, float)) and not isinstance(servings, bool) and servings > MAX_SERVINGS:
        raise Problem("invalid_request", f"servings {servings:g} is more than the {MAX_SERVINGS} this API accepts",
                      pointer="/servings")


def validate_body(document: Any, kind: str, *, version_is_refusal: bool = False) -> None:
    """Raise a 400 Problem listing every schema issue of `document` as `kind`.

    With `version_is_refusal`, a `core` string that is only the wrong version is let through
    (decision 3: the executor refuses it `unsupported_version`, it is not a bad request).
    """
    issues = schemas.validate(document, kind)
    if version_is_refusal and isinstance(document, dict) and isinstance(document.get("core"), str) \
            and not versions.is_supported(document["core"]):
        issues = [i for i in issues if i.pointer != "/core"]
    if issues:
        raise from_issues(issues, kind)


def idempotency_key(header: str | None, body: Any = None, *, required: bool = False) -> str | None:
    """The request's key from the header; a body `idempotencyKey` that differs is a 400 (decision 2).

    With `required` (start and resume: the Core OpenAPI marks the header required) a missing header
    is a 400 naming it, even when the body carries a key.
    """
    body_key = body.get("idempotencyKey") if isinstance(body, dict) else None
    if header is None:
        if required:
            also = " (the body's idempotencyKey does not replace it)" if isinstance(body_key, str) else ""
            raise Problem("invalid_header", f"send an {IDEMPOTENCY_HEADER} header{also}", header=IDEMPOTENCY_HEADER)
        return body_key if isinstance(body_key, str) else None
    if not KEY_MIN <= len(header) <= KEY_MAX:
        raise Problem("invalid_header", f"{IDEMPOTENCY_HEADER} must be {KEY_MIN} to {KEY_MAX} characters, "
                                        f"not {len(header)}", header=IDEMPOTENCY_HEADER)
    if isinstance(body_key, str) and body_key != header:
        raise Problem("idempotency_mismatch",
                      f"body idempotencyKey {clip(body_key, 80)!r} differs from the {IDEMPOTENCY_HEADER} header",
                      pointer="/idempotencyKey")
    return header


def if_match_seq(header: str | None, current: int | None = None) -> int | None:
    """The seq an If-Match header asks for, to compare with the current one (RFC 9110 §13.1.1).

    `*` and a list (`"6", "7"`) that names `current` answer `current`; a single tag answers its seq
    (`7`, `"7"` or `W/"7"`); a list without `current`, or no seq at all, answers -1 (412).
    """
    if header is None:
        return None
    if header.strip() == "*":
        return current if current is not None else -1
    seqs = []
    for part in header.split(","):
        match = _ETAG.match(part)
        if match is None:
            return -1
        seqs.append(int(match.group(1)))
    if current is not None and current in seqs:
        return current
    return seqs[0] if len(seqs) == 1 else -1


def etag(seq: int) -> str:
    """The ETag of a status: its seq as a strong entity tag."""
    return f'"{int(seq)}"'


def check_bearer(authorization: str | None, token: str | None) -> None:
    """401 unless `token` is None (auth off) or the header carries exactly `Bearer <token>`."""
    if token is None:
        return
    scheme, _, given = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        raise Problem("unauthorized", "this device requires an Authorization: Bearer token",
                      header="Authorization")
    if not hmac.compare_digest(given.strip().encode("utf-8"), token.encode("utf-8")):
        raise Problem("unauthorized", "the bearer token is not valid for this device", header="Authorization")
