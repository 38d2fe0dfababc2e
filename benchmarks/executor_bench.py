"""Executor benchmarks: HTTP status-poll throughput and latency, and wall time to cook.

    python benchmarks/executor_bench.py                 # everything (a few minutes)
    python benchmarks/executor_bench.py --only poll     # HTTP only (no ROS), ~10 s
    python benchmarks/executor_bench.py --only cook --cook-rtf 50

`poll`: the device API served by uvicorn on a local socket over a real ExecutorService (SQLite in
a temp dir); T client threads, each with a keep-alive httpx client, GET the status of one
execution as fast as they can. Prints requests/s and latency percentiles.

`lockstep`: the sample soup and the standard's lentil soup cooked in lock-step (the /clock
steps only when every participant finished the last step) with the safety monitor: wall time,
simulated time and the effective real-time factor. A figure of issue 22: the lentil soup's 4,920
simulated seconds in under 60 s of wall time on 2 cores.

`cook`: the simulated kitchen (config/bringup/kitchen.yaml: sim clock, arm, heater, executor;
the safety monitor with --with-safety-monitor) as processes, and the sample soup cooked over HTTP at each real-time factor.
At RTF 1 the full soup takes its real ~36 simulated minutes; by default RTF 1 cooks the short
water-simmer recipe instead (a 2-4 min simmer plus heat-up), and says so. `--full-soup-rtf1`
cooks the full soup at RTF 1 too.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import statistics
import sys
import tempfile
import threading
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SOUP = REPO / "examples" / "recipes" / "tomato-soup.cookwala.json"
SOUP_REQUEST = REPO / "examples" / "requests" / "tomato-soup.execute.json"
SHORT = REPO / "test" / "e2e" / "data" / "recipes" / "e2e-water-simmer.cookwala.json"


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(q * (len(ordered) - 1)))))
    return ordered[index]


def _serve(root: str, port: int, ready, stop) -> None:
    """Child process: a real ExecutorService with one accepted execution, served by uvicorn."""
    from cookwala_ros.device import load_device_config
    from cookwala_ros.executor.config import ExecutorConfig, StaticPorts
    from cookwala_ros.executor.service import ExecutorService
    from cookwala_ros.http.server import ApiServer

    root_path = pathlib.Path(root)
    config = ExecutorConfig.from_device(load_device_config(), data_dir=root_path / "data",
                                        library_dir=root_path / "recipes")
    service = ExecutorService(config, StaticPorts(), poll_recalls=False)
    request = json.loads(SOUP_REQUEST.read_text(encoding="utf-8"))
    status, _ = service.start_execution(request, request["idempotencyKey"])
    with ApiServer(service, port=port):
        ready.put(status["id"])
        stop.wait()
    service.close()


def bench_poll(threads: int, seconds: float) -> None:
    """The server runs in its own process, so the polling threads do not share its GIL."""
    import multiprocessing

    import httpx

    from cookwala_ros.http.server import free_port

    root = pathlib.Path(tempfile.mkdtemp(prefix="cookwala-bench-"))
    ctx = multiprocessing.get_context("spawn")
    ready, stop = ctx.Queue(), ctx.Event()
    port = free_port()
    try:
        (root / "recipes").mkdir()
        shutil.copy(SOUP, root / "recipes" / SOUP.name)
        server = ctx.Process(target=_serve, args=(str(root), port, ready, stop), daemon=True)
        server.start()
        execution = ready.get(timeout=120)
        base_url, path = f"http://127.0.0.1:{port}", f"/v1/executions/{execution}"
        latencies: list[list[float]] = [[] for _ in range(threads)]
        stop_at = [0.0]
        barrier = threading.Barrier(threads + 1)

        def poll(i: int) -> None:
            with httpx.Client(base_url=base_url, timeout=10.0) as client:
                client.get(path)  # warm the connection
                barrier.wait()
                own = latencies[i]
                while time.perf_counter() < stop_at[0]:
                    t0 = time.perf_counter()
                    r = client.get(path)
                    own.append(time.perf_counter() - t0)
                    if r.status_code != 200:
                        raise RuntimeError(f"status poll answered {r.status_code}")

        workers = [threading.Thread(target=poll, args=(i,)) for i in range(threads)]
        for w in workers:
            w.start()
        stop_at[0] = time.perf_counter() + seconds
        started = time.perf_counter()
        barrier.wait()
        for w in workers:
            w.join()
        elapsed = time.perf_counter() - started
        stop.set()
        server.join(15)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    flat = [x for own in latencies for x in own]
    print(f"HTTP status poll ({threads} client threads, {seconds:g} s, keep-alive, one uvicorn worker "
          f"in its own process):")
    print(f"  {len(flat)} requests, {len(flat) / elapsed:8.1f} requests/s")
    print(f"  latency p50 {statistics.median(flat) * 1e3:6.2f} ms   p90 {_percentile(flat, 0.90) * 1e3:6.2f} ms"
          f"   p99 {_percentile(flat, 0.99) * 1e3:6.2f} ms   max {max(flat) * 1e3:6.2f} ms")


def bench_cook(rtf: float, recipe: pathlib.Path, with_monitor: bool, clock: str = "rtf") -> None:
    from cookwala_ros.http.demo_client import cook
    from cookwala_ros.ros.recipe_demo import LiveKitchen, request_for_recipe

    import psutil
    from idle_cpu import cpu_seconds, node_name

    with LiveKitchen(rtf=rtf, recipes=[recipe], quiet=True, with_safety_monitor=with_monitor, clock=clock) as kitchen:
        request = request_for_recipe(json.loads(recipe.read_text(encoding="utf-8")), key=f"bench-{rtf:g}-{time.time_ns()}")
        nodes = psutil.Process().children(recursive=True)
        cpu_before = cpu_seconds(nodes)
        t0 = time.monotonic()
        result = cook(kitchen.base_url, request, out=open("/dev/null", "w"), poll_s=0.1, timeout_s=7200.0)
        wall = time.monotonic() - t0
        cpu_used = {node_name(proc): cpu_seconds([proc]).get(proc.pid, 0.0) - cpu_before.get(proc.pid, 0.0)
                    for proc in nodes}
    log = result.log or {}
    sim_s = None
    if log.get("startedAt") and log.get("endedAt"):
        from datetime import datetime

        parse = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))  # noqa: E731
        sim_s = (parse(log["endedAt"]) - parse(log["startedAt"])).total_seconds()
    sim_text = f", {sim_s:.0f} s simulated (effective RTF {sim_s / wall:.1f})" if sim_s else ""
    monitor = "with" if with_monitor else "without"
    pace = f"in lock-step (ceiling RTF {rtf:g})" if clock == "lockstep" else f"at RTF {rtf:g}"
    print(f"cook {recipe.name} {pace} ({monitor} the safety monitor): {result.status['state']} "
          f"in {wall:.1f} s wall{sim_text}")
    # where the CPU goes (issue 22: every lock-step step wakes every node; in ms per 0.1 s step)
    steps = sim_s / 0.1 if sim_s and clock == "lockstep" else None
    print("  CPU: " + ", ".join(f"{name} {used:.1f} s" + (f" ({1000 * used / steps:.2f} ms/step)" if steps else "")
                                for name, used in sorted(cpu_used.items(), key=lambda kv: -kv[1]))
          + f"; {sum(cpu_used.values()) / wall:.2f} cores busy on average")
    if result.status["state"] != "completed":
        why = [s.get("deviation", {}).get("detail") for s in log.get("steps", []) if s.get("deviation")]
        why += [f"safety event {e.get('limit')} ({e.get('action')})" for e in log.get("safetyEvents", [])]
        print("  why: " + ("; ".join(filter(None, why)) or str(result.status.get("x-cookwala-ros-reason", "?"))))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("poll", "cook", "lockstep"))
    parser.add_argument("--lockstep-ceiling", type=float, default=1000.0,
                        help="lock-step: the /clock never runs faster than this real-time factor (default 1000)")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--cook-rtf", type=float, action="append", help="real-time factors to cook at (default 1 and 50)")
    parser.add_argument("--full-soup-rtf1", action="store_true", help="cook the full soup at RTF 1 too (~36 min)")
    parser.add_argument("--with-safety-monitor", action="store_true",
                        help="run the safety monitor too (on a loaded host its wall-clock deadlines may stop the cook)")
    args = parser.parse_args()
    if args.only in (None, "poll"):
        bench_poll(args.threads, args.seconds)
    if args.only in (None, "cook"):
        for rtf in args.cook_rtf or [1.0, 50.0]:
            if rtf < 10 and not args.full_soup_rtf1:
                print(f"(RTF {rtf:g}: cooking the short {SHORT.name} instead of the ~36-minute soup;"
                      " pass --full-soup-rtf1 for the soup)")
                bench_cook(rtf, SHORT, args.with_safety_monitor)
            else:
                bench_cook(rtf, SOUP, args.with_safety_monitor)
    if args.only in (None, "lockstep"):  # issue 22: the lentil soup (4,920 simulated s) in under 60 s wall
        lentil = spec_dir() / "examples" / "lentil-soup.cookwala.json"
        for recipe in (SOUP, lentil):
            if recipe.exists():
                bench_cook(args.lockstep_ceiling, recipe, True, clock="lockstep")
            else:
                print(f"(no {recipe}: set COOKWALA_SPEC_DIR to the published standard)")
    return 0


def spec_dir() -> pathlib.Path:
    import os

    return pathlib.Path(os.environ.get("COOKWALA_SPEC_DIR", REPO.parent / "shared" / "cookwala-spec"))


if __name__ == "__main__":
    raise SystemExit(main())
