"""Hostile and half-right requests at the app: each answered as the RFCs say, with a problem document."""

from __future__ import annotations

import json

from http_helpers import MEDIA, PROBLEM, post


def _problem(response, status, code=None):
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith(PROBLEM)
    doc = response.json()
    assert doc["status"] == status and doc["title"] and doc["detail"]
    if code is not None:
        assert doc["code"] == code, doc
    assert "Traceback" not in response.text and "RecursionError" not in response.text
    return doc


def _raw_post(client, body: bytes | str, key="hostile-key-0001"):
    return client.post("/v1/executions", content=body, headers={"content-type": MEDIA, "Idempotency-Key": key})


def test_start_without_the_header_is_400_even_with_a_body_key(client, soup_request):
    assert "idempotencyKey" in soup_request
    r = client.post("/v1/executions", json=soup_request, headers={"content-type": MEDIA})
    doc = _problem(r, 400, "invalid_header")
    assert doc["header"] == "Idempotency-Key" and "Idempotency-Key" in doc["detail"]
    started = post(client, "/v1/executions", soup_request, key="resume-needs-key1").json()
    r = client.post(f"/v1/executions/{started['id']}/resume", headers={"If-Match": "*"})
    assert _problem(r, 400, "invalid_header")["header"] == "Idempotency-Key"


def test_same_request_id_with_a_new_key_is_409(client, soup_request):
    first = post(client, "/v1/executions", soup_request, key="first-key-00001")
    assert first.status_code == 202
    r = post(client, "/v1/executions", soup_request, key="second-key-0001")
    doc = _problem(r, 409, "request_conflict")
    assert doc["pointer"] == "/id" and doc["execution"] == first.json()["id"]
    again = post(client, "/v1/executions", soup_request, key="first-key-00001")  # the original key still repeats
    assert again.status_code == 202 and again.json() == first.json()
    other = post(client, "/v1/executions", dict(soup_request, id="req-another-one"), key="third-key-00001")
    assert other.status_code == 202 and other.json()["id"] != first.json()["id"]


def test_405_names_the_allowed_methods(client):
    for method, path, allowed in [("delete", "/v1/executions/exec-x", {"GET"}),
                                  ("get", "/v1/executions", {"POST"}),
                                  ("put", "/v1/capabilities", {"GET"})]:
        r = getattr(client, method)(path)
        doc = _problem(r, 405, "method_not_allowed")
        named = {m.strip() for m in r.headers["allow"].split(",")}
        assert allowed <= named and method.upper() not in named, r.headers["allow"]
        assert r.headers["allow"].split(",")[0].strip() in doc["detail"]


def test_collection_with_a_slash_is_a_404_not_a_redirect(client):
    for method in ("get", "post"):
        r = getattr(client, method)("/v1/executions/", follow_redirects=False)
        _problem(r, 404, "not_found")
        assert "location" not in r.headers


def test_deep_nesting_is_400_not_500(client):
    for body in ("[" * 1000 + "]" * 1000, '{"a":' * 999 + "1" + "}" * 999, "[" * 5000):
        doc = _problem(_raw_post(client, body), 400, "json_too_deep")
        assert "levels" in doc["detail"]


def test_huge_and_absurd_numbers_name_the_field(client, soup_request):
    text = json.dumps(soup_request)
    huge = text.replace('"servings": 4', '"servings": ' + "9" * 100_000)
    doc = _problem(_raw_post(client, huge), 400, "invalid_request")
    assert doc["pointer"] == "/servings" and len(doc["detail"]) < 300
    for value in ("1e308", "1e999", "-1e400", "123456789012345678901234"):
        doc = _problem(_raw_post(client, text.replace('"servings": 4', f'"servings": {value}')), 400, "invalid_request")
        assert doc["pointer"] == "/servings", doc
    doc = _problem(post(client, "/v1/executions", dict(soup_request, servings=5000), key="servings-key-01"),
                   400, "invalid_request")
    assert doc["pointer"] == "/servings" and "5000" in doc["detail"]
    for constant in ("NaN", "Infinity", "-Infinity"):
        _problem(_raw_post(client, text.replace('"servings": 4', f'"servings": {constant}')), 400, "malformed_json")


def test_long_ids_are_not_echoed_whole(client):
    long_id = "x" * 4000
    r = client.get(f"/v1/executions/{long_id}")
    doc = _problem(r, 404, "not_found")
    assert len(r.content) < 1500 and long_id not in r.text and doc["instance"].endswith("characters)")
    r = client.get("/v1/executions/" + "y" * 16384)  # 64 KiB: test_http_wire (httpx refuses such URLs)
    _problem(r, 414, "uri_too_long")
    assert len(r.content) < 1000


def test_oversized_header_fields_are_431(client):
    r = client.get("/v1/capabilities", headers={"x-padding": "p" * 20000})
    _problem(r, 431, "header_fields_too_large")


def test_chunked_body_over_the_limit_is_413(client):
    def chunks():
        yield b'{"core": "0.2.0", "pad": "'
        for _ in range(40):
            yield b"x" * 65536
        yield b'"}'

    r = client.post("/v1/executions", content=chunks(), headers={"content-type": MEDIA, "Idempotency-Key": "chunk-key-001"})
    _problem(r, 413, "payload_too_large")


def test_lone_surrogates_do_not_break_the_answer(client, soup_request):
    text = json.dumps(soup_request).replace('"human:operator"', '"human:\\ud800"')
    r = _raw_post(client, text, key="surrogate-key-01")
    assert r.status_code in (202, 400), r.text
    json.loads(r.content.decode("utf-8"))


def test_a_trickling_body_is_408():
    import asyncio

    import pytest

    from cookwala_ros.http.inputs import read_body
    from cookwala_ros.http.problems import Problem

    async def trickle():
        while True:
            yield b"["
            await asyncio.sleep(0.05)

    with pytest.raises(Problem) as caught:
        asyncio.run(read_body(trickle(), timeout_s=0.3))
    assert caught.value.status == 408 and caught.value.code == "request_timeout"
