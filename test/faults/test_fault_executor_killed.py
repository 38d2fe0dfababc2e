"""Issue 16: SIGKILL the executor mid-simmer under `cookwala-ros up kitchen` (the real command).

Observed from outside (a watcher node, steady-clock receipt times): the hob reads 0 W within 1 s
(0.4 s with the device's 0.3 s heartbeat lease), the safety monitor is still running and latched,
the supervisor reported the executor with its restart line and kept the scene up; the executor
restarted with that line (`--only executor`) serves HTTP again, marked the killed execution failed
with real (wall-clock) record times, and its log's trace reaches within 1 s of the kill; the
restarted executor refuses or accepts as the monitor's state says. With the kitchen's lease, the
whole scene is then stopped and started again with the same state_dir: the monitor still reports
the latch until a local ResetSafety.

Every check is made and the failures are reported together, each naming what it depends on:
- 0 W within 1 s at the kitchen's 1.0 s lease: the heater's own dead-man (helper D,
  `command_timeout_s` 0.5 s); the monitor's lease alone gives about 1.0 s.
- the latch surviving the scene's restart: the monitor's latch persistence in `state_dir` (helper A).
- the restarted executor refusing while the monitor is latched: the executor's monitor check.
"""

from __future__ import annotations

import json
import shutil
import signal
import time

import pytest

pytest.importorskip("rclpy", reason="rclpy (ROS 2 wheels) is not installed")

from fault_up_scene import RESTART_LINE, WATER, UpScene, Watcher, epoch, get, start_cook, wait_http  # noqa: E402

from cookwala_ros.core import schemas  # noqa: E402
from cookwala_ros.core.execution_log import TRACE_FIELD  # noqa: E402
from cookwala_ros.http.server import free_port  # noqa: E402

RTF = 10.0  # in lock-step (issue 22) a ceiling; the deadlines below are steady-clock ones
FINAL = ("completed", "stopped", "refused", "failed")


@pytest.fixture
def closing():
    things: list = []
    yield things.append
    for thing in reversed(things):
        thing.close()


def scene_args(tmp_path, port: int, lease_s: float | None) -> list[str]:
    args = ["kitchen", "--rtf", f"{RTF:g}", "--arg", "clock=lockstep", "--arg", f"state_dir={tmp_path / 'state'}",
            "--arg", f"http_port={port}", "--arg", f"data_dir={tmp_path / 'data'}", "--grace-s", "6"]
    if lease_s is not None:
        args += ["--arg", f"heartbeat_lease_s={lease_s}"]
    return args


def cook_until_heating(watcher: Watcher, base: str, recipe: dict, timeout: float = 120.0) -> dict:
    """Start a cook and wait until its simmer step is under way (running, water above 50 °C, power
    on). A cook that ends before that (the monitor stopping on its own) fails the test, naming why."""
    watcher.armed_before_cooking()
    execution = start_cook(base, recipe, key=f"killed-{time.time_ns()}")
    deadline = time.monotonic() + timeout
    while True:
        execution = get(base, f"/v1/executions/{execution['id']}")
        if execution["state"] == "running" and watcher.last_medium_c > 50.0 and watcher.power_w > 0:
            return execution
        assert execution["state"] not in FINAL, (
            f"the cook ended {execution['state']} before the kill "
            f"({execution.get('refusal') or execution.get('x-cookwala-ros-reason')}; monitor {watcher.describe_status()})")
        assert time.monotonic() < deadline, f"no heating within {timeout} s (medium {watcher.last_medium_c})"
        time.sleep(0.05)


