"""Every RefusalReason produced by a request over HTTP (the app in-process, the real service).

The live-kitchen variant of the same matrix is in test_kitchen_refusals.py; this one runs in a
second and needs no ROS: the device situation (presence, recalls, a running execution) is set on
the service's own ports and recall cache.
"""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest
from fastapi.testclient import TestClient

from cookwala_ros.device import load_device_config
from cookwala_ros.executor.config import ExecutorConfig, StaticPorts
from cookwala_ros.executor.service import ExecutorService
from cookwala_ros.http.app import create_app
from cookwala_ros.resources import share_path
from cookwala_ros.safety.packs import load_effective_pack

import refusal_matrix as matrix

ALL_REASONS = json.loads(share_path("schemas", "refusal-reason.schema.json").read_text(encoding="utf-8"))["enum"]


@pytest.fixture(scope="module")
def kitchen(tmp_path_factory):
    root = tmp_path_factory.mktemp("refusals")
    library = root / "recipes"
    library.mkdir()
    for path in matrix.RECIPE_FILES:
        shutil.copy(path, library / path.name)
    base = ExecutorConfig.from_device(load_device_config(), data_dir=root / "data")
    config = dataclasses.replace(
        base, library_dir=library, capabilities=matrix.test_capabilities(base.capabilities),
        limits=load_effective_pack([share_path("config", "safety", "device-pack.json"), matrix.SITE_LIMITS]),
        trusted_keys=matrix.trusted_keys())
    ports = StaticPorts()
    service = ExecutorService(config, ports, poll_recalls=False)
    with TestClient(create_app(service)) as client:
        yield client, service, ports
    service.close()


def _post(client, body):
    return client.post("/v1/executions", json=body, headers={"Idempotency-Key": body["idempotencyKey"]})


def test_fixture_requests_name_current_recipe_revisions():
    assert matrix.check_hashes() == []


def test_there_is_one_request_per_refusal_reason():
    assert matrix.reasons() == sorted(ALL_REASONS)


@pytest.mark.parametrize("reason", sorted(ALL_REASONS))
def test_request_is_refused_for_exactly_its_reason(kitchen, reason):
    client, service, ports = kitchen

    def set_presence(present):
        ports.present = present

    def start_busy():
        body = dict(matrix.request_for("busy"), idempotencyKey="busy-runner-0001", id="req-busy-runner")
        status = _post(client, body).json()
        assert status["state"] == "accepted", status
        return status["id"]

    def stop(execution_id):
        assert client.post(f"/v1/executions/{execution_id}/stop").status_code in (200, 202)

    status = matrix.run_case(client, reason, post=_post, set_presence=set_presence,
                             set_recalls=service.apply_recalls, start_busy=start_busy, stop=stop)
    assert status["state"] == "refused"
    refusal = status["refusal"]
    assert refusal["reason"] == reason, refusal
    assert refusal["detail"]
    assert ("node" in refusal) == (reason in matrix.NODE_REASONS), refusal
    log = client.get(f"/v1/executions/{status['id']}/log")
    assert log.status_code == 200


def test_the_deep_fry_sample_is_accepted_with_an_oil_thermometer(tmp_path):
    """The missing_sensor case is about the sensor: the shipped device (which has one) takes it."""
    library = tmp_path / "recipes"
    library.mkdir()
    shutil.copy(matrix.REPO / "examples" / "recipes" / "chips-deep-fry.cookwala.json", library)
    config = ExecutorConfig.from_device(load_device_config(), data_dir=tmp_path / "data", library_dir=library)
    service = ExecutorService(config, StaticPorts(present=True), poll_recalls=False)
    try:
        with TestClient(create_app(service)) as client:
            status = _post(client, matrix.request_for("missing_sensor_no_fallback")).json()
            assert status["state"] == "accepted", status
    finally:
        service.close()
