"""The Core HTTP API over a real ExecutorService: media types, problems, refusals, stop, resume."""

from __future__ import annotations

from cookwala_ros.core import schemas
from http_helpers import MEDIA, PROBLEM, post


def _problem(response, status, code):
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    doc = response.json()
    assert doc["status"] == status and doc["code"] == code
    assert doc["type"].endswith("/" + code) and doc["title"] and doc["detail"]
    return doc


def test_start_answers_202_with_status_etag_and_location(client, soup_request):
    r = post(client, "/v1/executions", soup_request, key="start-key-0001")
    assert r.status_code == 202, r.text
    assert r.headers["content-type"].startswith(MEDIA)
    status = r.json()
    assert schemas.validate(status, "ExecutionStatus") == []
    assert status["state"] == "accepted" and status["request"] == soup_request["id"]
    assert r.headers["etag"] == f'"{status["seq"]}"'
    assert r.headers["location"] == f"/v1/executions/{status['id']}"

    got = client.get(f"/v1/executions/{status['id']}")
    assert got.status_code == 200 and got.json()["id"] == status["id"]
    assert got.headers["etag"] == f'"{got.json()["seq"]}"'


def test_plain_json_is_accepted_and_answered_when_asked(client, soup_request):
    r = post(client, "/v1/executions", soup_request, key="plain-json-01", media="application/json",
             headers={"accept": "application/json"})
    assert r.status_code == 202
    assert r.headers["content-type"].startswith("application/json")


def test_other_media_type_is_415(client, soup_request):
    r = post(client, "/v1/executions", "core=0.2.0", key="form-key-0001", media="text/plain")
    assert _problem(r, 415, "unsupported_media_type")["header"] == "Content-Type"


def test_malformed_json_is_a_problem_naming_the_position(client):
    r = post(client, "/v1/executions", b'{"core": "0.2.0",', key="bad-json-0001")
    doc = _problem(r, 400, "malformed_json")
    assert "line 1" in doc["detail"] and doc["pointer"] == ""


def test_schema_violation_names_the_field(client, soup_request):
    soup_request["servings"] = -2
    soup_request["recipeHash"] = "md5:abc"
    doc = _problem(post(client, "/v1/executions", soup_request, key="schema-key-01"), 400, "invalid_request")
    pointers = {e["pointer"] for e in doc["errors"]}
    assert pointers == {"/servings", "/recipeHash"}
    assert doc["pointer"] in pointers and doc["pointer"] in doc["detail"]


def test_unknown_member_is_named(client, soup_request):
    soup_request["temperatureOverride"] = 300
    doc = _problem(post(client, "/v1/executions", soup_request, key="extra-key-01"), 400, "invalid_request")
    assert "temperatureOverride" in doc["detail"]


def test_other_core_version_is_a_refusal_not_a_400(client, soup_request):
    soup_request["core"] = "0.3.0"
    r = post(client, "/v1/executions", soup_request, key="version-key-1")
    assert r.status_code == 202, r.text
    assert r.json()["state"] == "refused"
    assert r.json()["refusal"]["reason"] == "unsupported_version"


def test_unknown_recipe_revision_is_refused(client, soup_request):
    soup_request["recipeHash"] = "sha256:" + "0" * 64
    r = post(client, "/v1/executions", soup_request, key="hash-key-0001")
    assert r.status_code == 202 and r.json()["state"] == "refused"
    assert r.json()["refusal"]["reason"] == "recipe_hash_mismatch"


def test_unknown_ids_are_404_on_every_execution_path(client):
    for method, path in [("get", "/v1/executions/exec-nope"), ("get", "/v1/executions/exec-nope/log"),
                         ("post", "/v1/executions/exec-nope/stop"), ("post", "/v1/executions/exec-nope/resume")]:
        r = getattr(client, method)(path, headers={"If-Match": '"1"', "Idempotency-Key": "unknown-id-0001"})
        assert _problem(r, 404, "not_found")["instance"] == path
    _problem(client.get("/v1/nothing-here"), 404, "not_found")
    _problem(client.delete("/v1/executions/exec-nope"), 405, "method_not_allowed")


