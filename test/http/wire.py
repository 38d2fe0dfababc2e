"""Raw HTTP/1.1 over a socket: what the wire tests send that an HTTP client library will not."""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterable

CHUNK = b"x" * 65536


def connect(port: int, timeout_s: float = 20.0) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_response(sock: socket.socket, timeout_s: float = 20.0) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of one response; raises on a reset or a connection closed too early."""
    sock.settimeout(timeout_s)
    data = b""
    while b"\r\n\r\n" not in data:
        part = sock.recv(65536)
        if not part:
            raise ConnectionError(f"closed before a response head: {data[:200]!r}")
        data += part
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        part = sock.recv(65536)
        if not part:
            break
        body += part
    return status, headers, body[:length]


def problem(response: tuple[int, dict[str, str], bytes]) -> dict:
    status, headers, body = response
    assert headers.get("content-type", "").startswith("application/problem+json"), (status, headers, body[:300])
    doc = json.loads(body)
    assert doc["status"] == status and doc["title"] and doc["detail"], doc
    return doc


def post_head(path: str, *, length: int | None = None, close: bool = False, extra: str = "") -> bytes:
    framing = f"Content-Length: {length}\r\n" if length is not None else "Transfer-Encoding: chunked\r\n"
    return (f"POST {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nIdempotency-Key: wire-key-0001\r\n"
            f"{framing}{'Connection: close' + chr(13) + chr(10) if close else ''}{extra}\r\n").encode()


def chunked(total: int) -> Iterable[bytes]:
    sent = 0
    while sent < total:
        piece = CHUNK[: min(len(CHUNK), total - sent)]
        sent += len(piece)
        yield b"%x\r\n" % len(piece) + piece + b"\r\n"
    yield b"0\r\n\r\n"


def plain(total: int) -> Iterable[bytes]:
    sent = 0
    while sent < total:
        piece = CHUNK[: min(len(CHUNK), total - sent)]
        sent += len(piece)
        yield piece


def send_while_reading(sock: socket.socket, head: bytes, parts: Iterable[bytes],
                       timeout_s: float = 30.0) -> tuple[int, dict[str, str], bytes]:
    """Send `head` and `parts`, and stop sending once the answer starts to arrive (a polite client)."""
    sock.sendall(head)
    deadline = time.monotonic() + timeout_s
    pending = b""
    parts = iter(parts)
    while True:
        if not pending:
            pending = next(parts, b"")
            if not pending:
                break
        readable, writable, _ = select.select([sock], [sock], [], max(0.0, deadline - time.monotonic()))
        if readable:
            break
        if not writable:
            raise TimeoutError("the server neither read the body nor answered")
        try:
            pending = pending[sock.send(pending):]
        except (BrokenPipeError, ConnectionResetError):
            break
    return read_response(sock)


def rss_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in KiB."""
    fields = {}
    for line in open(f"/proc/{pid}/status", encoding="ascii"):
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields["VmRSS"], fields["VmHWM"]
