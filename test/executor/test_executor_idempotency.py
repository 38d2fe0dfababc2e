"""Idempotency of start, stop and resume (decision 2); keys survive a restart."""

from __future__ import annotations

import threading

import pytest

from executor_recipes import boil_recipe, request_for
from cookwala_ros.executor.service import ExecutorService, ServiceError
from executor_kitchen import KitchenPorts


def test_fifty_concurrent_starts_with_one_key_create_one_execution(service, install):
    recipe = boil_recipe()
    install(recipe)
    svc = service()
    request = request_for(recipe)
    barrier = threading.Barrier(50)
    results: list = []
    errors: list = []

    def start() -> None:
        barrier.wait()
        try:
            results.append(svc.start_execution(dict(request), request["idempotencyKey"]))
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    assert len(results) == 50
    assert sum(created for _, created in results) == 1
    assert len({status["id"] for status, _ in results}) == 1
    assert svc.store.execution_ids() == [results[0][0]["id"]]


def test_same_key_different_body_is_a_conflict(service, install):
    recipe = boil_recipe()
    install(recipe)
    svc = service()
    request = request_for(recipe)
    first, created = svc.start_execution(request, request["idempotencyKey"])
    assert created
    again, created = svc.start_execution(dict(request), request["idempotencyKey"])
    assert not created and again["id"] == first["id"]
    with pytest.raises(ServiceError) as err:
        svc.start_execution(dict(request, servings=3), request["idempotencyKey"])
    assert err.value.code == "idempotency_conflict" and err.value.status == 409


def test_body_key_is_used_without_a_header(service, install):
    recipe = boil_recipe()
    install(recipe)
    svc = service()
    request = request_for(recipe)
    first, _ = svc.start_execution(request)
    second, created = svc.start_execution(dict(request))
    assert not created and second["id"] == first["id"]


def test_header_and_body_keys_must_agree(service, install):
    recipe = boil_recipe()
    install(recipe)
    svc = service()
    with pytest.raises(ServiceError) as err:
        svc.start_execution(request_for(recipe, idempotencyKey="body-key-0001"), "header-key-0001")
    assert err.value.code == "invalid_request" and err.value.pointer == "/idempotencyKey"


def test_refusals_are_idempotent_too(service, install):
    svc = service()
    request = request_for(boil_recipe("test-absent"))
    first, _ = svc.start_execution(request)
    again, created = svc.start_execution(dict(request))
    assert not created and again == first and first["state"] == "refused"


def test_keys_survive_a_restart(device_config, install, kitchen):
    recipe = boil_recipe()
    install(recipe)
    config = device_config()
    svc = ExecutorService(config, KitchenPorts(kitchen), clock=lambda: kitchen.now)
    request = request_for(recipe)
    first, _ = svc.start_execution(request)
    svc.close()
    svc = ExecutorService(config, KitchenPorts(kitchen), clock=lambda: kitchen.now)
    try:
        again, created = svc.start_execution(dict(request))
        assert not created and again["id"] == first["id"]
        assert again["state"] == "stopped"  # accepted -> stopped: the table has no accepted -> failed
        with pytest.raises(ServiceError) as err:
            svc.start_execution(dict(request, servings=5))
        assert err.value.code == "idempotency_conflict"
    finally:
        svc.close()


def test_stop_with_a_key_stops_once(service, install):
    recipe = boil_recipe()
    install(recipe)
    svc = service()
    status, _ = svc.start_execution(request_for(recipe))
    stopped = svc.stop(status["id"], idempotency_key="stop-key-0001")
    assert stopped["state"] in ("stopping", "stopped")
    again = svc.stop(status["id"], idempotency_key="stop-key-0001")
    assert again["seq"] == stopped["seq"]
