"""Run control of the engine on the simulated kitchen: stop, pause/resume, needs_human,
timeouts, faults, and the status it reports."""

from __future__ import annotations

import pytest
from test_engine_kitchen import DATA, LIQUID, SimKitchen, load_json, make_run

from cookwala_ros.core import lifecycle, schemas
from cookwala_ros.core.engine import Observation, RecipeRun, RunConfig
from cookwala_ros.core.run_types import HeatCommand


def simmer_recipe() -> dict:
    return load_json(DATA / "simmer.cookwala.json")


def states(changes) -> list[str]:
    return [data for kind, data in changes if kind == "state"]


def in_step(node: str, after_s: float):
    def check(engine, kitchen):
        return engine.runner is not None and engine.runner.node_id == node and engine.runner.elapsed_s >= after_s
    return check


def test_simmer_alone_completes_at_five_hertz():
    kitchen = SimKitchen(dt=0.2)
    run = make_run(simmer_recipe(), kitchen)
    kitchen.run(run, limit_s=3600)
    assert run.state == "completed"
    (step,) = run.log()["steps"]
    assert step["verifiedBy"] == "sensor" and step["envelopeOk"] is True
    assert 85 <= step["summary"][0]["end"] <= 96


def test_stop_goes_through_stopping_to_stopped_with_heat_off_and_arm_halted():
    kitchen = SimKitchen()
    run = make_run(simmer_recipe(), kitchen)
    changes = kitchen.run(run, until=in_step("s1", 120))
    assert kitchen.heater.power_w > 0
    assert run.stop("operator pressed stop") is True
    assert run.state == "stopping"
    assert run.status()["state"] == "stopping" and run.status()["stopReason"] == "operator pressed stop"
    first = run.tick(kitchen.observe())
    assert first.heater == HeatCommand.off() and first.arm_halt is True
    kitchen.apply(first)
    assert run.state == "stopping"  # not stopped before the hardware confirms
    kitchen.step()
    changes += run.drain_changes() + kitchen.run(run, limit_s=kitchen.t + 30)
    assert run.state == "stopped"
    assert states(changes)[-2:] == ["stopping", "stopped"]
    assert kitchen.heater.power_w == 0.0 and kitchen.arm.at_rest
    assert kitchen.halts >= 1
    log = run.log()
    assert log["outcome"] == "aborted_safe" and schemas.validate(log, "ExecutionLog") == []
    open_step = log["x-cookwala-ros-unfinishedSteps"][-1]  # a stopped step has no envelope verdict
    assert open_step["node"] == "s1" and "stopped" in open_step["deviation"]["detail"]
    assert "envelopeOk" not in open_step and all(s["node"] != "s1" for s in log["steps"])
    assert run.stop("again") is False  # a no-op once final
    assert run.tick(kitchen.observe()).is_empty()


def test_stop_before_the_first_tick_goes_straight_to_stopped():
    kitchen = SimKitchen()
    run = make_run(simmer_recipe(), kitchen)
    assert run.stop() is True
    assert run.state == "stopped"
    assert run.drain_changes() == [("state", "stopped")]


def test_stop_is_confirmed_after_a_bounded_time_even_when_the_heater_never_reports_zero():
    run = RecipeRun(simmer_recipe(), _plan(), RunConfig(stop_timeout_s=2.0))
    run.tick(Observation(now_s=0.0, medium_temp_c=20, pan_temp_c=20, heater_power_w=0))
    run.stop("test")
    t = 0.0
    while run.state == "stopping" and t < 10:
        t += 0.2
        run.tick(Observation(now_s=t, medium_temp_c=50, pan_temp_c=60, heater_power_w=1500.0))
    assert run.state == "stopped" and 2.0 <= t <= 2.5
    incidents = [d for k, d in run.drain_changes() if k == "incident"]
    assert any("heater still reports power" in d["detail"] for d in incidents)


def test_pause_holds_temperature_and_freezes_the_step_clock_then_resume_finishes():
    kitchen = SimKitchen()
    run = make_run(simmer_recipe(), kitchen)
    kitchen.run(run, until=in_step("s1", 400))
    assert run.pause() is True and run.state == "paused"
    assert run.pause() is False
    elapsed = run.runner.elapsed_s
    halt = run.tick(kitchen.observe())
    assert halt.arm_halt is True
    temps = []
    kitchen.run(run, limit_s=kitchen.t + 600, on_tick=lambda e, k: temps.append(k.thermal.medium_c))
    assert run.state == "paused" and run.runner.elapsed_s == pytest.approx(elapsed)
    assert 85 <= min(temps) and max(temps) <= 96  # the medium is still held in its envelope
    assert run.resume() is True and run.state == "running"
    changes = kitchen.run(run, limit_s=kitchen.t + 3600)
    assert run.state == "completed"
    assert "paused" not in states(changes)
    (step,) = run.log()["steps"]
    assert step["envelopeOk"] is True


