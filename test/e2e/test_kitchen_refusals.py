"""Every RefusalReason produced by a request over HTTP to the live executor in the sim kitchen.

The kitchen runs a test device file: the shipped one without its oil thermometer, with a site
safety pack (oil <= 180 degC), one trusted key, and a catalog (a small HTTP server in this
process) whose recall feed the executor polls. Presence comes from /cookwala/presence, published
by this process; `busy` is a second request while a first execution runs.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import yaml

import refusal_matrix as matrix
from e2e_http import REPO


class Catalog:
    """GET /v1/recalls answers the current list."""

    def __init__(self):
        self.recalls: list = []
        catalog = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server API
                body = json.dumps(catalog.recalls if self.path.startswith("/v1/recalls") else []).encode()
                self.send_response(200 if self.path.startswith("/v1/recalls") else 404)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()


def _device_file(tmp, catalog_url: str):
    device = yaml.safe_load((REPO / "config" / "device.yaml").read_text(encoding="utf-8"))
    device["sensors"] = [s for s in device["sensors"] if s["sensor"] != matrix.REMOVED_SENSOR]
    keys = tmp / "trusted-keys.json"
    keys.write_text(json.dumps(matrix.trusted_keys()), encoding="utf-8")
    device["safety_limits"] = ["package://config/safety/device-pack.json", str(matrix.SITE_LIMITS)]
    device["executor"].update({
        "trusted_keys": str(keys), "catalog_url": catalog_url, "recall_poll_s": 0.5})
    path = tmp / "device.yaml"
    path.write_text(yaml.safe_dump(device, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def refusal_kitchen(tmp_path_factory):
    from cookwala_ros.ros.recipe_demo import LiveKitchen

    tmp = tmp_path_factory.mktemp("refusal-kitchen")
    catalog = Catalog()
    kitchen = LiveKitchen(rtf=10.0, recipes=matrix.RECIPE_FILES, device_file=str(_device_file(tmp, catalog.url)),
                          with_safety_monitor=False, startup_timeout_s=90.0)
    kitchen.start()
    yield kitchen, catalog
    kitchen.stop()
    catalog.close()


def _post(client, body):
    return client.post("/v1/executions", json=body, headers={"Idempotency-Key": body["idempotencyKey"]})


def _wait_final(client, execution, timeout_s=30.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if client.get(f"/v1/executions/{execution}").json()["state"] in ("stopped", "completed", "failed"):
            return
        time.sleep(0.1)
    raise AssertionError(f"{execution} did not stop")


@pytest.mark.parametrize("reason", matrix.reasons())
def test_live_request_is_refused_for_exactly_its_reason(refusal_kitchen, reason):
    kitchen, catalog = refusal_kitchen

    def set_recalls(recalls):
        catalog.recalls = recalls
        time.sleep(1.5)  # three poll periods

    def set_presence(present):
        kitchen.set_presence(present)

    with httpx.Client(base_url=kitchen.base_url, timeout=30.0) as client:
        def start_busy():
            runner = f"busy-runner-{time.time_ns()}"  # its own request id: one id under two keys is a 409
            body = dict(matrix.request_for("busy"), id=f"req-{runner}", idempotencyKey=runner)
            status = _post(client, body).json()
            assert status["state"] == "accepted", status
            return status["id"]

        def stop(execution):
            client.post(f"/v1/executions/{execution}/stop")
            _wait_final(client, execution)

        kitchen.reset_heater_watch()
        status = matrix.run_case(client, reason, post=_post, set_presence=set_presence, set_recalls=set_recalls,
                                 start_busy=start_busy, stop=stop)
    assert status["state"] == "refused", status
    assert status["refusal"]["reason"] == reason, status["refusal"]
    assert ("node" in status["refusal"]) == (reason in matrix.NODE_REASONS)
    if reason != "busy":
        assert kitchen.max_heater_power_w == 0.0  # refused before any heat
