"""The executor and the safety monitor together (issue 6): the whole kitchen over HTTP.

POST …/stop halts the kitchen from the executor at once and hands the stop to the safety
monitor, which latches it, verifies standstill and heat off on its own inputs and holds the
device: a new execution is refused `busy` until somebody resets the monitor locally. Limits
tightened on the monitor are what GET /v1/safety-limits reports.
"""

from __future__ import annotations

import json
import math
import threading
import time

import httpx
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor

from cookwala_msgs.msg import SafetyStatus
from cookwala_msgs.srv import ResetSafety, TightenSafetyLimits
from cookwala_ros.ros import qos
from cookwala_ros.ros.recipe_demo import request_for_recipe

from e2e_http import E2E_RTF, MEDIA, WATER, doc as _doc, wait_final as _wait_final
from ros_helpers import close_spinning


class SafetyPanel:
    """The kitchen's local safety panel: the monitor's status and its local reset."""

    def __init__(self):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("e2e_safety_panel", context=self.context)
        self.status: SafetyStatus | None = None
        self.node.create_subscription(SafetyStatus, "/cookwala/safety/status", self._on_status, qos.latched())
        self.reset_client = self.node.create_client(ResetSafety, "/safety_monitor/reset")
        self.tighten_client = self.node.create_client(TightenSafetyLimits, "/safety_monitor/tighten_safety_limits")
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _on_status(self, msg: SafetyStatus) -> None:
        self.status = msg

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except Exception:  # noqa: BLE001 - the context is shut down at the end of the module
            pass

    def wait_state(self, label: str, timeout_s: float = 30.0) -> SafetyStatus:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            status = self.status
            if status is not None and status.state_label == label:
                return status
            time.sleep(0.05)
        raise AssertionError(f"safety monitor not {label} within {timeout_s} s: {self.status}")

    def call(self, client, request):
        assert client.wait_for_service(timeout_sec=10.0), client.srv_name
        future = client.call_async(request)
        deadline = time.monotonic() + 10.0
        while not future.done() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert future.done(), f"{client.srv_name} did not answer"
        return future.result()

    def reset(self) -> ResetSafety.Response:
        return self.call(self.reset_client, ResetSafety.Request(requested_by="e2e: local panel"))

    def close(self) -> None:
        close_spinning(self.executor, self.node, self.context, self.thread)


@pytest.fixture(scope="module")
def guarded_kitchen():
    from cookwala_ros.ros.recipe_demo import LiveKitchen

    kitchen = LiveKitchen(rtf=E2E_RTF, recipes=[WATER], with_safety_monitor=True, startup_timeout_s=90.0)
    kitchen.start()
    panel = SafetyPanel()
    try:
        yield kitchen, panel
    finally:
        panel.close()
        kitchen.stop()


def _start(base_url: str, key: str) -> dict:
    r = httpx.post(base_url + "/v1/executions", json=request_for_recipe(_doc(WATER), key=key),
                   headers={"content-type": MEDIA, "Idempotency-Key": key})
    assert r.status_code == 202, r.text
    return r.json()


def _wait_heating(kitchen, base_url: str, execution: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = httpx.get(f"{base_url}/v1/executions/{execution}").json()["state"]
        assert state not in ("stopped", "failed", "refused", "completed"), state
        if state == "running" and kitchen.max_heater_power_w > 0:
            return
        time.sleep(0.1)
    raise AssertionError(f"{execution} was not heating within {timeout_s} s")


def test_http_stop_is_latched_by_the_safety_monitor_until_a_local_reset(guarded_kitchen):
    kitchen, panel = guarded_kitchen
    base = kitchen.base_url
    kitchen.set_presence(True)
    panel.wait_state("armed", timeout_s=60.0)
    kitchen.wait_ready()

    kitchen.reset_heater_watch()
    first = _start(base, "e2e-safety-stop-0001")
    assert first["state"] == "accepted", first
    _wait_heating(kitchen, base, first["id"])

    stop = httpx.post(f"{base}/v1/executions/{first['id']}/stop",
                      json={"core": "0.2.0", "kind": "StopRequest", "execution": first["id"],
                            "requestedBy": "human:remote-app", "reason": "e2e stop"},
                      headers={"content-type": MEDIA})
    assert stop.status_code == 202, stop.text
    assert _wait_final(base, first["id"])["state"] == "stopped"

    status = panel.wait_state("stopped", timeout_s=10.0)
    assert status.last_trigger == "stop_request"
    assert "human:remote-app" in status.last_trigger_detail
    # the monitor verified the stop on its own inputs, within the CORE §6.2 deadlines
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and (math.isnan(panel.status.last_standstill_latency_s)
                                           or math.isnan(panel.status.last_heat_off_latency_s)):
        time.sleep(0.05)
    assert panel.status.state_label == "stopped"
    assert panel.status.last_standstill_latency_s < 0.5
    assert panel.status.last_heat_off_latency_s < 1.0

    held = _start(base, "e2e-safety-stop-0002")
    assert held["state"] == "refused"
    assert held["refusal"]["reason"] == "busy" and "safety monitor" in held["refusal"]["detail"], held["refusal"]

    answer = panel.reset()
    assert answer.accepted, answer.message
    panel.wait_state("armed", timeout_s=10.0)
    kitchen.wait_ready()  # the executor hears the monitor on its own
    again = _start(base, "e2e-safety-stop-0003")
    assert again["state"] == "accepted", again
    httpx.post(f"{base}/v1/executions/{again['id']}/stop")
    assert _wait_final(base, again["id"])["state"] == "stopped"


def test_limits_tightened_on_the_monitor_are_the_executors_limits(guarded_kitchen):
    kitchen, panel = guarded_kitchen

    def oil_max():
        pack = httpx.get(f"{kitchen.base_url}/v1/safety-limits").json()
        return min(l["max"] for l in pack["limits"] if l["kind"] == "max_temp"
                   and (l.get("appliesTo") or {}).get("medium") == "oil" and "max" in l)

    assert oil_max() > 190
    pack = {"core": "0.2.0", "kind": "SafetyLimits", "id": "hub-offer", "version": "0.1.0", "disclaimer": "e2e",
            "limits": [{"id": "oil.max_temp", "kind": "max_temp", "action": "stop_all",
                        "appliesTo": {"medium": "oil", "ops": ["cw.op.fry", "cw.op.deep_fry"]},
                        "max": 190, "unit": "degC", "source": "hub"}]}
    reply = panel.call(panel.tighten_client, TightenSafetyLimits.Request(pack_json=json.dumps(pack),
                                                                         requested_by="e2e hub"))
    assert reply.accepted, reply.message
    assert oil_max() == 190
