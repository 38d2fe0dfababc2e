"""Twenty ExecuteRecipe goals with one idempotency key at once (issue 14): one execution, the
newest goal follows it and the others are answered at once with it, and the executor's
heartbeat goes on meanwhile. Each goal used to hold one of the node's six worker threads until
the cook ended, so such a burst took every thread and starved the heartbeat and the control tick."""

from __future__ import annotations

import json
import threading

import pytest

from action_msgs.msg import GoalStatus
from executor_procs import Client, goal_for, start_executor, start_kitchen, stop_processes
from executor_recipes import boil_recipe, request_for
from cookwala_msgs.msg import Heartbeat
from cookwala_ros.ros import names, qos
from ros_helpers import RosHarness, sent_at

GOALS = 20
LEASE_S = 1.0  # the kitchen scene's heartbeat lease, which the executor runs with here


@pytest.mark.timeout(180)
def test_twenty_goals_with_one_key_follow_one_execution_and_the_heartbeat_goes_on(tmp_path):
    data = tmp_path / "data"
    (data / "recipes").mkdir(parents=True)
    recipe = boil_recipe(minutes=20)
    (data / "recipes" / "boil.cookwala.json").write_text(json.dumps(recipe))
    procs = start_kitchen(real_time_factor=5.0, clock="lockstep")
    procs.append(start_executor(data, clock_mode="lockstep", heartbeat_lease_s=LEASE_S))
    try:
        with RosHarness() as ros:
            client = Client(ros)
            beats: list[tuple[float, int]] = []  # (sent, count) of each heartbeat
            lock = threading.Lock()

            def on_beat(msg: Heartbeat, info) -> None:
                with lock:
                    beats.append((sent_at(info), msg.count))

            client.node.create_subscription(Heartbeat, f"/{names.HEARTBEAT}", on_beat, qos.heartbeat(LEASE_S))
            assert client.wait_ready(to_cook=True), "executor did not come up"
            request = request_for(recipe)
            goal = goal_for(request)
            sends = [client.action.send_goal_async(goal) for _ in range(GOALS)]
            assert ros.wait_for(lambda: all(f.done() for f in sends), timeout=30), \
                f"{sum(f.done() for f in sends)} of {GOALS} goals answered (accepted or rejected)"
            handles = [f.result() for f in sends]
            assert all(h.accepted for h in handles)
            results = [h.get_result_async() for h in handles]
            # all but the newest are answered at once, with the one execution; the newest follows it
            assert ros.wait_for(lambda: sum(r.done() for r in results) >= GOALS - 1, timeout=30), \
                f"{sum(r.done() for r in results)} of {GOALS} goals answered"
            answered = [r.result() for r in results if r.done()]
            assert len(answered) == GOALS - 1, "the goal that follows the execution ended too"
            said = [json.loads(a.result.log_json) for a in answered]
            assert {a.status for a in answered} == {GoalStatus.STATUS_ABORTED}
            assert len({s["execution"] for s in said}) == 1 and all("newer goal" in s["detail"] for s in said), said[:2]
            execution = said[0]["execution"]
            assert {s.id for s in client.statuses if s.request == request["id"]} == {execution}
            assert client.status(execution)["state"] not in ("completed", "stopped", "failed", "refused")
            with lock:
                sent = sorted(beats)
            gaps = [b[0] - a[0] for a, b in zip(sent, sent[1:])]
            assert sent and max(gaps, default=0.0) < LEASE_S, f"heartbeat gaps up to {max(gaps):.2f} s"
    finally:
        stop_processes(procs)