@pytest.mark.parametrize("lease_s, bound_s", [(None, 1.0), (0.3, 0.4)], ids=["kitchen-lease-1.0", "device-lease-0.3"])
def test_executor_sigkill_under_up_kitchen_ends_safe_and_recovers(tmp_path, closing, lease_s, bound_s):
    (tmp_path / "data" / "recipes").mkdir(parents=True)
    shutil.copy(WATER, tmp_path / "data" / "recipes" / WATER.name)
    recipe = json.loads(WATER.read_text())
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    watcher = Watcher()
    closing(watcher)
    scene = UpScene(tmp_path / "up.log", scene_args(tmp_path, port, lease_s))
    closing(scene)
    wait_http(base, proc=scene.proc)

    execution = cook_until_heating(watcher, base, recipe)
    executor, monitor = scene.node_process("executor"), scene.node_process("safety_monitor")
    plant = [scene.node_process(n) for n in ("sim_clock", "arm_sim", "heater_sim")]
    watcher.wait(lambda: watcher.power_w > 0, 10.0, "heat on at the kill")
    killed_at = time.monotonic()
    executor.send_signal(signal.SIGKILL)

    failures: list[str] = []
    watcher.wait(lambda: any(p == 0.0 for _, p in watcher.heater_since(killed_at)), 10.0, "0 W after the kill")
    zero_at = next(t for t, p in watcher.heater_since(killed_at) if p == 0.0)
    latency = zero_at - killed_at
    print(f"\nexecutor SIGKILL -> 0 W observed: {latency * 1000:.0f} ms (lease {lease_s or 1.0} s, bound {bound_s} s)")
    if latency > bound_s:
        failures.append(f"0 W {latency:.3f} s after the SIGKILL (bound {bound_s} s; depends on the heater's "
                        "dead-man, helper D, at the 1.0 s lease)")
    time.sleep(1.5)
    back_on = [(t - killed_at, p) for t, p in watcher.heater_since(zero_at) if p > 0]
    assert not back_on, f"heat came back after the cut: {back_on[:5]}"

    # the monitor outlived the executor, halted and latched; the supervisor kept the scene up
    watcher.wait(lambda: watcher.state_label in ("stopped", "fault"), 10.0, "the monitor latched")
    print(f"monitor: {watcher.describe_status()}")
    assert monitor.is_running() and monitor.status() != "zombie", "the safety monitor died with the executor"
    assert scene.proc.poll() is None, f"the supervisor tore the scene down:\n{scene.output()[-3000:]}"
    assert all(p.is_running() and p.status() != "zombie" for p in plant)
    restart = scene.wait_for_output(RESTART_LINE, timeout=10.0)
    assert restart.group(1) == "killed by SIGKILL"

    # the executor's last command before the kill: its ROS time when it died
    with watcher.lock:
        last_own = max(stamp for t, stamp, source, _ in watcher.commands if source == "executor" and t <= killed_at)

    # restart the executor alone, with the line the supervisor printed
    restarted = UpScene.from_command_line(tmp_path / "restart.log", restart.group(2))
    closing(restarted)
    restarted_at = time.time()
    wait_http(base, proc=restarted.proc)
    status = get(base, f"/v1/executions/{execution['id']}")
    assert status["state"] == "failed" and status["x-cookwala-ros-reason"]["code"] == "executor_restarted", status
    log = get(base, f"/v1/executions/{execution['id']}/log")
    assert schemas.validate(log, "ExecutionLog") == []
    for what, stamp in (("updatedAt", status["updatedAt"]), ("endedAt", log["endedAt"])):
        assert restarted_at - 5.0 <= epoch(stamp) <= time.time() + 5.0, f"{what} {stamp} is not the wall clock"
    rows = log[TRACE_FIELD]
    trace_end = epoch(log["startedAt"]) + rows[-1][0]
    lost_s = last_own - trace_end
    print(f"trace: {len(rows)} rows, ends {lost_s:.2f} s (ROS time) before the executor's last command "
          f"({lost_s / RTF:.3f} s wall at RTF {RTF:g})")
    assert lost_s <= 1.0 * RTF, f"the log's trace ends {lost_s:.1f} s of ROS time before the kill"

    # the restarted executor refuses or accepts as the monitor's state says
    latched = watcher.state_label in ("stopped", "fault")
    second = start_cook(base, recipe, key=f"after-kill-{time.time_ns()}")
    if latched and second["state"] != "refused":
        failures.append(f"the monitor is {watcher.state_label} but a new execution was {second['state']} "
                        "(depends on the executor's monitor check, helper B)")
    if not latched:
        assert second["state"] == "accepted", second

    if lease_s is None:  # the latch survives a restart of the whole scene, until a local reset
        restarted.stop()
        stopped_at = time.monotonic()
        assert scene.stop() == 0, scene.output()[-3000:]
        print(f"scene stopped in {time.monotonic() - stopped_at:.1f} s")
        assert "stopped: sim_clock (" in scene.output()
        watcher.status = None
        heard_from = len(watcher.statuses)
        again = UpScene(tmp_path / "up-again.log", scene_args(tmp_path, port, lease_s))
        closing(again)
        wait_http(base, proc=again.proc)
        watcher.wait(lambda: watcher.state_label in ("armed", "stopped", "fault"), 60.0, "the new monitor's status")
        labels = [label for _, label, _ in watcher.statuses[heard_from:] if label != "unconfigured"]
        if labels[0] == "armed" or watcher.state_label == "armed":
            failures.append(f"the restarted scene's monitor re-armed without a local reset ({labels}; depends on "
                            "the monitor's latch persistence in state_dir, helper A)")
        else:
            reply = watcher.reset_safety()
            print(f"ResetSafety after the scene's restart: {reply.accepted} {reply.state} {reply.message}")
            watcher.wait(lambda: watcher.state_label == "armed", 20.0, "armed after the local reset")
    assert not failures, "\n".join(failures)
