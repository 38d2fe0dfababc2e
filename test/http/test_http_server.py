"""The API on a real socket (uvicorn in a thread): concurrent idempotent starts."""

from __future__ import annotations

import threading

import httpx

from cookwala_ros.http.server import ApiServer, free_port
from http_helpers import MEDIA


def test_fifty_concurrent_posts_with_one_key_create_one_execution(service, soup_request):
    soup_request["idempotencyKey"] = "concurrent-key-0001"
    answers: list[httpx.Response] = []
    lock = threading.Lock()
    with ApiServer(service, port=free_port()) as server:
        barrier = threading.Barrier(50)

        def start():
            with httpx.Client(base_url=server.base_url, timeout=30.0) as client:
                barrier.wait()
                r = client.post("/v1/executions", json=soup_request,
                                headers={"Idempotency-Key": "concurrent-key-0001", "content-type": MEDIA})
            with lock:
                answers.append(r)

        threads = [threading.Thread(target=start) for _ in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(answers) == 50
        assert {r.status_code for r in answers} == {202}
        assert len({r.json()["id"] for r in answers}) == 1
        assert len({r.json()["seq"] for r in answers}) == 1

        changed = dict(soup_request, servings=2)
        r = httpx.post(server.base_url + "/v1/executions", json=changed,
                       headers={"Idempotency-Key": "concurrent-key-0001"})
        assert r.status_code == 409 and r.json()["code"] == "idempotency_conflict"


def test_concurrent_starts_of_one_request_id_under_new_keys_create_one_execution(service, soup_request):
    answers: list[httpx.Response] = []
    lock = threading.Lock()
    with ApiServer(service, port=free_port()) as server:
        barrier = threading.Barrier(20)

        def start(i: int):
            body = dict(soup_request, idempotencyKey=f"racing-key-{i:04d}")
            with httpx.Client(base_url=server.base_url, timeout=30.0) as client:
                barrier.wait()
                r = client.post("/v1/executions", json=body,
                                headers={"Idempotency-Key": body["idempotencyKey"], "content-type": MEDIA})
            with lock:
                answers.append(r)

        threads = [threading.Thread(target=start, args=(i,)) for i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    codes = sorted(r.status_code for r in answers)
    assert codes == [202] + [409] * 19, codes
    assert {r.json()["code"] for r in answers if r.status_code == 409} == {"request_conflict"}
