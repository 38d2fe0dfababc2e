"""Cooking through the service on the simulated kitchen: complete, stop, resume, recalls."""

from __future__ import annotations

import http.server
import json
import threading

import pytest

from executor_recipes import boil_recipe, request_for
from cookwala_ros.core import schemas
from cookwala_ros.executor.service import ServiceError
from executor_kitchen import drive

FINAL = ("completed", "stopped", "failed")


def recall(recipe_id: str, rhash: str, action: str) -> dict:
    return {"core": "0.2.0", "kind": "Recall", "id": f"recall-{action}", "issuedAt": "2026-11-29T12:00:00Z",
            "issuer": "test-catalog", "targets": [{"ref": recipe_id, "hash": rhash}], "severity": "high",
            "reason": "food_safety", "action": action,
            "signature": {"alg": "EdDSA", "kid": "test#k", "sig": "AAAA", "signedAt": "2026-11-29T12:00:00Z"}}


def state_of(svc, execution_id: str) -> str:
    return svc.get_status(execution_id)["state"]


def test_sample_soup_completes_on_the_sensor_rung(service, install, kitchen, soup):
    install(soup)
    svc = service()
    status, _ = svc.start_execution(request_for(soup))
    assert status["state"] == "accepted", status
    eid = status["id"]
    humans = []

    def help_out() -> None:  # a person present does the human-only steps (blend, hold, serve)
        current = svc.get_status(eid)
        if current["state"] == "needs_human":
            humans.append(current["humanNeeded"]["why"])
            svc.resume(eid, current["seq"])

    assert drive(svc, kitchen, lambda: state_of(svc, eid) in FINAL, dt=0.25, max_s=3 * 3600, on_tick=help_out)
    assert state_of(svc, eid) == "completed", svc.get_status(eid)
    log = svc.get_log(eid)
    assert schemas.validate(log, "ExecutionLog") == []
    assert log["outcome"] == "served"
    by_node = {s["node"]: s for s in log["steps"]}
    assert by_node["n3"]["verifiedBy"] == "sensor"
    assert humans, "the human-only steps asked for a person"


def test_stop_cuts_heat_and_ends_stopped(service, install, kitchen):
    recipe = boil_recipe(minutes=10)
    install(recipe)
    svc = service()
    status, _ = svc.start_execution(request_for(recipe))
    eid = status["id"]
    drive(svc, kitchen, lambda: kitchen.heater.power_w > 0, max_s=300)
    stopping = svc.stop(eid, {"core": "0.2.0", "kind": "StopRequest", "execution": eid,
                              "requestedBy": "human:tester", "reason": "test"})
    assert stopping["state"] == "stopping"
    assert kitchen.heater.power_w == 0  # the ports' halt cut heat at once
    assert svc.ports.stop_reasons == ["stop requested by human:tester: test"]  # for the safety monitor to latch
    assert drive(svc, kitchen, lambda: state_of(svc, eid) == "stopped", max_s=30)
    final = svc.get_status(eid)
    assert "human:tester" in final["x-cookwala-ros-reason"]["detail"]
    assert svc.stop(eid)["seq"] == final["seq"]  # a no-op in a final state
    assert svc.get_log(eid)["outcome"] == "aborted_safe"


def test_stop_request_must_name_the_execution(service, install):
    recipe = boil_recipe()
    install(recipe)
    svc = service()
    status, _ = svc.start_execution(request_for(recipe))
    with pytest.raises(ServiceError) as err:
        svc.stop(status["id"], {"core": "0.2.0", "kind": "StopRequest", "execution": "exec-other",
                                "requestedBy": "human:x"})
    assert err.value.pointer == "/execution"
    with pytest.raises(ServiceError) as err:
        svc.stop(status["id"], {"kind": "StopRequest"})
    assert err.value.code == "invalid_request"


def test_unknown_execution_is_not_found(service):
    svc = service()
    for call in (lambda: svc.get_status("exec-nope"), lambda: svc.get_log("exec-nope"),
                 lambda: svc.stop("exec-nope"), lambda: svc.resume("exec-nope", None)):
        with pytest.raises(ServiceError) as err:
            call()
        assert err.value.code == "not_found" and err.value.status == 404


