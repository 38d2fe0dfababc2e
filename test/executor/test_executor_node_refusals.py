"""Every Core RefusalReason over the ExecuteRecipe action of the executor node (a process).

No kitchen is needed: refusals happen before anything moves. The node runs on sim time with no
/clock, so an accepted execution stays `accepted` (and makes the device busy) until cancelled.
"""

from __future__ import annotations

import http.server
import json
import threading

import pytest
from rclpy.parameter import Parameter  # noqa: F401 - rclpy must import before cookwala_msgs here

from executor_recipes import boil_recipe, make_recipe, mutated, request_for
from cookwala_msgs.msg import Presence
from cookwala_ros.core.keys import SigningKey
from cookwala_ros.device import load_device_config
from cookwala_ros.core.trust import document_hash, sign_hash
from cookwala_ros.executor.store import Store
from cookwala_ros.ros import qos
from executor_procs import Client, StandInDrivers, goal_for, start_executor, stop_processes
from ros_helpers import RosHarness
from test_executor_refusals import ALL_REASONS, deep_fry_recipe

SIGNED_AT = "2026-11-01T00:00:00Z"


class _Feed(http.server.BaseHTTPRequestHandler):
    body = b"[]"

    def do_GET(self):  # noqa: N802 - http.server API
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@pytest.fixture()
def setup(tmp_path, repo_root):
    """Recipes, a trusted key, a tight SafetyLimits pack, a recall feed and a device file naming them."""
    key = SigningKey.generate("household:test#k1", actor="household:test/person:cook", valid_from="2026-01-01T00:00:00Z")
    (tmp_path / "keys.json").write_text(json.dumps([key.key_record("2026-01-01T00:00:00Z")]))
    (tmp_path / "tight.json").write_text(json.dumps({
        "core": "0.2.0", "kind": "SafetyLimits", "id": "test-tight", "version": "1.0.0", "status": "draft",
        "disclaimer": "test pack", "limits": [
        {"id": "water.warm", "kind": "max_temp", "action": "cut_heat", "appliesTo": {"medium": "water"},
         "max": 92, "unit": "degC", "message": "test", "source": "test"}]}))
    recipes = {
        "ok": boil_recipe(),
        "recalled": boil_recipe("test-recalled"),
        "peanut": mutated(boil_recipe(), "test-peanut", lambda r: r["safety"]["allergens"].update(eu14=["peanuts"])),
        "wok": mutated(boil_recipe(), "test-wok", lambda r: r["equipment"].append({"ref": "wok", "class": "cw.eq.vessel.wok"})
                       or r["process"]["nodes"][0]["equipment"].append("wok")),
        "hot": mutated(boil_recipe(), "test-hot", lambda r: r["process"]["nodes"][0]["params"]["target"].update(value=150)),
        "warm": mutated(boil_recipe(), "test-warm", lambda r: r["process"]["nodes"][0]["params"]["target"].update(value=95)),
        "bake": make_recipe("test-bake", [{"id": "b1", "op": "cw.op.bake", "params": {"tempC": 180},
                                           "until": {"maxTime": "PT20M"}}],
                            equipment=[{"ref": "pot", "class": "cw.eq.vessel.pot.sauce"}]),
        "fry": deep_fry_recipe(),
    }
    data = tmp_path / "data"
    (data / "recipes").mkdir(parents=True)
    for name, recipe in recipes.items():
        (data / "recipes" / f"{name}.cookwala.json").write_text(json.dumps(recipe))
    recall = {"core": "0.2.0", "kind": "Recall", "id": "recall-node-test", "issuedAt": "2026-11-29T12:00:00Z",
              "issuer": "test", "targets": [{"ref": "test-recalled", "allRevisions": True}], "severity": "high",
              "reason": "food_safety", "action": "block"}
    recall["signature"] = sign_hash(document_hash(recall), key, SIGNED_AT, "Recall")
    _Feed.body = json.dumps([recall]).encode()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Feed)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    device = (repo_root / "config" / "device.yaml").read_text()
    device = device.replace('catalog_url: ""', f'catalog_url: "http://127.0.0.1:{server.server_address[1]}"')
    device = device.replace("recall_poll_s: 300", "recall_poll_s: 0.5")
    device = device.replace('trusted_keys: ""', f'trusted_keys: "{tmp_path / "keys.json"}"')
    device = device.replace('safety_limits: ["package://config/safety/device-pack.json"]',
                            f'safety_limits: ["package://config/safety/device-pack.json", "{tmp_path / "tight.json"}"]')
    (tmp_path / "device.yaml").write_text(device)
    yield {"key": key, "recipes": recipes, "data": data, "device": tmp_path / "device.yaml"}
    server.shutdown()
    server.server_close()


