"""CPU of an idle kitchen: the whole `kitchen` scene with nothing cooking (issue 22's figure).

Starts `cookwala-ros up kitchen` (sim clock, arm, heater, pot, executor, safety monitor) in each
clock mode asked for, waits until the executor serves HTTP and the monitor is armed, lets it
settle, then reads the CPU time of every process of the scene over a window (default 30 s) and
prints it per node and in all, as % of one core. Issue 22's goal: < 10 % of one core in all.

    .venv/bin/python benchmarks/idle_cpu.py [--seconds 30] [--clock rtf|lockstep|both] [--rtf 20]

Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import httpx
import psutil

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
GOAL_PCT = 10.0


def node_name(proc: psutil.Process) -> str:
    """The scene's name for a process: its `__node:=` remap, else its module or script."""
    try:
        argv = proc.cmdline()
    except psutil.Error:
        return "?"
    for arg in argv:
        if arg.startswith("__node:="):
            return arg.split(":=", 1)[1]
    for i, arg in enumerate(argv):
        if arg == "-m" and i + 1 < len(argv):
            return argv[i + 1].rsplit(".", 1)[-1]
    return os.path.basename(argv[1] if len(argv) > 1 else argv[0]) if argv else "?"


def cpu_seconds(procs: list[psutil.Process]) -> dict[int, float]:
    out = {}
    for proc in procs:
        try:
            times = proc.cpu_times()
            out[proc.pid] = times.user + times.system
        except psutil.Error:
            pass
    return out


def wait_ready(base: str, scene: subprocess.Popen, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if scene.poll() is not None:
            raise SystemExit(f"the scene exited ({scene.returncode}) before it served HTTP")
        try:
            if httpx.get(base + "/v1/capabilities", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"the scene did not serve {base} within {timeout_s:g} s")


def measure(clock: str, rtf: float, seconds: float, settle_s: float) -> None:
    from cookwala_ros.http.server import free_port

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="idle-cpu-"))
    port = free_port()
    log = open(tmp / "up.log", "w")  # noqa: SIM115 - closed below
    args = [sys.executable, "-m", "cookwala_ros.cli", "up", "kitchen", "--rtf", f"{rtf:g}",
            "--arg", f"clock={clock}", "--arg", f"http_port={port}", "--arg", f"state_dir={tmp / 'state'}",
            "--arg", f"data_dir={tmp / 'data'}"]
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", ROS_LOG_DIR=str(tmp / "ros"))
    env.setdefault("ROS_DOMAIN_ID", str(60 + os.getpid() % 40))
    scene = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        wait_ready(f"http://127.0.0.1:{port}", scene)
        time.sleep(settle_s)  # start-up work (imports, discovery, arming) is not idling
        root = psutil.Process(scene.pid)
        procs = [root, *root.children(recursive=True)]
        before, t0 = cpu_seconds(procs), time.monotonic()
        time.sleep(seconds)
        after, elapsed = cpu_seconds(procs), time.monotonic() - t0
        rows = sorted(((node_name(p), 100.0 * (after.get(p.pid, 0.0) - before.get(p.pid, 0.0)) / elapsed)
                       for p in procs if p.pid in before), key=lambda row: -row[1])
        total = sum(pct for _, pct in rows)
        print(f"\nidle kitchen, clock {clock}, RTF {rtf:g}: {total:.1f} % of one core over {elapsed:.0f} s "
              f"(goal < {GOAL_PCT:g} %: {'met' if total < GOAL_PCT else 'NOT met'}); "
              f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
        for name, pct in rows:
            print(f"  {name:<24} {pct:6.1f} %")
    finally:
        os.killpg(scene.pid, signal.SIGINT)
        try:
            scene.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(scene.pid, signal.SIGKILL)
            scene.wait()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=30.0, help="measuring window [s] (default 30)")
    parser.add_argument("--settle", type=float, default=10.0, help="wait after the scene is up [s] (default 10)")
    parser.add_argument("--clock", choices=("rtf", "lockstep", "both"), default="both")
    parser.add_argument("--rtf", type=float, default=20.0, help="the scene's real_time_factor (default 20)")
    args = parser.parse_args()
    if args.seconds <= 0 or args.settle < 0 or args.rtf <= 0:
        parser.error("--seconds and --rtf must be > 0, --settle >= 0")
    for clock in (("rtf", "lockstep") if args.clock == "both" else (args.clock,)):
        measure(clock, args.rtf, args.seconds, args.settle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
