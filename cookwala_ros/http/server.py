"""Serve the device API with uvicorn in a background thread (the executor node and benchmarks).

The server owns no state: it runs `create_app(service, token=...)` on one event loop in a daemon
thread, so the caller's own loop (rclpy spinning, a benchmark) is untouched. `stop()` asks uvicorn
to finish in-flight requests and waits for the thread. `uvicorn_config` is the one way to serve
the app (h11 with problem answers for broken heads and lingering closes, `protocol`).
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn

from cookwala_ros.http.app import create_app
from cookwala_ros.http.protocol import MAX_HEAD_BYTES, ProblemH11Protocol


def uvicorn_config(app: Any, *, host: str, port: int, log_level: str = "warning") -> uvicorn.Config:
    """The uvicorn settings every server of the device API uses (the executor node's too)."""
    return uvicorn.Config(app, host=host, port=int(port), log_level=log_level, access_log=False, lifespan="off",
                          http=ProblemH11Protocol, h11_max_incomplete_event_size=MAX_HEAD_BYTES)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now (for tests and benchmarks)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class ApiServer:
    def __init__(self, service: Any, *, host: str = "127.0.0.1", port: int = 8080, token: str | None = None,
                 log_level: str = "warning"):
        self.host, self.port = host, int(port)
        self._server = uvicorn.Server(uvicorn_config(create_app(service, token=token), host=host, port=self.port,
                                                     log_level=log_level))
        self._thread = threading.Thread(target=self._server.run, name=f"cookwala-http-{self.port}", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout_s: float = 10.0) -> "ApiServer":
        """Start serving; returns once the socket accepts connections (RuntimeError otherwise)."""
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError(f"the HTTP server could not start on {self.host}:{self.port}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the HTTP server did not start on {self.host}:{self.port} within {timeout_s:g} s")
            time.sleep(0.01)
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout_s)

    def __enter__(self) -> "ApiServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
