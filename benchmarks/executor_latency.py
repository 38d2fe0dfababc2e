"""In-process callback latency of rclpy's executors and ours (cookwala_ros.ros.executors).

Two nodes on one executor play ping-pong over a reliable topic; the round trip is two
deliveries and two callbacks. rclpy 9.1's MultiThreadedExecutor re-submits callbacks that wait
in its thread pool (ros2/rclpy#1452), which shows here as 0.1-3 s round trips; ours and the
SingleThreadedExecutor stay near a millisecond. Idle and with 2 busy processes per core.

    .venv/bin/python benchmarks/executor_latency.py [--rounds 300] [--load none|busy|both]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time

BUSY_CODE = "while True: pass"
KINDS = ("rclpy single", "rclpy multi x4", "cookwala multi x4", "cookwala multi x6")


def make_executor(kind: str, context):
    from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor

    from cookwala_ros.ros.executors import MultiThreadedExecutor as CookwalaMultiThreadedExecutor

    if kind == "rclpy single":
        return SingleThreadedExecutor(context=context)
    threads = int(kind.rsplit("x", 1)[1])
    if kind.startswith("rclpy"):
        return MultiThreadedExecutor(num_threads=threads, context=context)
    return CookwalaMultiThreadedExecutor(num_threads=threads, context=context)


def round_trips(kind: str, rounds: int, timeout_s: float) -> list[float]:
    import rclpy
    from rclpy.context import Context
    from rclpy.node import Node
    from std_msgs.msg import Header

    from cookwala_ros.ros import qos

    context = Context()
    rclpy.init(context=context)
    executor = make_executor(kind, context)
    ping, pong = Node("bench_ping", context=context), Node("bench_pong", context=context)
    executor.add_node(ping)
    executor.add_node(pong)
    to_pong = ping.create_publisher(Header, "/bench/ping", qos.events())
    to_ping = pong.create_publisher(Header, "/bench/pong", qos.events())
    pong.create_subscription(Header, "/bench/ping", to_ping.publish, qos.events())
    rtts: list[float] = []
    sent = [0.0]
    finished = threading.Event()

    def on_pong(_msg) -> None:
        rtts.append(time.monotonic() - sent[0])
        if len(rtts) >= rounds:
            finished.set()
            return
        sent[0] = time.monotonic()
        to_pong.publish(Header())

    ping.create_subscription(Header, "/bench/pong", on_pong, qos.events())
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10.0
    while (to_pong.get_subscription_count() < 1 or to_ping.get_subscription_count() < 1) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)
    sent[0] = time.monotonic()
    to_pong.publish(Header())
    finished.wait(timeout_s)
    result = list(rtts)
    executor.shutdown(timeout_sec=1.0)
    rclpy.try_shutdown(context=context)
    return result


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300, help="round trips per executor (default 300)")
    parser.add_argument("--timeout", type=float, default=30.0, help="wall seconds per executor at most")
    parser.add_argument("--load", choices=("none", "busy", "both"), default="both",
                        help="idle, 2 busy processes per core, or both (default)")
    args = parser.parse_args()
    if args.rounds < 10:
        parser.error("--rounds: at least 10")
    loads = {"none": [False], "busy": [True], "both": [False, True]}[args.load]
    print(f"{'executor':20s} {'load':22s} {'done':>9s} {'median ms':>10s} {'p99 ms':>9s} {'max ms':>9s}")
    for busy in loads:
        hogs = [subprocess.Popen([sys.executable, "-c", BUSY_CODE]) for _ in range(2 * (os.cpu_count() or 2))] if busy else []
        try:
            for kind in KINDS:
                rtts = round_trips(kind, args.rounds, args.timeout)
                load = "2 busy procs per core" if busy else "idle"
                if not rtts:
                    print(f"{kind:20s} {load:22s} {0:>4d}/{args.rounds:<4d} (none within {args.timeout:g} s)")
                    continue
                print(f"{kind:20s} {load:22s} {len(rtts):>4d}/{args.rounds:<4d} {pct(rtts, 0.5) * 1e3:10.2f} "
                      f"{pct(rtts, 0.99) * 1e3:9.2f} {max(rtts) * 1e3:9.2f}", flush=True)
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
