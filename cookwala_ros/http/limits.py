"""Size limits of a request, enforced as an ASGI middleware so every server and test client gets them.

- A request target longer than MAX_TARGET_BYTES is answered 414, header fields over
  MAX_HEADER_BYTES 431 (RFC 9110 §15.5.15, RFC 6585 §5), both as problem documents, before the app
  sees the request.
- Whatever the app answers, a request body it did not read is drained (read and thrown away)
  before the answer starts, up to DRAIN_MAX_BYTES and DRAIN_S: a client that sends its whole
  body before reading (even with `Connection: close`) then gets the answer, not a reset
  connection (RFC 9112 §9.6). Beyond those bounds, or when the client waits for `100 Continue`,
  the answer says `Connection: close` and nothing more is read. Draining keeps nothing, so memory
  stays bounded whatever the body's size or framing.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from cookwala_ros.http.problems import PROBLEM_MEDIA_TYPE, Problem, problem_bytes

MAX_TARGET_BYTES = 8192  # RFC 9112 §3: at least 8,000 octets should be supported
MAX_HEADER_BYTES = 16384
DRAIN_MAX_BYTES = 8 << 20
DRAIN_S = 5.0
CLOSE = (b"connection", b"close")


def head_problem(scope: dict) -> Problem | None:
    """414 or 431 when the request line or the header fields are over the limits."""
    target = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
    if target > MAX_TARGET_BYTES:
        return Problem("uri_too_long", f"the request target has {target} bytes; the limit is {MAX_TARGET_BYTES}")
    fields = sum(len(name) + len(value) + 4 for name, value in scope.get("headers") or ())
    if fields > MAX_HEADER_BYTES:
        return Problem("header_fields_too_large",
                       f"the header fields have {fields} bytes; the limit is {MAX_HEADER_BYTES}")
    return None


def _declared_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    for name, value in headers:
        if name == b"content-length":
            return int(value) if value.strip().isdigit() else None
    return None


class _Exchange:
    """What the app has read of one request's body, so the rest can be drained before the answer."""

    def __init__(self, scope: dict, receive: Any):
        headers = scope.get("headers") or []
        self.receive_raw = receive
        self.declared = _declared_length(headers)
        chunked = any(n == b"transfer-encoding" for n, _ in headers)
        self.done = not chunked and not self.declared  # no body at all
        self.expects_continue = any(n == b"expect" and v.lower() == b"100-continue" for n, v in headers)
        self.read_any = False

    async def receive(self) -> dict:
        message = await self.receive_raw()
        self.read_any = True
        if message["type"] == "http.disconnect" or not message.get("more_body", False):
            self.done = True
        return message

    async def drain(self) -> bool:
        """Read and drop the rest of the body within the bounds; True when it ended."""
        if self.done:
            return True
        if (self.expects_continue and not self.read_any) or (self.declared or 0) > DRAIN_MAX_BYTES:
            return False
        left, deadline = DRAIN_MAX_BYTES, time.monotonic() + DRAIN_S
        while not self.done:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            try:
                message = await asyncio.wait_for(self.receive(), remaining)
            except asyncio.TimeoutError:
                return False
            left -= len(message.get("body", b""))
            if left < 0:
                return False
        return True


class HttpLimits:
    """ASGI middleware: head limits (414/431) and draining an unread body before every answer."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        exchange = _Exchange(scope, receive)

        async def send_after_drain(message: dict) -> None:
            if message["type"] == "http.response.start" and not await exchange.drain():
                headers = list(message.get("headers") or [])
                if CLOSE not in headers:
                    headers.append(CLOSE)
                message = {**message, "headers": headers}
            await send(message)

        problem = head_problem(scope)
        if problem is not None:
            body = problem_bytes(problem, None)
            await send_after_drain({"type": "http.response.start", "status": problem.status,
                                    "headers": [(b"content-type", PROBLEM_MEDIA_TYPE.encode()),
                                                (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, exchange.receive, send_after_drain)