def test_stop_needs_no_key_token_or_if_match_and_is_a_noop_when_final(secured, soup_request):
    from http_helpers import TOKEN

    auth = {"authorization": f"Bearer {TOKEN}"}
    started = post(secured, "/v1/executions", soup_request, key="stop-key-0001", headers=auth).json()
    stop = {"core": "0.2.0", "kind": "StopRequest", "execution": started["id"], "requestedBy": "human:operator"}
    r = post(secured, f"/v1/executions/{started['id']}/stop", stop)
    assert r.status_code == 202, r.text
    assert r.json()["state"] in ("stopping", "stopped") and r.json()["seq"] > started["seq"]
    final = secured.get(f"/v1/executions/{started['id']}").json()
    assert final["state"] == "stopped"
    again = secured.post(f"/v1/executions/{started['id']}/stop")  # no body at all
    assert again.status_code == 200 and again.json() == final


def test_stop_body_must_name_the_path_execution(client, soup_request):
    started = post(client, "/v1/executions", soup_request, key="stop-key-0002").json()
    stop = {"core": "0.2.0", "kind": "StopRequest", "execution": "exec-other", "requestedBy": "human:x"}
    doc = _problem(post(client, f"/v1/executions/{started['id']}/stop", stop), 400, "invalid_request")
    assert doc["pointer"] == "/execution"
    assert client.get(f"/v1/executions/{started['id']}").json()["state"] == "accepted"


def test_token_guards_start_and_resume_but_not_reads_or_stop(secured, soup_request):
    from http_helpers import TOKEN

    r = post(secured, "/v1/executions", soup_request, key="auth-key-0001")
    assert _problem(r, 401, "unauthorized")["header"] == "Authorization"
    assert r.headers["www-authenticate"].startswith("Bearer")
    _problem(post(secured, "/v1/executions", soup_request, key="auth-key-0001",
                  headers={"authorization": "Bearer wrong"}), 401, "unauthorized")
    ok = post(secured, "/v1/executions", soup_request, key="auth-key-0001",
              headers={"authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 202
    execution = ok.json()["id"]
    _problem(secured.post(f"/v1/executions/{execution}/resume",
                          headers={"If-Match": '"1"', "Idempotency-Key": "auth-resume-01"}), 401, "unauthorized")
    assert secured.get(f"/v1/executions/{execution}").status_code == 200
    assert secured.get("/v1/capabilities").status_code == 200
    assert secured.get("/v1/safety-limits").status_code == 200


def test_resume_needs_a_current_if_match(client, soup_request):
    started = post(client, "/v1/executions", soup_request, key="resume-key-01").json()
    path = f"/v1/executions/{started['id']}/resume"
    key = {"Idempotency-Key": "resume-try-0001"}
    assert _problem(client.post(path, headers=key), 428, "precondition_required")["header"] == "If-Match"
    _problem(client.post(path, headers={**key, "If-Match": f'"{started["seq"] + 5}"'}), 412, "precondition_failed")
    _problem(client.post(path, headers={**key, "If-Match": "not-a-seq"}), 412, "precondition_failed")
    _problem(client.post(path, headers={**key, "If-Match": '"90", "91"'}), 412, "precondition_failed")
    # current seq (alone, in a list, or `*`), but an accepted execution is neither paused nor waiting for a human
    for if_match in (str(started["seq"]), f'"90", "{started["seq"]}"', "*"):
        _problem(client.post(path, headers={**key, "If-Match": if_match}), 409, "invalid_state")


def test_log_of_a_refused_execution(client, soup_request):
    soup_request["core"] = "1.0.0"
    refused = post(client, "/v1/executions", soup_request, key="log-key-00001").json()
    r = client.get(f"/v1/executions/{refused['id']}/log")
    assert r.status_code == 200 and r.headers["content-type"].startswith(MEDIA)
    log = r.json()
    assert schemas.validate(log, "ExecutionLog") == []
    assert log["privacy"]["personalData"] == "none"


def test_device_documents_are_valid(client):
    limits = client.get("/v1/safety-limits")
    assert limits.status_code == 200 and schemas.validate(limits.json(), "SafetyLimits") == []
    caps = client.get("/v1/capabilities")
    assert caps.status_code == 200 and schemas.validate(caps.json(), "Capabilities") == []
    assert caps.headers["content-type"].startswith(MEDIA)


def test_oversized_body_is_413_before_it_is_read(client):
    big = b'{"core": "0.2.0", "pad": "' + b"x" * (1 << 20) + b'"}'
    r = client.post("/v1/executions", content=big, headers={"content-type": MEDIA, "Idempotency-Key": "big-key-00001"})
    _problem(r, 413, "payload_too_large")
