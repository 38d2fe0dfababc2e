"""Decision 2 over HTTP: the Idempotency-Key header is required, repeats return the original execution."""

from __future__ import annotations

import copy

from http_helpers import post


def test_same_key_same_body_returns_the_original_unchanged(client, soup_request):
    first = post(client, "/v1/executions", soup_request, key="repeat-key-0001")
    again = post(client, "/v1/executions", soup_request, key="repeat-key-0001")
    assert first.status_code == again.status_code == 202
    assert again.json() == first.json()
    assert again.headers["etag"] == first.headers["etag"]


def test_key_order_and_whitespace_do_not_make_a_different_body(client, soup_request):
    first = post(client, "/v1/executions", soup_request, key="canon-key-0001").json()
    reordered = dict(reversed(list(soup_request.items())))
    import json

    reordered["idempotencyKey"] = "canon-key-0001"
    text = json.dumps(reordered, indent=3)
    assert post(client, "/v1/executions", text, key="canon-key-0001").json()["id"] == first["id"]


def test_same_key_different_body_is_409(client, soup_request):
    post(client, "/v1/executions", soup_request, key="conflict-key-01")
    changed = copy.deepcopy(soup_request)
    changed["servings"] = 2
    r = post(client, "/v1/executions", changed, key="conflict-key-01")
    assert r.status_code == 409
    assert r.json()["code"] == "idempotency_conflict"
    assert r.headers["content-type"].startswith("application/problem+json")


def test_header_and_body_key_must_agree(client, soup_request):
    r = post(client, "/v1/executions", soup_request, key="header-key-0001")
    assert r.status_code == 202
    soup_request["idempotencyKey"] = "another-body-key"
    r = post(client, "/v1/executions", soup_request, key="header-key-0002", same_body_key=False)
    assert r.status_code == 400 and r.json()["pointer"] == "/idempotencyKey"


def test_header_alone_is_enough_the_body_key_alone_is_not(client, soup_request):
    body_key = soup_request["idempotencyKey"]
    by_body = post(client, "/v1/executions", soup_request)
    assert by_body.status_code == 400 and by_body.json()["header"] == "Idempotency-Key"
    first = post(client, "/v1/executions", soup_request, key=body_key).json()
    assert post(client, "/v1/executions", soup_request, key=body_key, same_body_key=False).json() == first
    del soup_request["idempotencyKey"]
    soup_request["id"] = "req-header-only-01"
    by_header = post(client, "/v1/executions", soup_request, key="header-only-01")
    assert by_header.status_code == 202 and by_header.json()["id"] != first["id"]


def test_key_length_is_checked(client, soup_request):
    r = post(client, "/v1/executions", soup_request, key="short")
    assert r.status_code == 400 and r.json()["header"] == "Idempotency-Key"


def test_stop_with_a_key_is_deduplicated(client, soup_request):
    started = post(client, "/v1/executions", soup_request, key="stop-dedupe-01").json()
    path = f"/v1/executions/{started['id']}/stop"
    first = client.post(path, headers={"Idempotency-Key": "stop-once-0001"})
    second = client.post(path, headers={"Idempotency-Key": "stop-once-0001"})
    assert first.status_code == 202 and second.json()["seq"] == first.json()["seq"]
