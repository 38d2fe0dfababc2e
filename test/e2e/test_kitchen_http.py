"""End to end over real ROS and HTTP with the simulated kitchen (issue 5 acceptance).

The sample soup cooked on sim time holds every heat step's envelope and is verified by its
sensors; with the liquid thermometer failed (heater_sim fault) a simmer runs on the model/time
rung; a deep-fry recipe on a device without a usable oil thermometer is refused before any heat;
50 concurrent POSTs with one key create one execution, and the same key with another body is 409.
"""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from cookwala_ros.core import schemas
from cookwala_ros.commands.log import plot_data
from cookwala_ros.core import vocab
from cookwala_ros.http.demo_client import cook

from e2e_http import CHIPS, MEDIA, SOUP, WATER, doc as _doc, request as _request, wait_final as _wait_final


def test_deep_fry_without_oil_sensor_is_refused_before_any_heat(live_kitchen):
    live_kitchen.set_parameter("executor", "disabled_sensors", "cw.sense.oil_temp")
    try:
        live_kitchen.set_presence(True)
        live_kitchen.reset_heater_watch()
        r = httpx.post(live_kitchen.base_url + "/v1/executions", json=_request(CHIPS, "e2e-chips-0001"),
                       headers={"content-type": MEDIA, "Idempotency-Key": "e2e-chips-0001"})
        assert r.status_code == 202, r.text
        status = r.json()
        assert status["state"] == "refused"
        assert status["refusal"]["reason"] == "missing_sensor_no_fallback" and status["refusal"]["node"] == "n1"
        time.sleep(1.0)  # a few heater states later: the hob never got power
        assert live_kitchen.max_heater_power_w == 0.0
        log = httpx.get(f"{live_kitchen.base_url}/v1/executions/{status['id']}/log").json()
        assert log["outcome"] == "refused" and schemas.validate(log, "ExecutionLog") == []
    finally:
        live_kitchen.set_parameter("executor", "disabled_sensors", "")


def test_fifty_concurrent_posts_with_one_key_create_one_execution(live_kitchen):
    live_kitchen.set_presence(True)
    body = _request(WATER, "e2e-concurrent-key-0001")
    answers, lock = [], threading.Lock()
    barrier = threading.Barrier(50)

    def start():
        with httpx.Client(base_url=live_kitchen.base_url, timeout=60.0) as client:
            barrier.wait()
            r = client.post("/v1/executions", json=body, headers={"Idempotency-Key": body["idempotencyKey"]})
        with lock:
            answers.append(r)

    threads = [threading.Thread(target=start) for _ in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    assert len(answers) == 50 and {r.status_code for r in answers} == {202}
    ids = {r.json()["id"] for r in answers}
    assert len(ids) == 1
    execution = ids.pop()
    try:
        # each answer is the state at its own time: the control tick prepares the execution within
        # milliseconds of its acceptance, while the other 49 answers are still being written
        states = [r.json()["state"] for r in answers]
        assert set(states) <= {"accepted", "preparing", "running"}, states

        conflict = httpx.post(live_kitchen.base_url + "/v1/executions", json=dict(body, servings=3),
                              headers={"Idempotency-Key": body["idempotencyKey"]})
        assert conflict.status_code == 409 and conflict.json()["code"] == "idempotency_conflict"
    finally:  # the module's kitchen cooks one thing at a time: never leave this one running
        stop = httpx.post(f"{live_kitchen.base_url}/v1/executions/{execution}/stop")
    assert stop.status_code == 202
    assert _wait_final(live_kitchen.base_url, execution)["state"] == "stopped"


def _heat_steps(log):
    return [s for s in log["steps"] if s["verifiedBy"] != "human"]


def test_simmer_with_the_liquid_sensor_failed_runs_on_the_model_or_time_rung(live_kitchen):
    live_kitchen.set_presence(True)
    live_kitchen.set_parameter("heater_sim", "fault.medium_sensor", "disconnected")
    try:
        time.sleep(1.0)  # the executor sees the failed sensor in the next heater states
        result = cook(live_kitchen.base_url, _request(WATER, f"e2e-nosensor-{time.time_ns()}"),
                      out=open("/dev/null", "w"), poll_s=0.1, timeout_s=240.0)
    finally:
        live_kitchen.set_parameter("heater_sim", "fault.medium_sensor", "none")
    assert result.status["state"] == "completed", result.status
    steps = _heat_steps(result.log)
    assert steps and all(s["verifiedBy"] in ("model", "time") for s in steps), steps


def test_simmer_holds_its_band_verified_by_the_liquid_sensor(live_kitchen):
    live_kitchen.set_presence(True)
    result = cook(live_kitchen.base_url, _request(WATER, f"e2e-simmer-{time.time_ns()}"),
                  out=open("/dev/null", "w"), poll_s=0.1, timeout_s=240.0)
    assert result.status["state"] == "completed", result.status
    (step,) = _heat_steps(result.log)
    assert step["verifiedBy"] == "sensor" and step["envelopeOk"] is True and not step.get("deviation"), step
    assert_trace_inside_bands_after_warm_up(result.log, {step["node"]})


@pytest.mark.timeout(600)
def test_sample_soup_completes_with_every_heat_envelope_held_by_its_sensor(live_kitchen):
    live_kitchen.set_presence(True)
    result = cook(live_kitchen.base_url, _request(SOUP, f"e2e-soup-{time.time_ns()}"),
                  out=open("/dev/null", "w"), poll_s=0.2, timeout_s=540.0)
    assert result.status["state"] == "completed", result.status
    log = result.log
    assert schemas.validate(log, "ExecutionLog") == []
    recipe_heat = {n["id"] for n in _doc(SOUP)["process"]["nodes"]
                   if n["op"] in ("cw.op.heat", "cw.op.saute", "cw.op.simmer")}
    by_node = {s["node"]: s for s in log["steps"]}
    for node in sorted(recipe_heat):
        step = by_node[node]
        assert step["verifiedBy"] == "sensor", step
        assert step["envelopeOk"] is True, step
        assert not step.get("deviation"), step
    assert_trace_inside_bands_after_warm_up(log, recipe_heat)


# The engine takes a tick's trace row before that tick ends one step and starts the next, so a row
# at a step's start time is the previous step's last reading (e.g. the hot empty pan of a saute
# when the simmer's water goes in). Trace rows are >= 1 s apart; this skips only that row.
STEP_BOUNDARY_S = 0.5


def assert_trace_inside_bands_after_warm_up(log, nodes):
    """From the first reading inside a heat step's band to the step's end, every reading stays in it."""
    data = plot_data(log)
    series = data["series"]
    assert series["t_min"], "the log has no temperature trace"
    for step in data["steps"]:
        if step["node"] not in nodes or step["band"] is None:
            continue
        lo, hi = step["band"]
        column = "pan_c" if (vocab.envelope(step["op"]) or {}).get("medium") == "pan_surface" else "medium_c"
        start, end = step["start_min"], step["end_min"]
        values = [v for t, v in zip(series["t_min"], series[column])
                  if v is not None and start + STEP_BOUNDARY_S / 60.0 < t <= (end if end is not None else t)]
        warm = next((i for i, v in enumerate(values) if v >= lo), None)
        assert warm is not None, f"{step['node']}: never reached its band {lo}-{hi} °C"
        held = values[warm:]
        assert lo - 0.5 <= min(held) and max(held) <= hi + 0.5, \
            f"{step['node']} {step['op']}: {min(held):.1f}-{max(held):.1f} °C outside {lo}-{hi} °C after warm-up"
