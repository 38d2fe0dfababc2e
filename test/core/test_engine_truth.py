"""What the engine reports must be true (issue 16): a step whose medium never reached its band is
not `envelopeOk` and needs a person before the cook is "served"; a lying medium sensor cuts the
heat with a `cw.incident.sensor_failure` incident and the run stops (not served)."""

from __future__ import annotations

import pytest
from test_engine_kitchen import DATA, REPO, SimKitchen, load_json, make_run

from cookwala_ros.core import plausibility, schemas
from cookwala_ros.core.execution_log import UNFINISHED_FIELD
from cookwala_ros.sim.thermal_model import SensorFault

CHIPS = REPO / "examples" / "recipes" / "chips-deep-fry.cookwala.json"


def chips() -> dict:
    return load_json(CHIPS)


def simmer() -> dict:
    return load_json(DATA / "simmer.cookwala.json")


def incidents(changes, kind="cw.incident.sensor_failure"):
    return [d for k, d in changes if k == "incident" and d["type"] == kind]


def test_a_deep_fry_that_never_reaches_its_band_asks_a_person_and_is_not_envelope_ok():
    kitchen = SimKitchen(max_power_w=900.0, auto_human_s=None)  # the hob cannot get 1.3 kg of oil to 160 °C
    run = make_run(chips(), kitchen)
    changes = kitchen.run(run, limit_s=3600, until=lambda e, k: e.state == "needs_human")
    assert run.state == "needs_human"
    why = run.status()["humanNeeded"]
    assert "never reached" in why and "160–190" in why and "confirm" in why, why
    assert kitchen.thermal.medium_c < 160.0
    # the person does not confirm: stopped, and the unfinished step has no verdict
    run.stop("nobody confirmed the chips")
    kitchen.run(run, limit_s=kitchen.t + 30)
    log = run.log()
    assert log["outcome"] == "aborted_safe" and schemas.validate(log, "ExecutionLog") == []
    assert log["steps"] == []
    (open_step,) = log[UNFINISHED_FIELD]
    assert open_step["node"] == "n1" and "envelopeOk" not in open_step
    assert not incidents(changes)  # a weak hob is no sensor fault


def test_a_person_confirms_the_food_then_the_cook_is_served_with_the_truth_in_the_log():
    kitchen = SimKitchen(max_power_w=900.0, auto_human_s=20.0)
    run = make_run(chips(), kitchen)
    kitchen.run(run, limit_s=3600)
    assert run.state == "completed"
    log = run.log()
    assert log["outcome"] == "served" and schemas.validate(log, "ExecutionLog") == []
    (step,) = log["steps"]
    assert step["envelopeOk"] is False
    assert step["deviation"]["kind"] == "temperature_excursion" and "never reached" in step["deviation"]["detail"]
    assert step["verifiedBy"] == "human"
    assert any(h["kind"] == "confirm" for h in log["humanInterventions"])
    peak = max(s["max"] for s in step["summary"] if s["sensor"] == "cw.sense.oil_temp")
    assert peak < 160.0


def test_a_step_that_reached_its_band_stays_envelope_ok():
    kitchen = SimKitchen()
    run = make_run(simmer(), kitchen)
    changes = kitchen.run(run, limit_s=3600)
    assert run.state == "completed" and not [c for c in changes if c[0] == "needs_human"]
    log = run.log()
    assert log["outcome"] == "served" and log["steps"][0]["envelopeOk"] is True
    assert UNFINISHED_FIELD not in log and not incidents(changes)


def test_a_log_read_mid_step_has_the_open_step_without_a_verdict():
    kitchen = SimKitchen()
    run = make_run(simmer(), kitchen)
    kitchen.run(run, limit_s=120)
    log = run.log()
    assert log["outcome"] == "partial" and log["steps"] == [] and schemas.validate(log, "ExecutionLog") == []
    assert [s["node"] for s in log[UNFINISHED_FIELD]] == ["s1"] and "envelopeOk" not in log[UNFINISHED_FIELD][0]


