"""The API on a real socket, in a server process of its own: heads, bodies and memory as the RFCs say.

What only the server sees: a request line or header block h11 gives up on (414/431 problem
documents), a body bigger than the limit sent whole before the client reads (the 413 arrives,
no reset: the body is drained, the close lingers), chunked bodies never buffered whole (the
server's peak RSS stays put), and the figures printed for the report.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time

import pytest

from wire import CHUNK, chunked, connect, plain, post_head, problem, read_response, rss_kib, send_while_reading

HERE = pathlib.Path(__file__).resolve().parent
MIB = 1 << 20


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(port, pid) of the API served by http_server_proc.py."""
    root = tmp_path_factory.mktemp("wire")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parents[1]), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, str(HERE / "http_server_proc.py"), str(root)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline()
    if not line.startswith("READY"):
        proc.kill()
        pytest.fail(f"the server did not start: {line}{proc.stderr.read()}")
    yield int(line.split()[1]), proc.pid
    proc.stdin.close()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log = proc.stderr.read()
    assert "Traceback" not in log, log[-3000:]


def _get(port: int, target: str, extra: str = "") -> tuple[int, dict, bytes]:
    with connect(port) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: t\r\n{extra}\r\n".encode())
        return read_response(sock)


def test_long_request_line_is_414_whole_or_in_pieces(server):
    port, _ = server
    answer = _get(port, "/v1/executions/" + "i" * 65536)
    assert answer[0] == 414 and problem(answer)["code"] == "uri_too_long"
    assert len(answer[2]) < 1000  # the id is not echoed
    with connect(port) as sock:  # arriving slowly: h11 gives up on the head before the app sees it
        sock.sendall(b"GET /v1/executions/")
        for _ in range(8):
            sock.sendall(b"j" * 8192)
            time.sleep(0.01)
        answer = read_response(sock)
    assert answer[0] == 414 and problem(answer)["code"] == "uri_too_long"


def test_big_header_block_is_431_whole_or_in_pieces(server):
    port, _ = server
    answer = _get(port, "/v1/capabilities", "X-Pad: " + "p" * 20000 + "\r\n")
    assert answer[0] == 431 and problem(answer)["code"] == "header_fields_too_large"
    with connect(port) as sock:
        sock.sendall(b"GET /v1/capabilities HTTP/1.1\r\nHost: t\r\n")
        for i in range(12):
            sock.sendall(f"X-Pad-{i}: {'q' * 4000}\r\n".encode())
            time.sleep(0.01)
        answer = read_response(sock)
    assert answer[0] == 431 and problem(answer)["code"] == "header_fields_too_large"


def test_malformed_head_is_a_400_problem(server):
    port, _ = server
    with connect(port) as sock:
        sock.sendall(b"GET /v1/capabilities HTTP/1.1\r\nHost: t\r\nBad Header Name: x\r\n\r\n")
        answer = read_response(sock)
    assert answer[0] == 400 and problem(answer)["code"] == "bad_request"


def test_broken_chunk_framing_is_a_400_problem(server):
    port, _ = server
    with connect(port) as sock:
        sock.sendall(post_head("/v1/executions") + b"5\r\n[1,2]\r\nZZZ\r\n")
        answer = read_response(sock)
    assert answer[0] == 400 and problem(answer)["code"] == "bad_request"


@pytest.mark.parametrize("framing", ["length", "chunked"])
def test_body_sent_whole_before_reading_gets_the_413(server, framing):
    port, _ = server
    size = 5_000_000
    with connect(port) as sock:
        if framing == "length":
            sock.sendall(post_head("/v1/executions", length=size, close=True) + b"".join(plain(size)))
        else:
            sock.sendall(post_head("/v1/executions", close=True) + b"".join(chunked(size)))
        answer = read_response(sock)
    assert answer[0] == 413 and problem(answer)["code"] == "payload_too_large"


def test_keep_alive_goes_on_after_a_drained_413(server):
    port, _ = server
    with connect(port) as sock:
        answer = send_while_reading(sock, post_head("/v1/executions"), chunked(3 * MIB))
        assert answer[0] == 413 and answer[1].get("connection") != "close"
        sock.sendall(b"GET /v1/capabilities HTTP/1.1\r\nHost: t\r\n\r\n")
        assert read_response(sock)[0] == 200


def hostile_bodies(port: int, count: int, chunked_mib: int = 64) -> None:
    """`count` oversized bodies, alternating: chunked `chunked_mib` MiB read politely, and 5 MB sent whole."""
    for i in range(count):
        with connect(port) as sock:
            if i % 2:
                answer = send_while_reading(sock, post_head("/v1/executions"), chunked(chunked_mib * MIB))
            else:
                sock.sendall(post_head("/v1/executions", length=5_000_000, close=True) + b"".join(plain(5_000_000)))
                answer = read_response(sock)
        assert answer[0] == 413, answer


def test_memory_stays_bounded_under_oversized_bodies(server):
    port, pid = server
    for _ in range(3):  # warm up: every code path once
        hostile_bodies(port, 2, chunked_mib=2)
    rss0, hwm0 = rss_kib(pid)
    started = time.monotonic()
    hostile_bodies(port, 50)
    rss1, hwm1 = rss_kib(pid)
    print(f"50 oversized bodies in {time.monotonic() - started:.1f} s: RSS {rss0 / 1024:.1f} -> {rss1 / 1024:.1f} MiB,"
          f" peak {hwm0 / 1024:.1f} -> {hwm1 / 1024:.1f} MiB")
    assert rss1 - rss0 < 50 * 1024 and hwm1 - rss0 < 50 * 1024


if __name__ == "__main__":  # the long run: python test_http_wire.py PORT PID COUNT against a running server
    port, pid, count = (int(a) for a in sys.argv[1:4])
    rss0, hwm0 = rss_kib(pid)
    started = time.monotonic()
    hostile_bodies(port, count)
    rss1, hwm1 = rss_kib(pid)
    print(f"{count} oversized bodies ({count // 2} chunked 64 MiB, {count - count // 2} of 5 MB sent whole) in "
          f"{time.monotonic() - started:.0f} s: RSS {rss0 / 1024:.1f} -> {rss1 / 1024:.1f} MiB, "
          f"peak {hwm0 / 1024:.1f} -> {hwm1 / 1024:.1f} MiB")