def boil_then_blend() -> dict:
    """A heat step, then a step the robot cannot do (blend): a present person does it."""
    recipe = boil_recipe("test-boil-blend", minutes=1)
    recipe["process"]["nodes"].append({"id": "n2", "op": "cw.op.blend", "inputs": ["water"],
                                       "params": {"speed": "low"}})
    return recipe


def test_resume_needs_the_current_seq_and_a_resumable_state(service, install, kitchen):
    recipe = boil_then_blend()
    install(recipe)
    svc = service()
    status, _ = svc.start_execution(request_for(recipe))
    eid = status["id"]
    with pytest.raises(ServiceError) as err:
        svc.resume(eid, None)
    assert err.value.code == "invalid_state"
    assert drive(svc, kitchen, lambda: state_of(svc, eid) == "needs_human", max_s=1800)
    current = svc.get_status(eid)
    assert current["humanNeeded"]["why"]
    with pytest.raises(ServiceError) as err:
        svc.resume(eid, current["seq"] - 1)
    assert err.value.code == "precondition_failed" and err.value.status == 412
    resumed = svc.resume(eid, current["seq"], idempotency_key="resume-key-0001")
    assert resumed["state"] == "running" and resumed["seq"] > current["seq"]
    again = svc.resume(eid, current["seq"], idempotency_key="resume-key-0001")
    assert again["seq"] == resumed["seq"]  # the same key resumes once
    assert drive(svc, kitchen, lambda: state_of(svc, eid) == "completed", max_s=600)
    assert [s["verifiedBy"] for s in svc.get_log(eid)["steps"]] == ["sensor", "human"]


def test_block_and_stop_running_recall_stops_the_execution(service, install, kitchen):
    recipe = boil_recipe(minutes=10)
    rhash = install(recipe)
    svc = service()
    status, _ = svc.start_execution(request_for(recipe))
    eid = status["id"]
    drive(svc, kitchen, lambda: state_of(svc, eid) == "running", max_s=120)
    svc.apply_recalls([recall(recipe["id"], rhash, "block")])
    assert state_of(svc, eid) == "running"  # a plain block only refuses new starts
    svc.apply_recalls([recall(recipe["id"], rhash, "block_and_stop_running")])
    assert state_of(svc, eid) == "stopping"
    assert drive(svc, kitchen, lambda: state_of(svc, eid) == "stopped", max_s=30)
    assert "recall-block_and_stop_running" in svc.get_status(eid)["x-cookwala-ros-reason"]["detail"]


class _Feed(http.server.BaseHTTPRequestHandler):
    body = b"[]"

    def do_GET(self):  # noqa: N802 - http.server API
        if self.path != "/v1/recalls":
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


def test_recalls_are_polled_from_the_catalog_and_cached(service, install, device_config):
    recipe = boil_recipe()
    rhash = install(recipe)
    _Feed.body = json.dumps({"recalls": [recall(recipe["id"], rhash, "block"), {"kind": "Recall"}]}).encode()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Feed)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        svc = service(catalog_url=url, recall_poll_s=0.05)
        assert svc._poller is not None
        kept = svc._poller.poll_once()
        assert [r["id"] for r in kept] == ["recall-block"]  # the invalid one is dropped
        assert svc.store.recalls()[0]["id"] == "recall-block"
        status, _ = svc.start_execution(request_for(recipe))
        assert status["refusal"]["reason"] == "recipe_recalled"
        server.shutdown()  # offline: the cached recall still blocks
        server.server_close()
        assert svc._poller.poll_once() is None
        assert svc.start_execution(request_for(recipe))[0]["refusal"]["reason"] == "recipe_recalled"
    finally:
        server.server_close()


def test_disabled_liquid_sensor_runs_on_the_model_or_time_rung(service, install, kitchen):
    recipe = boil_recipe(minutes=2)
    install(recipe)
    kitchen.sensors_ok["cw.sense.liquid_temp"] = False
    svc = service()
    status, _ = svc.start_execution(request_for(recipe))
    assert status["state"] == "accepted"
    eid = status["id"]
    assert drive(svc, kitchen, lambda: state_of(svc, eid) in FINAL, max_s=3600)
    steps = svc.get_log(eid)["steps"]
    assert state_of(svc, eid) == "completed" and steps[0]["verifiedBy"] in ("model", "time")
