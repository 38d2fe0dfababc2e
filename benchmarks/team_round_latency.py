"""Contract-net round latency over ROS (issue 11): plan request -> the coordinator's answer.

    python benchmarks/team_round_latency.py [--robots 3] [--tasks 7 20] [--rounds 50] [--window 2.0]

Starts N team nodes (each its own process, namespace and device file, every one able to do
every op) and a coordinator, then sends plan requests one after another, each with every robot
on its roster. A round closes as soon as every robot answered every task (`all_answered`); the
window (Open-RMF's dispatcher waits its whole 2 s bidding window) is only the deadline for a
robot that stays silent. Per recipe size it prints the wall time from publishing the request to
receiving the answer (which comes after the awards): p50, p99 and max, and how each round closed.
Nothing is asserted. Run it idle and under load (e.g. `stress -c 4` beside it).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import threading
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "test"))  # start_ros_module and stop_processes (ros_helpers)

OPS = ("cw.op.cut", "cw.op.saute", "cw.op.simmer")


def recipe(n_tasks: int) -> dict:
    """A chain of `n_tasks` steps cycling through OPS (each step's output is the next one's input)."""
    nodes = [{"id": f"n{i}", "op": OPS[i % len(OPS)], "inputs": [f"x{i}"], "output": f"x{i + 1}",
              "until": {"minTime": "PT2M"}} for i in range(n_tasks)]
    return {"cookwala": "0.2.0", "id": f"bench{n_tasks}", "process": {"nodes": nodes}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robots", type=int, default=3)
    parser.add_argument("--tasks", type=int, nargs="+", default=[7, 20])
    parser.add_argument("--rounds", type=int, default=50, help="requests per recipe size (default 50)")
    parser.add_argument("--window", type=float, default=2.0, help="bidding window, the deadline [s] (default 2)")
    args = parser.parse_args()

    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.setdefault("ROS_DOMAIN_ID", str(60 + os.getpid() % 30))
    from cookwala_ros.bringup.dds_profile import use_default_profile

    use_default_profile(os.environ)
    import rclpy
    import yaml
    from rclpy.executors import SingleThreadedExecutor
    from std_msgs.msg import String

    from cookwala_msgs.msg import TeamCfp
    from cookwala_ros.ros import names, qos
    from ros_helpers import start_ros_module, stop_processes

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="team-bench-"))
    shipped = yaml.safe_load((REPO / "config" / "device.yaml").read_text(encoding="utf-8"))
    actors = [f"cwros:bench-{i}" for i in range(args.robots)]
    procs = []
    for i, actor in enumerate(actors):
        device = tmp / f"robot{i}.yaml"
        device.write_text(yaml.safe_dump({**shipped, "device": {**shipped["device"], "id": actor}, "ops": list(OPS)}))
        procs.append(start_ros_module("cookwala_ros.ros.team.team_node", {"device_file": device, "human_present": True},
                                      f"/robot{i}"))
    procs.append(start_ros_module("cookwala_ros.ros.team.coordinator_node", {"window_s": args.window}))

    rclpy.init()
    node = rclpy.create_node("team_bench")
    answers: dict[str, tuple[float, dict]] = {}
    lock = threading.Lock()

    def on_answer(msg: String) -> None:
        answer = json.loads(msg.data)
        with lock:
            answers.setdefault(answer.get("requestId"), (time.monotonic(), answer))

    requests = node.create_publisher(String, names.TEAM_PLAN_REQUEST, qos.team())
    cfps = node.create_publisher(TeamCfp, names.TEAM_CFP, qos.team())  # only to see the team nodes match
    node.create_subscription(String, names.TEAM_PLAN, on_answer, qos.team())
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()

    def answered(request_id: str, timeout: float) -> tuple[float, dict] | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with lock:
                if request_id in answers:
                    return answers[request_id]
            time.sleep(0.001)
        return None

    try:
        deadline = time.monotonic() + 60
        while (requests.get_subscription_count() < 1 or cfps.get_subscription_count() < args.robots) \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        # warm-up until a round closes with every robot's answer (discovery settled both ways)
        for n in range(30):
            request_id = f"warm-{n}"
            requests.publish(String(data=json.dumps({"requestId": request_id, "recipe": recipe(3),
                                                     "robots": actors})))
            got = answered(request_id, args.window + 5)
            if got and got[1].get("closedBy") == "all_answered":
                break
        print(f"{args.robots} team nodes and a coordinator, window {args.window:g} s, "
              f"{args.rounds} rounds per size, {os.cpu_count()} cores")
        print("| tasks | p50 ms | p99 ms | max ms | closed by all_answered | by deadline | no answer |")
        print("|---|---|---|---|---|---|---|")
        for n_tasks in args.tasks:
            latencies, closed = [], {"all_answered": 0, "deadline": 0, None: 0}
            for k in range(args.rounds):
                request_id = f"r{n_tasks}-{k}"
                sent = time.monotonic()
                requests.publish(String(data=json.dumps({"requestId": request_id, "recipe": recipe(n_tasks),
                                                         "robots": actors})))
                got = answered(request_id, args.window + 10)
                if got is None:
                    closed[None] += 1
                    continue
                latencies.append((got[0] - sent) * 1000)
                closed[got[1].get("closedBy")] = closed.get(got[1].get("closedBy"), 0) + 1
            latencies.sort()
            p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] if latencies else float("nan")
            p50 = statistics.median(latencies) if latencies else float("nan")
            print(f"| {n_tasks} | {p50:.1f} | {p99:.1f} | {max(latencies, default=float('nan')):.1f} | "
                  f"{closed['all_answered']} | {closed['deadline']} | {closed[None]} |")
    finally:
        stop_processes(procs)
        executor.shutdown()
        spinner.join(timeout=5)
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
