"""Presence and recipe versions at the executor node (a process), over HTTP and the ROS action.

Issue 10 acceptance "Presence": a `/cookwala/presence` message with `person_present: false` and
default fields is nobody (`needs_human_present` for a step that needs a person), a fresh `true`
is somebody, and a stale `true` is nobody again. "Versions": a recipe whose own `cookwala` is
0.3.0 (or malformed) is refused `unsupported_version` over HTTP and over the ExecuteRecipe
action; 0.2.7 is accepted. No kitchen is needed: the node runs on sim time with no /clock, so an
accepted execution stays `accepted` until it is stopped.
"""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from rclpy.parameter import Parameter  # noqa: F401 - rclpy must import before cookwala_msgs here

from cookwala_msgs.msg import Presence
from cookwala_ros.http.server import free_port
from cookwala_ros.ros import names, qos
from executor_procs import Client, StandInDrivers, goal_for, start_executor, stop_processes
from executor_recipes import boil_recipe, request_for
from ros_helpers import RosHarness
from test_executor_refusals import deep_fry_recipe

STALE_S = 3.0  # the executor's presence_stale_s here
SETTLE_S = 1.0  # long enough for ten messages at 10 Hz, well inside STALE_S
FINAL = ("completed", "stopped", "failed", "refused")


class Person:
    """Publishes `reading` (None: nothing) on the presence topic at 10 Hz, like a detector."""

    def __init__(self, ros: RosHarness):
        node = ros.node("kitchen_presence")
        self.pub = node.create_publisher(Presence, names.PRESENCE, qos.sensor())
        self.reading: Presence | None = None
        self._lock = threading.Lock()
        node.create_timer(0.1, self._tick)

    def _tick(self) -> None:
        with self._lock:
            if self.reading is not None:
                self.pub.publish(self.reading)

    def say(self, reading: Presence | None) -> None:
        with self._lock:
            self.reading = reading


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    """The executor with HTTP, a library holding a deep fry (needs a person) and a simmer at
    three recipe versions, and this process publishing presence."""
    data = tmp_path_factory.mktemp("checks") / "data"
    (data / "recipes").mkdir(parents=True)
    recipes = {"fry": deep_fry_recipe(), "v030": dict(boil_recipe("test-v030"), cookwala="0.3.0"),
               "banana": dict(boil_recipe("test-banana"), cookwala="0.2.banana"),
               "v027": dict(boil_recipe("test-v027"), cookwala="0.2.7")}
    for name, recipe in recipes.items():  # copied in by hand: `recipes add` would refuse two of them
        (data / "recipes" / f"{name}.cookwala.json").write_text(json.dumps(recipe))
    port = free_port()
    executor = start_executor(data, http_port=port, presence_default=False, presence_stale_s=STALE_S)
    try:
        with RosHarness() as ros:
            client = Client(ros)
            StandInDrivers(ros)
            assert client.wait_ready(to_cook=True), "executor did not come up"
            http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=20.0)
            assert ros.wait_for(lambda: _answers(http), timeout=30), "no HTTP API"
            person = Person(ros)
            assert ros.wait_for_subscribers(person.pub)
            yield {"ros": ros, "client": client, "http": http, "person": person, "recipes": recipes}
            http.close()
    finally:
        stop_processes([executor])


def _answers(http: httpx.Client) -> bool:
    try:
        return http.get("/v1/capabilities").status_code == 200
    except httpx.HTTPError:
        return False


def post(node, recipe: dict) -> dict:
    body = request_for(recipe)
    answer = node["http"].post("/v1/executions", json=body, headers={"Idempotency-Key": body["idempotencyKey"]})
    assert answer.status_code == 202, answer.text
    return answer.json()


def stop_http(node, status: dict) -> None:
    """Stop an accepted execution so the device is free for the next case."""
    http = node["http"]
    assert http.post(f"/v1/executions/{status['id']}/stop").status_code in (200, 202)
    assert node["ros"].wait_for(lambda: http.get(f"/v1/executions/{status['id']}").json()["state"] in FINAL,
                                timeout=20, interval=0.1)


def accepted_once_present(node, recipe: dict, timeout: float = 20.0) -> dict:
    """Post until accepted (the first presence message may take a moment to be discovered)."""
    deadline = time.monotonic() + timeout
    while True:
        status = post(node, recipe)
        if status["state"] == "accepted" or time.monotonic() > deadline:
            return status
        time.sleep(0.3)


def refusal(status: dict) -> str | None:
    return (status.get("refusal") or {}).get("reason") if status["state"] == "refused" else None


@pytest.mark.timeout(180)
def test_presence_false_with_default_fields_is_nobody_and_a_fresh_true_is_somebody(node):
    person, fry = node["person"], node["recipes"]["fry"]
    person.say(Presence(person_present=True, source="test"))
    status = accepted_once_present(node, fry)
    assert status["state"] == "accepted", status
    stop_http(node, status)

    # the executor just heard a fresh "true": only reading the "false" as nobody can refuse now
    person.say(Presence(person_present=False, source="test"))  # reachable_within_s left at its default 0.0
    time.sleep(SETTLE_S)
    status = post(node, fry)
    assert refusal(status) == "needs_human_present", status
    assert status["refusal"]["node"] == "f1"

    person.say(Presence(person_present=True, reachable_within_s=120.0, source="test"))  # too far: narrows
    time.sleep(SETTLE_S)
    assert refusal(post(node, fry)) == "needs_human_present"

    person.say(Presence(person_present=True, reachable_within_s=30.0, source="test"))
    status = accepted_once_present(node, fry)
    assert status["state"] == "accepted", status
    stop_http(node, status)


@pytest.mark.timeout(180)
def test_a_stale_true_is_nobody(node):
    person, fry = node["person"], node["recipes"]["fry"]
    person.say(Presence(person_present=True, source="test"))
    status = accepted_once_present(node, fry)
    assert status["state"] == "accepted", status
    stop_http(node, status)
    person.say(None)  # the detector falls silent; its last word was "true"
    time.sleep(STALE_S + 0.5)
    status = post(node, fry)
    assert refusal(status) == "needs_human_present", status
    assert "f1" == status["refusal"]["node"]


@pytest.mark.timeout(180)
def test_recipe_version_over_http(node):
    node["person"].say(Presence(person_present=True, source="test"))
    recipes = node["recipes"]
    for name in ("v030", "banana"):
        status = post(node, recipes[name])
        assert refusal(status) == "unsupported_version", status
        assert "recipe version" in status["refusal"]["detail"], status
    status = post(node, recipes["v027"])
    assert status["state"] == "accepted", status
    stop_http(node, status)


@pytest.mark.timeout(180)
def test_recipe_version_over_the_action(node):
    node["person"].say(Presence(person_present=True, source="test"))
    ros, client, recipes = node["ros"], node["client"], node["recipes"]

    def result_of(handle):
        future = handle.get_result_async()
        assert ros.wait_for(future.done, timeout=20)
        return future.result().result

    for name in ("v030", "banana"):
        handle = client.send(goal_for(request_for(recipes[name])))
        assert handle.accepted  # a refusal is a result, not a rejected goal
        result = result_of(handle)
        assert (result.state, result.refusal_reason) == ("refused", "unsupported_version")
    request = request_for(recipes["v027"])
    handle = client.send(goal_for(request))
    assert handle.accepted
    assert ros.wait_for(lambda: any(s.request == request["id"] and s.state == "accepted" for s in client.statuses),
                        timeout=20)
    cancel = handle.cancel_goal_async()
    assert ros.wait_for(cancel.done, timeout=10)
    assert result_of(handle).state == "stopped"