def test_human_only_step_waits_in_needs_human_with_why_and_heat_off():
    recipe = load_json(DATA / "simmer.cookwala.json")
    recipe["process"]["nodes"][0]["assignment"] = {"allowed": ["human"]}
    kitchen = SimKitchen(auto_human_s=None)
    run = make_run(recipe, kitchen)
    changes = kitchen.run(run, limit_s=60)
    assert run.state == "needs_human"
    status = run.status()
    assert status["node"] == "s1" and status["verifiedBy"] == "human"
    assert status["humanNeeded"].startswith("node s1 (cw.op.simmer) is done by a person")
    assert ("needs_human", {"why": status["humanNeeded"], "node": "s1", "op": "cw.op.simmer"}) in changes
    assert kitchen.heater.power_w == 0.0
    assert run.human_done() is True and run.human_done() is False
    kitchen.run(run, limit_s=kitchen.t + 10)
    assert run.state == "completed"
    log = run.log()
    assert log["steps"][0]["verifiedBy"] == "human"
    assert log["humanInterventions"][0]["kind"] == "assist"


def test_timeout_extends_once_then_asks_a_person():
    kitchen = SimKitchen(auto_human_s=None)
    run = make_run(load_json(DATA / "timeout.cookwala.json"), kitchen)
    changes = kitchen.run(run, limit_s=3600, until=lambda e, k: e.state == "needs_human")
    assert run.state == "needs_human"
    deviations = [d for k, d in changes if k == "deviation"]
    assert [d["kind"] for d in deviations] == ["extended_time"]
    assert run.runner.elapsed_s == pytest.approx(5 * 60, abs=1)  # PT4M + one minute
    assert "not met within PT5M" in run.status()["humanNeeded"]
    assert kitchen.heater.power_w >= 0 and 85 <= kitchen.thermal.medium_c <= 96  # still held while waiting
    run.human_done()
    kitchen.run(run, limit_s=kitchen.t + 30)
    assert run.state == "completed"
    step = run.log()["steps"][0]
    assert step["verifiedBy"] == "human" and step["deviation"]["kind"] == "extended_time"


def test_medium_sensor_lost_mid_step_falls_back_to_the_model_rung():
    kitchen = SimKitchen()
    run = make_run(simmer_recipe(), kitchen)
    kitchen.run(run, until=in_step("s1", 200))
    kitchen.disconnect_medium_sensor()
    changes = kitchen.run(run, limit_s=kitchen.t + 3600)
    assert run.state == "completed"
    (step,) = run.log()["steps"]
    assert step["verifiedBy"] == "model"
    assert step["summary"][0]["estimated"] is True
    incidents = [d for k, d in changes if k == "incident"]
    assert incidents and incidents[0]["type"] == "cw.incident.sensor_failure" and LIQUID in incidents[0]["detail"]


def test_sensor_lost_with_refuse_policy_aborts_safely():
    recipe = simmer_recipe()
    recipe["process"]["nodes"][0]["until"]["onSensorMissing"] = "refuse"
    kitchen = SimKitchen()
    run = make_run(recipe, kitchen)
    kitchen.run(run, until=in_step("s1", 100))
    kitchen.disconnect_medium_sensor()
    changes = kitchen.run(run, limit_s=kitchen.t + 60)
    assert run.state == "stopped" and kitchen.heater.power_w == 0.0
    assert states(changes)[-2:] == ["stopping", "stopped"]
    assert run.log()["outcome"] == "aborted_safe"


def test_heater_fault_stops_the_run_with_a_safety_event():
    kitchen = SimKitchen()
    run = make_run(simmer_recipe(), kitchen)
    kitchen.run(run, until=in_step("s1", 30))
    obs = kitchen.observe()
    obs.heater_fault = "overtemp"
    kitchen.apply(run.tick(obs))
    assert run.state == "stopping"
    kitchen.run(run, limit_s=kitchen.t + 30)
    assert run.state == "stopped"
    log = run.log()
    assert log["safetyEvents"][0]["limit"] == "heater.overtemp" and log["safetyEvents"][0]["action"] == "cut_heat"
    assert schemas.validate(log, "ExecutionLog") == []


def test_safety_monitor_trip_stops_the_run():
    kitchen = SimKitchen()
    run = make_run(simmer_recipe(), kitchen)
    kitchen.run(run, until=in_step("s1", 30))
    obs = kitchen.observe()
    obs.safety_armed = False
    kitchen.apply(run.tick(obs))
    assert run.state == "stopping"
    assert run.log()["safetyEvents"][0]["limit"] == "safety_monitor"


