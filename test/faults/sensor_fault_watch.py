"""An observer from outside the kitchen for the sensor-fault acceptance tests (issue 16).

Its own rclpy node records every /heater/state with its ROS stamp (sim time: the hob's clock,
which the plausibility bound is stated in) and steady receipt time, and every CloudEvent on
/cookwala/events. Plus the HTTP helpers the tests share. A plain module with a unique name (not a
conftest) so it never clashes with other test folders.
"""

from __future__ import annotations

import json
import pathlib
import threading
import time

import httpx
import rclpy
from rclpy.executors import SingleThreadedExecutor

from cookwala_msgs.msg import Event, HeaterState
from cookwala_ros.ros import qos
from cookwala_ros.ros.recipe_demo import request_for_recipe
from ros_helpers import close_spinning

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(__file__).resolve().parent / "data"
MEDIA = "application/vnd.cookwala+json"
FINAL = ("completed", "stopped", "refused", "failed")
RTF = 20.0


def doc(path: pathlib.Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


class Watcher:
    """Heater states as (sim stamp s, steady s, power W, medium °C) and events as dicts."""

    def __init__(self, name: str):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.states: list[tuple[float, float, float, float]] = []
        self.events: list[dict] = []
        self._lock = threading.Lock()
        self.node.create_subscription(HeaterState, "/heater/state", self._on_state, qos.sensor())
        self.node.create_subscription(Event, "/cookwala/events", self._on_event, qos.events())
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except Exception:  # noqa: BLE001 - shut down at the end of the test
            pass

    def _on_state(self, msg: HeaterState) -> None:
        row = (msg.stamp.sec + msg.stamp.nanosec * 1e-9, time.monotonic(), float(msg.power_w), float(msg.medium_temp_c))
        with self._lock:
            self.states.append(row)

    def _on_event(self, msg: Event) -> None:
        try:
            data = json.loads(msg.data) if msg.data else {}
        except ValueError:
            data = {}
        with self._lock:
            self.events.append({"type": msg.type, "subject": msg.subject, "data": data, "rx": time.monotonic()})

    def snapshot(self) -> tuple[list, list]:
        with self._lock:
            return list(self.states), list(self.events)

    def sensor_failures(self) -> list[dict]:
        return [e for e in self.snapshot()[1] if e["data"].get("incident") == "cw.incident.sensor_failure"]

    def wait(self, predicate, timeout_s: float, what: str, explain=None):
        """Until `predicate()` is truthy; a timeout says what the hob and the events showed, and
        `explain()` (e.g. the execution's status) if given."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = predicate()
            if found:
                return found
            time.sleep(0.05)
        states, events = self.snapshot()
        context = f"{len(states)} heater states, the last {states[-3:]}; events {[e['type'] for e in events][-8:]}"
        if explain is not None:
            try:
                context += f"; {explain()}"
            except Exception as exc:  # noqa: BLE001 - the explanation must not hide the failure
                context += f"; (no explanation: {exc!r})"
        raise AssertionError(f"not within {timeout_s:g} s: {what} ({context})")

    def close(self) -> None:
        close_spinning(self.executor, self.node, self.context, self.thread)


def start(base_url: str, path: pathlib.Path, key: str) -> dict:
    r = httpx.post(base_url + "/v1/executions", json=request_for_recipe(doc(path), key=key),
                   headers={"content-type": MEDIA, "Idempotency-Key": key})
    assert r.status_code == 202, r.text
    status = r.json()
    assert status["state"] == "accepted", status
    return status


def status(base_url: str, execution: str) -> dict:
    return httpx.get(f"{base_url}/v1/executions/{execution}").json()


def wait_state(base_url: str, execution: str, states, timeout_s: float) -> dict:
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        last = status(base_url, execution)
        if last["state"] in states:
            return last
        time.sleep(0.1)
    raise AssertionError(f"{execution} not {states} within {timeout_s} s (last {last and last['state']})")


def log(base_url: str, execution: str) -> dict:
    r = httpx.get(f"{base_url}/v1/executions/{execution}/log")
    assert r.status_code == 200, r.text
    return r.json()