def cached_recalls(data_dir) -> list:
    store = Store(data_dir)
    try:
        return store.recalls()
    finally:
        store.close()


def mandate(key: SigningKey | None, **fields) -> dict:
    doc = {"principal": "household:test/person:cook", "agent": "agent:planner", "scopes": ["start_cooking"],
           "expires": "2027-01-01T00:00:00Z"}
    doc.update(fields)
    if key:
        doc["signature"] = sign_hash(document_hash(doc), key, SIGNED_AT)
    return doc


@pytest.mark.timeout(120)
def test_every_refusal_reason_over_the_action(setup):
    executor = start_executor(setup["data"], device_file=str(setup["device"]), disabled_sensors="cw.sense.oil_temp")
    recipes = setup["recipes"]
    try:
        with RosHarness() as ros:
            client = Client(ros)
            topics = load_device_config(setup["device"]).names
            StandInDrivers(ros, "/" + topics.heater_state.lstrip("/"), "/" + topics.joint_states.lstrip("/"))
            assert client.wait_ready(to_cook=True), "executor did not come up"
            presence = client.node.create_publisher(Presence, "/cookwala/presence", qos.sensor())

            def outcome(request: dict) -> tuple[str, str]:
                handle = client.send(goal_for(request))
                assert handle.accepted
                future = handle.get_result_async()
                assert ros.wait_for(future.done, timeout=20)
                result = future.result().result
                return result.state, result.refusal_reason

            seen = set()

            def refused(request: dict, reason: str) -> None:
                assert outcome(request) == ("refused", reason)
                seen.add(reason)

            agent = {"requestedBy": "agent:planner"}
            refused(request_for(recipes["ok"], core="0.3.0"), "unsupported_version")
            refused(request_for(recipes["ok"], recipeHash="sha256:" + "4" * 64), "recipe_hash_mismatch")
            refused(request_for(recipes["ok"], mandate=mandate(None), **agent), "not_authorized")
            refused(request_for(recipes["ok"], mandate=mandate(setup["key"], scopes=["plan_meals"]), **agent),
                    "mandate_scope")
            assert ros.wait_for(lambda: cached_recalls(setup["data"]), timeout=20), "the recall feed was not polled"
            refused(request_for(recipes["recalled"]), "recipe_recalled")
            refused(request_for(recipes["peanut"], allergenBlocks=["peanut"]), "allergen_block")
            refused(request_for(recipes["wok"]), "missing_equipment")
            refused(request_for(recipes["hot"]), "envelope_out_of_range")
            refused(request_for(recipes["warm"]), "safety_limit")
            refused(request_for(recipes["fry"]), "missing_sensor_no_fallback")
            assert ros.wait_for_subscribers(presence)
            nobody = Presence(person_present=False, reachable_within_s=float("inf"), source="test")
            presence.publish(nobody)
            assert ros.wait_for(lambda: presence.publish(nobody) or
                                outcome(request_for(recipes["fry"]))[1] == "needs_human_present", timeout=20)
            seen.add("needs_human_present")
            refused(request_for(recipes["bake"]), "missing_capability")
            # one accepted execution makes the device busy (no /clock: it stays accepted)
            first = client.send(goal_for(request_for(recipes["ok"])))
            assert first.accepted
            assert ros.wait_for(lambda: any(s.state == "accepted" for s in client.statuses), timeout=10)
            refused(request_for(recipes["ok"]), "busy")
            cancel = first.cancel_goal_async()
            assert ros.wait_for(cancel.done, timeout=10)
            final = first.get_result_async()
            assert ros.wait_for(final.done, timeout=20)
            assert final.result().result.state == "stopped"
            assert set(ALL_REASONS) - seen == set()
    finally:
        stop_processes([executor])