def test_status_reports_progress_readings_and_eta_during_a_heat_step():
    kitchen = SimKitchen()
    run = make_run(simmer_recipe(), kitchen)
    seen = []
    kitchen.run(run, on_tick=lambda e, k: seen.append(e.status()) if e.state == "running" else None)
    assert set(seen[0]) >= {"state", "node", "op", "progress", "verifiedBy", "humanNeeded", "readings", "eta_s"}
    in_step_status = [s for s in seen if s["node"] == "s1"]
    progress = [s["progress"] for s in in_step_status]
    assert progress == sorted(progress) and 0 <= progress[0] < 0.1 and 0.5 < progress[-1] <= 1
    etas = [s["eta_s"] for s in in_step_status]
    assert etas[0] > etas[-1] >= 0
    reading = in_step_status[-1]["readings"][0]
    assert reading["sensor"] == LIQUID and reading["unit"] == "degC" and 85 <= reading["value"] <= 96
    assert run.status()["state"] == "completed" and run.status()["progress"] == 1.0


def test_every_state_change_is_legal_and_drained_once():
    kitchen = SimKitchen()
    run = make_run(simmer_recipe(), kitchen)
    changes = kitchen.run(run)
    seq = ["accepted"] + states(changes)
    assert all(lifecycle.can_transition(a, b) for a, b in zip(seq, seq[1:]))
    assert run.drain_changes() == []


def _plan():
    from test_engine_kitchen import plan_for

    return plan_for(simmer_recipe())


def test_a_plan_that_does_not_cover_the_recipe_is_refused_with_the_node_named():
    plan = _plan()
    recipe = simmer_recipe()
    recipe["process"]["nodes"].append(dict(recipe["process"]["nodes"][0], id="s2"))
    with pytest.raises(ValueError, match="s2"):
        RecipeRun(recipe, plan, RunConfig())
    with pytest.raises(ValueError, match="max_heater_power_w"):
        RecipeRun(simmer_recipe(), plan, RunConfig(max_heater_power_w=0))


def test_plan_in_wire_form_and_bad_durations():
    plan = [p.to_wire() for p in _plan()]
    run = RecipeRun(simmer_recipe(), plan, RunConfig())
    assert run.plan[0].verified_by == "sensor" and run.plan[0].sensor == LIQUID
    with pytest.raises(ValueError, match="plan/0: missing verifiedBy"):
        RecipeRun(simmer_recipe(), [{"node": "s1", "op": "cw.op.simmer", "by": "device"}], RunConfig())
    recipe = simmer_recipe()
    recipe["process"]["nodes"][0]["until"]["maxTime"] = "15 minutes"
    with pytest.raises(ValueError, match="/process/nodes/0/until/maxTime"):
        RecipeRun(recipe, _plan(), RunConfig())


def test_altitude_shifts_the_band_the_engine_holds():
    recipe = simmer_recipe()
    node = recipe["process"]["nodes"][0]
    del node["params"]["target"]
    node["until"] = {"minTime": "PT10M", "nominalTime": "PT12M"}
    kitchen = SimKitchen(altitude_m=2400)  # water boils at 92 degC; simmer band 77-88 degC
    run = make_run(recipe, kitchen, altitude_m=2400)
    temps = []
    kitchen.run(run, on_tick=lambda e, k: temps.append(k.thermal.medium_c) if e.runner is not None else None)
    assert run.state == "completed"
    first = next(i for i, t in enumerate(temps) if 77 <= t <= 88)
    assert 77 <= min(temps[first:]) and max(temps) <= 88
    log = run.log()
    assert log["steps"][0]["envelopeOk"] is True and log["x-cookwala-ros-altitudeM"] == 2400
    assert schemas.validate(log, "ExecutionLog") == []


WATER_LIMIT = {"core": "0.2.0", "kind": "SafetyLimits", "id": "test-water-pack", "version": "1.0.0",
               "limits": [{"id": "water.max_test", "kind": "max_temp", "action": "cut_heat",
                           "appliesTo": {"medium": "water"}, "max": 88, "unit": "degC"}]}


def test_a_reading_above_a_safety_limit_stops_the_run_with_a_safety_event():
    # the limit (88 degC) is tighter than the recipe's target (90 degC): a pack installed after the
    # pre-start check; the running engine enforces it anyway (decision 8)
    kitchen = SimKitchen()
    run = make_run(simmer_recipe(), kitchen, limits=[WATER_LIMIT])
    changes = kitchen.run(run, limit_s=3600)
    assert run.state == "stopped" and kitchen.heater.power_w == 0.0
    assert 88 < kitchen.thermal.medium_c < 90
    log = run.log()
    (event,) = log["safetyEvents"]
    assert event["limit"] == "water.max_test" and event["action"] == "cut_heat" and event["node"] == "s1"
    incidents = [d["type"] for k, d in changes if k == "incident"]
    assert incidents == ["cw.incident.overheat"]
    assert "safety limit water.max_test" in run.status()["stopReason"]
    assert log["outcome"] == "aborted_safe" and schemas.validate(log, "ExecutionLog") == []
