"""Issue 16: a second executor started on the data dir of a running one.

The running kitchen cooks; a second executor process with the scene's own parameters (its own
HTTP port, so the port is not what stops it) is started on the same data dir. It must exit
non-zero with one line naming the data dir and the pid that holds it (no traceback), and touch
nothing: the running cook goes on, completes, and its events are all there, once each, in order.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time

import pytest

pytest.importorskip("rclpy", reason="rclpy (ROS 2 wheels) is not installed")

from fault_up_scene import WATER, Watcher, get, start_cook  # noqa: E402

from cookwala_ros import bringup  # noqa: E402
from cookwala_ros.http.server import free_port  # noqa: E402
from cookwala_ros.ros import recipe_demo  # noqa: E402

RTF = 20.0


def test_a_second_executor_on_the_same_data_dir_exits_and_the_cook_goes_on(tmp_path):
    recipe = json.loads(WATER.read_text())
    kitchen = recipe_demo.LiveKitchen(rtf=RTF, recipes=[WATER], data_dir=str(tmp_path / "data"),
                                      state_dir=str(tmp_path / "state"), startup_timeout_s=120.0)
    kitchen.start()
    watcher = Watcher("second_executor_watcher")  # the monitor's status, to say why a cook stopped
    try:
        kitchen.set_presence(True)
        execution = start_cook(kitchen.base_url, recipe, key=f"second-{time.time_ns()}")
        assert execution["state"] == "accepted", execution
        deadline = time.monotonic() + 120.0
        while get(kitchen.base_url, f"/v1/executions/{execution['id']}")["state"] != "running" \
                or kitchen.max_heater_power_w <= 0:
            assert time.monotonic() < deadline, "the cook did not start heating"
            time.sleep(0.1)
        before = get(kitchen.base_url, f"/v1/executions/{execution['id']}")
        holder = kitchen.supervisor.pids["executor"]

        arguments = dict(kitchen.scene_arguments(), http_port=free_port())
        (spec,) = [s for s in bringup.load_manifest("kitchen").node_specs(arguments) if s.name == "executor"]
        second = subprocess.run(bringup.node_command(spec, resolver=recipe_demo._resolver),
                                capture_output=True, text=True, timeout=120)
        out = (second.stdout + second.stderr).strip()
        assert second.returncode != 0, out
        assert "Traceback" not in out, out
        problem = [line for line in out.splitlines() if "cannot start" in line]
        assert problem == [f"executor: cannot start: data_dir {tmp_path / 'data'} is in use by another executor "
                           f"(pid {holder}); one executor per data dir"], out

        # the running cook is untouched: it advances and completes
        after = get(kitchen.base_url, f"/v1/executions/{execution['id']}")
        # (on a slow host the second process may take so long to start and give up that the cook is done)
        assert after["state"] in ("running", "completed") and after["seq"] >= before["seq"], (
            after.get("x-cookwala-ros-reason"), watcher.describe_status())
        deadline = time.monotonic() + 240.0
        while (status := get(kitchen.base_url, f"/v1/executions/{execution['id']}"))["state"] not in (
                "completed", "stopped", "failed"):
            assert time.monotonic() < deadline, f"the cook did not finish: {status}"
            time.sleep(0.2)
        assert status["state"] == "completed", (status.get("x-cookwala-ros-reason"), watcher.describe_status())
        assert kitchen.supervisor.pids["executor"] == holder and "executor" in kitchen.supervisor.running()
    finally:
        watcher.close()
        kitchen.stop()

    db = sqlite3.connect(f"file:{tmp_path / 'data' / 'executor.sqlite3'}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT seq, event_json FROM events WHERE execution_id=? AND seq IS NOT NULL"
                          " ORDER BY ordinal", (execution["id"],)).fetchall()
        final_seq = db.execute("SELECT seq FROM executions WHERE id=?", (execution["id"],)).fetchone()[0]
    finally:
        db.close()
    seqs = [seq for seq, _ in rows]
    assert seqs == list(range(1, final_seq + 1)), seqs  # every status event, once, in order
    states = [json.loads(event)["data"]["state"] for _, event in rows]
    assert states[-1] == "completed" and "failed" not in states, states