def _stuck_run(recipe, *, stick_at_c=None):
    """Run until the medium sensor has stuck (from the start, or once it reads stick_at_c) and the
    run has ended; returns (run, kitchen, changes, time it stuck)."""
    kitchen = SimKitchen(auto_human_s=None)
    run = make_run(recipe, kitchen)
    stuck = {"t": None}

    def watch(engine, k):
        if stuck["t"] is not None or engine.runner is None or engine.runner.kind != "heat":
            return
        reading = k.thermal.readings().medium_temp_c
        if stick_at_c is None or reading >= stick_at_c:
            k.medium_fault = SensorFault.STUCK
            k.thermal.set_sensor_fault("medium", SensorFault.STUCK)
            stuck["t"] = k.t

    changes = kitchen.run(run, limit_s=3600, on_tick=watch)
    return run, kitchen, changes, stuck["t"]


@pytest.mark.parametrize("case", ["liquid stuck at 20 °C during a simmer", "oil stuck at 45 °C during a deep fry"])
def test_a_stuck_medium_sensor_cuts_heat_with_a_sensor_failure_within_the_bound(case):
    recipe, stick = (simmer(), None) if "simmer" in case else (chips(), 45.0)
    run, kitchen, changes, stuck_at = _stuck_run(recipe, stick_at_c=stick)
    assert stuck_at is not None
    assert run.state == "stopped" and kitchen.heater.power_w == 0.0
    (incident,) = incidents(changes)
    assert "implausible" in incident["detail"]
    log = run.log()
    assert log["outcome"] == "aborted_safe" and schemas.validate(log, "ExecutionLog") == []
    assert log["steps"] == [] and "envelopeOk" not in log[UNFINISHED_FIELD][0]
    setup = run.heater_setup
    bound = plausibility.bound_for(run.config.thermal, setup["medium"], setup["mass_kg"], 2000.0)
    stopped_at = next(t for t, *_ in reversed(log["x-cookwala-ros-trace"]))  # run time of the last trace row
    # the run stopped (heat off) within the bound of heat at full power after the sensor stuck
    assert stopped_at - (stuck_at - run.start_time_s) <= bound.detection_time_s(2000.0) + 2.0
    assert kitchen.thermal.evaporated_kg < 0.05 * setup["mass_kg"]
    assert kitchen.thermal.medium_c < 190.0


def test_a_simmer_that_starts_above_its_band_approaches_it_without_a_deviation():
    """Boil -> simmer (issue 22, from issue 12): the water starts above the simmer band because of
    the step before. Cooling into it is an approach, logged with its duration, not an excursion."""
    kitchen = SimKitchen()
    kitchen._new_pot("water", 1.0, lid=False, pan_c=104.0, medium_c=99.5)  # just off the boil
    run = make_run(simmer(), kitchen)
    changes = kitchen.run(run, limit_s=3600)
    assert run.state == "completed" and not [c for c in changes if c[0] == "needs_human"]
    log = run.log()
    assert schemas.validate(log, "ExecutionLog") == []
    (step,) = log["steps"]
    assert step["envelopeOk"] is True and "deviation" not in step, step
    approach = step["x-cookwala-ros-approachS"]
    assert 30.0 < approach < 1800.0, approach  # minutes of cooling with the heat off, not instant
    liquid = next(s for s in step["summary"] if s["sensor"] == "cw.sense.liquid_temp")
    assert liquid["max"] > 96.0 and liquid["end"] <= 96.0


def test_an_approach_from_above_longer_than_the_model_allows_is_a_deviation():
    """The bound is the thermal model's cooling time with margin; a medium still above the band
    after it (a pot that does not cool as the model says) is an excursion."""
    kitchen = SimKitchen()
    kitchen._new_pot("water", 1.0, lid=False, pan_c=104.0, medium_c=99.5)
    run = make_run(simmer(), kitchen)
    kitchen.run(run, limit_s=1.0)  # the first reading: the bound is set
    kitchen.run(run, limit_s=kitchen.t + 60.0, until=lambda e, k: e.runner is not None and e.runner.approach_s)
    runner = run.runner
    assert runner.approach_bound_s is not None and runner.approach_bound_s > 60.0
    runner.approach_bound_s = 1.0  # as if the model expected it in the band after a second
    kitchen.run(run, limit_s=kitchen.t + 10.0)
    assert runner.approach_late and runner.recorder.envelope_ok is False
    kinds = [d["kind"] for d in runner.recorder.deviations]
    assert kinds == ["temperature_excursion"] and "still above" in runner.recorder.deviations[0]["detail"]
