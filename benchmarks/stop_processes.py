"""Processes for benchmarks/stop_latency.py: the nodes and stand-ins it starts, at its priority
or back at normal, and the small waits and percentiles it reports with."""

from __future__ import annotations

import math
import signal
import subprocess
import sys
import time

BUSY_CODE = "while True: pass"
# touches 256 MB, frees it, again: page faults and memory bandwidth on top of the spinning
ALLOC_CODE = "while True:\n    block = bytearray(256 << 20)\n    block[::4096] = b'x' * len(block[::4096])\n    del block"
HEARTBEAT_CODE = """
import sys, rclpy
from cookwala_msgs.msg import Heartbeat
from cookwala_ros.ros import qos
rclpy.init()
node = rclpy.create_node("bench_heartbeat")
pub = node.create_publisher(Heartbeat, "/cookwala/heartbeat", qos.heartbeat(0.3))
def beat():
    pub.publish(Heartbeat(device_id="bench", state="idle"))
    if pub.get_subscription_count() >= 2:  # the safety monitor and the driver both listen
        print("matched", flush=True)
node.create_timer(0.1, beat)
rclpy.spin(node)
"""
NORMAL_PREFIX: list[str] = []  # with --nice N: ["nice", "-n", "-N"], back to normal priority for the load


def start(code_or_module: str, params: dict | None = None, module: bool = True, normal: bool = False,
          **kw) -> subprocess.Popen:
    """A node (or code) in its own process, at this process's priority unless `normal`."""
    code = f"import sys; from {code_or_module} import main; sys.exit(main())" if module else code_or_module
    args = [*(NORMAL_PREFIX if normal else []), sys.executable, "-c", code]
    if params:
        args.append("--ros-args")
        for k, v in params.items():
            args += ["-p", f"{k}:={str(v).lower() if isinstance(v, bool) else v}"]
    kw.setdefault("stdout", subprocess.DEVNULL)
    kw.setdefault("stderr", subprocess.DEVNULL)
    return subprocess.Popen(args, **kw)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_for(predicate, timeout: float, what: str):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.002)
    raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return math.nan
    index = min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[index]

