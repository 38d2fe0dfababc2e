"""The heat controller and the thermal estimate against the simulated pot."""

from __future__ import annotations

import pytest

from cookwala_ros.core import heat_control
from cookwala_ros.core.heat_control import HeatGoal, PIController
from cookwala_ros.core.heat_model import ThermalEstimate, ThermalParams
from cookwala_ros.sim.heater import HeaterMode, SimHeater
from cookwala_ros.sim.thermal_model import ThermalConfig, ThermalModel


def test_goal_uses_the_recipe_target_inside_the_band():
    node = {"op": "cw.op.simmer", "params": {"target": {"sensor": "cw.sense.liquid_temp", "value": 90,
                                                        "unit": "degC", "tolerance": 4}}}
    goal = heat_control.goal_for(node)
    assert (goal.lo, goal.hi, goal.setpoint, goal.tolerance) == (85, 96, 90, 4)
    assert goal.on_target(93.9) and not goal.on_target(94.1)


def test_goal_band_shifts_with_altitude_and_falls_back_to_mid_band():
    goal = heat_control.goal_for({"op": "cw.op.simmer", "params": {}}, altitude_m=2400)
    assert (goal.lo, goal.hi) == (77, 88) and goal.setpoint == pytest.approx(82.5)
    assert goal.target is None and goal.on_target(80) and not goal.on_target(90)


def test_goal_from_temp_param_and_from_a_hob_heat_level():
    assert heat_control.goal_for({"op": "cw.op.fry", "params": {"tempC": 175}}).setpoint == 175
    saute = heat_control.goal_for({"op": "cw.op.saute", "params": {"heat": "medium"}})
    assert (saute.lo, saute.hi) == (150, 210) and saute.setpoint == 180  # medium: pan 170-190
    assert heat_control.goal_for({"op": "cw.op.mix"}) is None


def test_a_target_outside_the_band_is_never_aimed_at():
    assert HeatGoal(85, 96, target=120).setpoint == pytest.approx(90.5)


def _pot(medium="water", mass=1.5, lid=False):
    thermal = ThermalModel(ThermalConfig(medium=medium, medium_mass_kg=mass, lid=lid))
    return thermal, SimHeater(thermal, max_power_w=2000)


@pytest.mark.parametrize("medium, mass, setpoint, band", [
    ("water", 1.5, 90.0, (85, 96)),
    ("oil", 1.0, 175.0, (160, 190)),
    ("pan_surface", 0.0, 170.0, (150, 210)),
])
def test_pi_holds_the_band_after_warm_up_without_overshoot(medium, mass, setpoint, band):
    thermal, heater = _pot(medium, mass or 1.0)
    pi = PIController(2000)
    dt = 0.2
    temps = []
    for _ in range(int(1800 / dt)):
        measured = thermal.pan_c if medium == "pan_surface" else thermal.medium_c
        heater.command(HeaterMode.POWER, power_w=pi.update(setpoint, measured, dt, band[1]))
        heater.step(dt)
        temps.append(measured)
    first = next(i for i, t in enumerate(temps) if band[0] <= t <= band[1])
    steady = temps[first:]
    assert band[0] <= min(steady) and max(steady) <= band[1]
    assert temps[-1] == pytest.approx(setpoint, abs=1.0)  # the integral removes the offset


def test_guard_cuts_power_near_the_top_of_the_band():
    pi = PIController(2000)
    assert pi.update(200, 95.5, 0.1, ceiling_c=96) == 0.0
    assert pi.update(90, 20, 0.1, ceiling_c=96) == 2000  # far below: full power
    assert pi.integral_w == 0.0  # saturated: no wind-up


def test_controller_rejects_a_non_positive_power():
    with pytest.raises(ValueError, match="max_power_w"):
        PIController(0)


def test_estimate_tracks_the_simulated_pot_open_loop():
    thermal, heater = _pot("water", 1.5)
    est = ThermalEstimate(ThermalParams(), "water", 1.5)
    for power in [2000] * 1000 + [300] * 2000:  # 0.5 s steps
        heater.command(HeaterMode.POWER, power_w=power)
        heater.step(0.5)
        est.step(0.5, power)
    assert est.medium_c == pytest.approx(thermal.medium_c, abs=1.5)


def test_estimate_is_pulled_back_by_readings_and_never_passes_boiling():
    est = ThermalEstimate(ThermalParams(), "water", 1.0, altitude_m=1500)
    for _ in range(2000):
        est.step(0.5, 2000)
    assert est.medium_c == pytest.approx(95.0)
    est.correct(pan_c=120.0, medium_c=80.0)
    assert (est.pan_c, est.medium_c) == (120.0, 80.0)
    pan = ThermalEstimate(ThermalParams(), "pan_surface", 0.0)
    pan.correct(pan_c=150.0)
    assert pan.medium_c == 150.0
