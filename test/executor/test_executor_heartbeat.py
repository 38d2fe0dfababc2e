"""The executor's heartbeat never waits for the rest of the executor (real rclpy, in-process).

The safety monitor counts an executor whose heartbeat is late by its lease (0.3 s on a device)
as dead and stops the kitchen. The service lock is held by the control tick, by an admission
and by durable writes (an fsync on a busy disk), so a heartbeat that took it was late whenever
they were slow: a false stop (issue 16 item 14). Here the lock is held for 2 s from outside and
the heartbeats keep coming.
"""

from __future__ import annotations

import json
import time

import pytest
from rclpy.parameter import Parameter

from executor_kitchen import drive
from executor_recipes import boil_recipe, request_for
from cookwala_msgs.msg import Heartbeat
from cookwala_ros.ros import names, qos
from cookwala_ros.ros.executor_node import ExecutorNode
from ros_helpers import RosHarness

HOLD_S = 2.0


@pytest.mark.timeout(90)
def test_heartbeats_go_on_while_the_service_lock_is_held(tmp_path):
    recipe = boil_recipe()
    (tmp_path / "data" / "recipes").mkdir(parents=True)
    (tmp_path / "data" / "recipes" / "boil.cookwala.json").write_text(json.dumps(recipe))
    values = {"data_dir": str(tmp_path / "data"), "http_port": 0, "safety_monitor_node": "none",
              "presence_default": True, "heartbeat_hz": 10.0}
    with RosHarness() as ros:
        node = ros.add(ExecutorNode(context=ros.context,
                                    parameter_overrides=[Parameter(k, value=v) for k, v in values.items()]))
        probe = ros.node("heartbeat_probe")
        beats: list[tuple[float, Heartbeat]] = []
        probe.create_subscription(Heartbeat, names.HEARTBEAT, lambda m: beats.append((time.monotonic(), m)),
                                  qos.heartbeat(1.0))
        assert ros.wait_for(lambda: len(beats) >= 3, timeout=30), "no heartbeat from the executor"
        assert beats[-1][1].state == "idle" and beats[-1][1].execution_id == ""

        held = time.monotonic()
        with node.service._lock:  # as a slow tick or a durable write would
            time.sleep(HOLD_S)
        during = [m for at, m in list(beats) if held < at <= held + HOLD_S]
        # 10 Hz for 2 s is 20; a lock-bound heartbeat gave none
        assert len(during) >= 5, f"{len(during)} heartbeats while the service lock was held for {HOLD_S:g} s"


def test_the_heartbeat_snapshot_follows_the_active_execution(service, install, kitchen):
    """What the heartbeat says (execution, state) is kept without the lock, and is right."""
    recipe = boil_recipe()
    install(recipe)
    svc = service()
    assert svc.cooking_now() is None
    status, _ = svc.start_execution(request_for(recipe))
    assert svc.cooking_now() == (status["id"], "accepted")
    assert drive(svc, kitchen, lambda: svc.get_status(status["id"])["state"] == "running", max_s=120)
    assert svc.cooking_now() == (status["id"], "running")
    svc.stop(status["id"])
    assert drive(svc, kitchen, lambda: svc.get_status(status["id"])["state"] == "stopped", max_s=60)
    assert svc.cooking_now() is None
