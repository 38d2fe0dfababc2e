"""LiveKitchen (the test kitchen) passes the scene's supervision and monitor settings (no processes)."""

from __future__ import annotations

from cookwala_ros.ros.recipe_demo import LiveKitchen


def test_the_monitor_gets_a_state_dir_inside_the_kitchen_and_the_executor_it_guards(tmp_path):
    kitchen = LiveKitchen(rtf=30.0, data_dir=str(tmp_path), http_port=8125)
    procs = {p.name: p for p in kitchen.process_specs()}
    monitor = " ".join(procs["safety_monitor"].argv)
    assert f"state_dir:='{tmp_path / 'safety_state'}'" in monitor
    assert "executor_node:='executor'" in monitor  # in the monitor's namespace
    # supervision as the manifest says: the monitor outlives the executor, the plant ends the scene
    assert [procs[n].required for n in ("executor", "safety_monitor", "arm_sim", "heater_sim", "sim_clock")] == [
        False, False, True, True, True]
    assert procs["executor"].stop_order < procs["safety_monitor"].stop_order < procs["heater_sim"].stop_order \
        < procs["sim_clock"].stop_order
    hint = procs["executor"].restart_hint
    assert hint.startswith("cookwala-ros up kitchen --only executor ") and "--arg http_port=8125" in hint


def test_state_dir_and_other_scene_arguments_can_be_given(tmp_path):
    kitchen = LiveKitchen(rtf=30.0, data_dir=str(tmp_path / "data"), http_port=8126, state_dir=str(tmp_path / "latch"),
                          scene_args={"heartbeat_lease_s": 0.3})
    procs = {p.name: " ".join(p.argv) for p in kitchen.process_specs()}
    assert f"state_dir:='{tmp_path / 'latch'}'" in procs["safety_monitor"]
    assert "heartbeat_lease_s:=0.3" in procs["safety_monitor"] and "heartbeat_lease_s:=0.3" in procs["executor"]
