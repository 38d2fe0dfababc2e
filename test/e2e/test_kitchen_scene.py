"""The kitchen scene file and the demo's request builder (no processes started)."""

from __future__ import annotations

import json

from cookwala_ros import bringup
from cookwala_ros.core import schemas
from cookwala_ros.core.trust import document_hash
from cookwala_ros.ros.recipe_demo import LiveKitchen, request_for_recipe

from e2e_http import REPO


def test_kitchen_scene_runs_the_sim_the_executor_and_the_safety_monitor():
    manifest = bringup.load_manifest("kitchen")
    assert set(manifest.node_names()) == {"sim_clock", "arm_sim", "heater_sim", "pot_sim", "executor", "safety_monitor"}
    specs = {s.name: s for s in manifest.node_specs({"http_port": 8123, "real_time_factor": 40.0,
                                                     "data_dir": "kitchen-data", "device_file": "robot.yaml"})}
    # the sim's cook reads the recipes the executor cooks; the executor has no simulator parameter
    for name in ("data_dir", "device_file"):
        assert specs["pot_sim"].parameters[name] == specs["executor"].parameters[name]
    assert not any("sim" in key for key in specs["executor"].parameters if key != "use_sim_time")
    assert specs["executor"].parameters["http_port"] == 8123
    assert specs["sim_clock"].parameters["real_time_factor"] == 40.0
    assert specs["sim_clock"].parameters["use_sim_time"] is False
    assert specs["pot_sim"].parameters["use_sim_time"] is False  # it follows the status, never /clock
    assert all(s.parameters["use_sim_time"] for n, s in specs.items() if n not in ("sim_clock", "pot_sim"))
    # the executor's and the monitor's heartbeat leases agree
    assert specs["executor"].parameters["heartbeat_lease_s"] == specs["safety_monitor"].parameters["heartbeat_lease_s"]


def test_live_kitchen_commands_pass_its_settings(tmp_path):
    kitchen = LiveKitchen(rtf=30.0, data_dir=str(tmp_path), http_port=8124, medium_sensor_fault="stuck",
                          with_safety_monitor=False)
    procs = {p.name: " ".join(p.argv) for p in kitchen.process_specs()}
    assert "safety_monitor" not in procs
    assert f"data_dir:='{tmp_path}'" in procs["executor"] or f"data_dir:={tmp_path}" in procs["executor"]
    assert "http_port:=8124" in procs["executor"]
    assert "fault.medium_sensor:='stuck'" in procs["heater_sim"] or "fault.medium_sensor:=stuck" in procs["heater_sim"]
    assert "publish_rate_hz:=300.0" in procs["sim_clock"]  # >= 10 clock messages per simulated second


def test_request_for_recipe_names_the_exact_revision():
    soup = json.loads((REPO / "examples" / "recipes" / "tomato-soup.cookwala.json").read_text(encoding="utf-8"))
    body = request_for_recipe(soup, key="demo-key-00001", servings=4)
    assert schemas.validate(body, "ExecuteRequest") == []
    assert body["recipeHash"] == document_hash(soup) and body["idempotencyKey"] == "demo-key-00001"
