"""uvicorn's h11 protocol with problem documents for broken heads and a lingering close.

Two things the app cannot do, because they happen outside it:
- A request head h11 gives up on (over `MAX_HEAD_BYTES` before it ends, or malformed) is
  answered 414 (the request line never ended), 431 (the header fields did not) or 400, each an
  RFC 9457 problem document instead of uvicorn's `400 text/plain`.
- Closing a connection whose client is still sending would reset it, and a reset can throw
  away the answer before the client reads it. Every close here is lingering (RFC 9112 §9.6):
  half-close after the answer, read and drop up to LINGER_MAX_BYTES for up to LINGER_S, then
  close. Server shutdown closes at once.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import STATUS_PHRASES, H11Protocol

from cookwala_ros.http.limits import MAX_HEADER_BYTES, MAX_TARGET_BYTES
from cookwala_ros.http.problems import PROBLEM_MEDIA_TYPE, Problem, problem_bytes

MAX_HEAD_BYTES = MAX_TARGET_BYTES + MAX_HEADER_BYTES + 1024  # then the app's own checks name the part
LINGER_MAX_BYTES = 1 << 20
LINGER_S = 2.0


def head_problem(received: bytes, limit: int) -> Problem:
    """Why h11 refused the head in `received`: 414, 431 or 400."""
    line_end = received.find(b"\n")
    if len(received) > limit or line_end > MAX_TARGET_BYTES:
        if line_end < 0 or line_end > MAX_TARGET_BYTES:
            return Problem("uri_too_long", f"the request line passed {MAX_TARGET_BYTES} bytes")
        return Problem("header_fields_too_large", f"the request head passed {limit} bytes")
    return Problem("bad_request", "the HTTP request head is malformed")


class _LingeringTransport:
    """The connection's transport, whose close() lingers (see the module docstring)."""

    def __init__(self, transport: asyncio.Transport, protocol: "ProblemH11Protocol"):
        self._transport, self._protocol = transport, protocol
        self.closing = False

    def close(self) -> None:
        if not self.closing:
            self.closing = True
            self._protocol.linger()

    def is_closing(self) -> bool:
        return self.closing or self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class ProblemH11Protocol(H11Protocol):
    """H11Protocol with problem answers for refused heads and lingering closes."""

    def __init__(self, config: Any, server_state: Any, app_state: dict[str, Any], _loop: Any = None):
        if getattr(config, "h11_max_incomplete_event_size", None) is None:
            config.h11_max_incomplete_event_size = MAX_HEAD_BYTES
        super().__init__(config, server_state, app_state, _loop)
        self._raw: asyncio.Transport | None = None
        self._linger_left = -1
        self._linger_timer: asyncio.TimerHandle | None = None
        self._shutting_down = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._raw = transport
        super().connection_made(_LingeringTransport(transport, self))  # type: ignore[arg-type]

    def linger(self) -> None:
        raw = self._raw
        if raw is None or raw.is_closing():
            return
        if self._shutting_down or not raw.can_write_eof():
            raw.close()
            return
        self._linger_left = LINGER_MAX_BYTES
        try:
            raw.write_eof()  # FIN once the answer is flushed; keep reading what the client still sends
            raw.resume_reading()
        except (OSError, RuntimeError):
            raw.close()
            return
        self._linger_timer = self.loop.call_later(LINGER_S, raw.close)

    def data_received(self, data: bytes) -> None:
        if self._linger_left >= 0:
            self._linger_left -= len(data)
            if self._linger_left < 0 and self._raw is not None:
                self._raw.close()
            return
        super().data_received(data)

    def eof_received(self) -> bool | None:
        if self._linger_left >= 0 and self._raw is not None:
            self._raw.close()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._linger_timer is not None:
            self._linger_timer.cancel()
            self._linger_timer = None
        super().connection_lost(exc)

    def shutdown(self) -> None:
        self._shutting_down = True
        super().shutdown()

    def send_400_response(self, msg: str) -> None:
        received, _closed = self.conn.trailing_data
        if self.cycle is not None and not self.cycle.response_complete:  # the body's framing broke mid-request
            if self.cycle.response_started:
                self.transport.close()
                return
            self.cycle.disconnected = True  # the app's own answer, if any, goes nowhere
            self.cycle.message_event.set()
            problem = Problem("bad_request", "the request body's framing is malformed (chunk sizes, length)")
        else:
            problem = head_problem(received, self.config.h11_max_incomplete_event_size or MAX_HEAD_BYTES)
        self.logger.info("refused a request head: %s", problem.detail)
        body = problem_bytes(problem)
        headers = [(b"content-type", PROBLEM_MEDIA_TYPE.encode()), (b"content-length", str(len(body)).encode()),
                   (b"connection", b"close")]
        for event in (h11.Response(status_code=problem.status, headers=headers, reason=STATUS_PHRASES[problem.status]),
                      h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()
