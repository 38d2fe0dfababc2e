"""Reading what a client sent: JSON bodies, media types, Idempotency-Key, If-Match, bearer token.

Each reader either returns a clean value or raises a `Problem` that names the bad field (JSON
pointer into the body, or the header name), so handlers stay a few lines long.
"""

from __future__ import annotations

import hmac
import json
import re
from typing import Any

from cookwala_ros.core import schemas
from cookwala_ros.core import versions
from cookwala_ros.http.problems import Problem, from_issues

MEDIA_TYPE = "application/vnd.cookwala+json"
JSON_MEDIA_TYPES = (MEDIA_TYPE, "application/json")
MAX_BODY_BYTES = 1 << 20
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


def parse_json(raw: bytes, *, required: bool = True) -> Any:
    """The body as JSON; None for an empty optional body. Problems name the line and column."""
    if len(raw) > MAX_BODY_BYTES:
        raise Problem("payload_too_large", f"the body has {len(raw)} bytes; the limit is {MAX_BODY_BYTES}")
    if not raw.strip():
        if required:
            raise Problem("malformed_json", "the request needs a JSON body", pointer="")
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Problem("malformed_json", f"the body is not UTF-8 (byte {exc.start})", pointer="") from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        where = f" at line {exc.lineno} column {exc.colno}" if hasattr(exc, "lineno") else ""
        msg = getattr(exc, "msg", str(exc))
        raise Problem("malformed_json", f"the body is not valid JSON{where}: {msg}", pointer="") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


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
    """The request's key: the header wins; a body `idempotencyKey` that differs is a 400 (decision 2)."""
    body_key = body.get("idempotencyKey") if isinstance(body, dict) else None
    if header is not None:
        if not KEY_MIN <= len(header) <= KEY_MAX:
            raise Problem("invalid_header", f"{IDEMPOTENCY_HEADER} must be {KEY_MIN} to {KEY_MAX} characters, "
                                            f"not {len(header)}", header=IDEMPOTENCY_HEADER)
        if isinstance(body_key, str) and body_key != header:
            raise Problem("idempotency_mismatch",
                          f"body idempotencyKey {body_key!r} differs from the {IDEMPOTENCY_HEADER} header",
                          pointer="/idempotencyKey")
        return header
    if isinstance(body_key, str):
        return body_key
    if required:
        raise Problem("invalid_header", f"send an {IDEMPOTENCY_HEADER} header (or body idempotencyKey)",
                      header=IDEMPOTENCY_HEADER)
    return None


def if_match_seq(header: str | None) -> int | None:
    """The seq in an If-Match header (`7`, `"7"` or `W/"7"`); -1 when it names no seq at all."""
    if header is None:
        return None
    match = _ETAG.match(header)
    return int(match.group(1)) if match else -1


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
