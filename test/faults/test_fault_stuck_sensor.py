"""Issue 16: a stuck thermometer is not believed.

The shipped `kitchen` scene (LiveKitchen: sim clock, arm, heater, executor), watched from outside;
the safety monitor is left out so that what cuts the heat here is the executor's own check (the
monitor's independent check has its unit tests in test/safety; a loaded host can also trip the
monitor's wall-clock watchdogs, whose `stale` incident is a sensor_failure too). (a) The liquid sensor stuck at 20 °C from the start (`medium_sensor_fault=stuck`)
during a simmer, (b) the oil sensor stuck at about 45 °C (set live on heater_sim) during the
sample deep fry: the heat is cut (0 W on /heater/state) and a `cw.incident.sensor_failure` is
reported within the plausibility bound of core.plausibility, stated in hob (sim) time:

    t_detect = (B + 2·tol·C_hi) / (η_lo·P_max − L_hi)

plus CONTROL_PATH_S of sim time for the executor's tick, the stop and the hob's next state. The
cook is not "served". Figures are printed (pytest -s).
"""

from __future__ import annotations

import time

import pytest

from cookwala_ros.core import plausibility
from cookwala_ros.core.heat_model import ThermalParams
from sensor_fault_watch import REPO, Watcher, log, start, status, wait_state

WATER = REPO / "test" / "e2e" / "data" / "recipes" / "e2e-water-simmer.cookwala.json"  # 500 ml
CHIPS = REPO / "examples" / "recipes" / "chips-deep-fry.cookwala.json"  # 1 l oil + 300 g potato
RTF = 10.0
CONTROL_PATH_S = 3.0  # sim s: executor tick (0.1 s) + stopping tick + hob state period, at RTF 10 on a busy host


def _bound_s(medium: str, mass_kg: float) -> float:
    return plausibility.bound_for(ThermalParams(), medium, mass_kg, 2000.0).detection_time_s(2000.0)


def _execution(base_url: str, run: dict):
    """What the execution says now, for a failure message."""
    def explain() -> str:
        now = status(base_url, run["id"])
        return (f"execution {run['id']} {now.get('state')} at {now.get('node')} {now.get('op')}: "
                f"{now.get('x-cookwala-ros-reason') or now.get('refusal') or ''}")
    return explain


def _heat_cut_after(states, t_from: float):
    """The first state at 0 W after sim time t_from with power on before it."""
    on = False
    for stamp, rx, power, medium in states:
        if stamp < t_from:
            continue
        if power > 0:
            on = True
        elif on:
            return stamp, rx
    return None


@pytest.fixture
def watcher():
    w = Watcher("fault_stuck_sensor_watch")
    yield w
    w.close()


def _assert_not_served(base_url: str, execution: str) -> dict:
    final = wait_state(base_url, execution, ("stopped", "failed", "completed", "needs_human"), 60.0)
    assert final["state"] == "stopped", final
    record = log(base_url, execution)
    assert record["outcome"] == "aborted_safe", record["outcome"]
    assert all(s.get("envelopeOk") is not True or s["op"] != "cw.op.simmer" for s in record["steps"])
    return record


def test_a_liquid_sensor_stuck_at_20_degC_cuts_the_simmer_with_a_sensor_failure(watcher):
    from cookwala_ros.ros.recipe_demo import LiveKitchen

    with LiveKitchen(rtf=RTF, recipes=[WATER], medium_sensor_fault="stuck", startup_timeout_s=90.0,
                     with_safety_monitor=False) as kitchen:
        run = start(kitchen.base_url, WATER, "fault-stuck-liquid")
        first_on = watcher.wait(lambda: next((s for s in watcher.snapshot()[0] if s[2] > 0), None), 60.0,
                                "the hob heating", _execution(kitchen.base_url, run))
        bound = _bound_s("water", 0.5)
        cut = watcher.wait(lambda: _heat_cut_after(watcher.snapshot()[0], first_on[0]),
                           (bound + 30.0) / RTF + 30.0, "the heat cut", _execution(kitchen.base_url, run))
        incident = watcher.wait(watcher.sensor_failures, 10.0, "a cw.incident.sensor_failure event")
        detect_s = cut[0] - first_on[0]
        print(f"\nstuck liquid sensor: heat cut {detect_s:.1f} s (sim) after heating began; bound {bound:.1f} s "
              f"+ {CONTROL_PATH_S:g} s; incident {incident[0]['rx'] - cut[1]:+.3f} s (wall) from the 0 W state; "
              f"readings {sorted({round(s[3], 1) for s in watcher.snapshot()[0]})[:3]}")
        assert detect_s <= bound + CONTROL_PATH_S
        assert all(round(s[3], 1) == 20.0 for s in watcher.snapshot()[0])  # it really was stuck
        assert "cw.sense.liquid_temp is implausible" in incident[0]["data"]["detail"], incident
        _assert_not_served(kitchen.base_url, run["id"])
        time.sleep(1.0)
        states = watcher.snapshot()[0]
        assert all(p == 0.0 for stamp, rx, p, m in states if rx > cut[1])  # the heat stayed off


def test_an_oil_sensor_stuck_at_45_degC_cuts_the_deep_fry_with_a_sensor_failure(watcher):
    from cookwala_ros.ros.recipe_demo import LiveKitchen

    with LiveKitchen(rtf=RTF, recipes=[CHIPS], startup_timeout_s=90.0, with_safety_monitor=False) as kitchen:
        run = start(kitchen.base_url, CHIPS, "fault-stuck-oil")
        warm = watcher.wait(lambda: next((s for s in watcher.snapshot()[0] if s[2] > 0 and s[3] >= 45.0), None),
                            120.0, "the oil reading 45 °C", _execution(kitchen.base_url, run))
        before = watcher.snapshot()[0][-1]  # the sensor sticks after this state
        kitchen.set_parameter("heater_sim", "fault.medium_sensor", "stuck")
        bound = _bound_s("oil", 1.3)
        cut = watcher.wait(lambda: _heat_cut_after(watcher.snapshot()[0], before[0]),
                           (bound + 30.0) / RTF + 30.0, "the heat cut", _execution(kitchen.base_url, run))
        incident = watcher.wait(watcher.sensor_failures, 10.0, "a cw.incident.sensor_failure event")
        detect_s = cut[0] - before[0]
        stuck_at = watcher.snapshot()[0][-1][3]
        print(f"\nstuck oil sensor (reading {stuck_at:.1f} °C from {before[3]:.1f}): heat cut {detect_s:.1f} s (sim) "
              f"after it stuck; bound {bound:.1f} s + {CONTROL_PATH_S:g} s; incident "
              f"{incident[0]['rx'] - cut[1]:+.3f} s (wall) from the 0 W state")
        assert "cw.sense.oil_temp is implausible" in incident[0]["data"]["detail"], incident
        assert 45.0 <= stuck_at < 60.0 and warm[3] >= 45.0
        assert detect_s <= bound + CONTROL_PATH_S
        record = _assert_not_served(kitchen.base_url, run["id"])
        assert not any(s["op"] == "cw.op.deep_fry" and s["envelopeOk"] for s in record["steps"])
        time.sleep(1.0)
        assert all(p == 0.0 for stamp, rx, p, m in watcher.snapshot()[0] if rx > cut[1])
