"""The sensor plausibility bound (core.plausibility): a reading that does not follow the heat
the hob delivers is a sensor fault; a reading that follows the thermal model never is."""

from __future__ import annotations

import math

import pytest

from cookwala_ros.core import plausibility
from cookwala_ros.core.heat_model import ThermalParams
from cookwala_ros.sim.thermal_model import SensorFault, ThermalConfig, ThermalModel

PARAMS = ThermalParams()


def bound(medium="water", mass=1.0, power=2000.0):
    return plausibility.bound_for(PARAMS, medium, mass, power)


def drive(check, model, power_of, seconds, dt=0.1, reading_of=None):
    """Step the sim pot and feed the check; returns (time of the first fault, fault) or (None, None)."""
    t = 0.0
    while t < seconds:
        model.set_power(power_of(t, model))
        r = model.readings()
        reading = reading_of(t, model) if reading_of else r.medium_temp_c
        fault = check.update(t, model.power_w, reading, r.pan_temp_c)
        if fault:
            return t, fault
        model.step(dt)
        t = round(t + dt, 6)
    return None, None


def test_the_bound_follows_the_formula():
    b = bound("oil", 1.3)
    cp = PARAMS.pan_capacity_j_per_k
    assert b.capacity_hi_j_per_k == pytest.approx(cp + 2 * 1.3 * 2000.0)
    assert b.lead_buffer_j == pytest.approx(cp * 0.85 * 2000.0 / (40.0 * 0.5))
    assert b.efficiency_lo == pytest.approx(0.75 * 0.85)
    assert b.loss_hi_w == pytest.approx(2 * plausibility.losses_w(PARAMS, "oil", 300.0))
    assert bound("water").loss_hi_w == pytest.approx(2 * plausibility.losses_w(PARAMS, "water", 150.0))
    net = b.efficiency_lo * 2000.0 - b.loss_hi_w
    assert b.detection_time_s(2000.0) == pytest.approx((b.lead_buffer_j + 2 * 5.0 * b.capacity_hi_j_per_k) / net)
    assert b.detection_time_s(500.0) == math.inf  # not above the losses: nothing can be concluded
    assert plausibility.bound_for(PARAMS, "pan_surface", 1.0, 2000.0) is None
    assert plausibility.bound_for(PARAMS, "water", 0.0, 2000.0) is None


@pytest.mark.parametrize("medium,mass", [("water", 1.0), ("water", 3.0), ("oil", 1.0), ("oil", 1.3)])
def test_a_stuck_reading_at_full_power_is_found_within_the_bound(medium, mass):
    model = ThermalModel(ThermalConfig(medium=medium, medium_mass_kg=mass))
    model.set_sensor_fault("medium", SensorFault.STUCK)
    check = plausibility.RiseCheck(bound(medium, mass))
    at, fault = drive(check, model, lambda t, m: 2000.0, 1800.0)
    assert fault is not None and "rose 0.0 °C" in fault
    assert at <= bound(medium, mass).detection_time_s(2000.0) + 0.2
    assert model.medium_c < 100.0 or medium == "water"
    assert model.evaporated_kg < 0.01 * mass  # found long before the pot boils away


@pytest.mark.parametrize("medium,mass,start", [("water", 1.0, 20.0), ("water", 3.0, 60.0), ("oil", 1.3, 20.0),
                                               ("oil", 0.5, 150.0)])
def test_a_true_reading_is_never_a_fault(medium, mass, start):
    """Full power, a bang-bang hold, and the hob off: the sim's own reading always passes."""
    model = ThermalModel(ThermalConfig(medium=medium, medium_mass_kg=mass, initial_temp_c=start))
    check = plausibility.RiseCheck(bound(medium, mass))
    hold = 95.0 if medium == "water" else 180.0

    def power(t, m):
        if t > 3000:
            return 0.0
        return 2000.0 if m.medium_c < hold else 0.0

    at, fault = drive(check, model, power, 3600.0)
    assert fault is None, (at, fault)


def test_boiling_water_takes_heat_without_rising():
    model = ThermalModel(ThermalConfig(medium="water", medium_mass_kg=2.0, initial_temp_c=99.0))
    check = plausibility.RiseCheck(bound("water", 2.0))
    at, fault = drive(check, model, lambda t, m: 2000.0, 600.0)
    assert fault is None and model.boiling


def test_a_reading_that_falls_while_heating_is_a_fault():
    model = ThermalModel(ThermalConfig(medium="oil", medium_mass_kg=1.0, initial_temp_c=100.0))
    check = plausibility.RiseCheck(bound("oil", 1.0))
    at, fault = drive(check, model, lambda t, m: 2000.0, 600.0, reading_of=lambda t, m: 100.0 - t / 5.0)
    assert fault is not None and "fell" in fault


def test_a_reading_that_creeps_far_too_slowly_is_a_fault():
    model = ThermalModel(ThermalConfig(medium="water", medium_mass_kg=1.0))
    check = plausibility.RiseCheck(bound("water", 1.0))
    at, fault = drive(check, model, lambda t, m: 2000.0, 600.0,
                      reading_of=lambda t, m: 20.0 + 0.1 * (m.medium_c - 20.0))
    assert fault is not None and at < 300


def test_a_missing_reading_restarts_the_window():
    check = plausibility.RiseCheck(bound("water", 1.0))
    for i in range(3000):  # 300 s at full power, but the reading drops out every 30 s
        reading = None if i % 300 == 0 else 20.0
        assert check.update(i * 0.1, 2000.0, reading) is None or i * 0.1 > 30.0
    assert check.window_s < 30.0


def test_the_pan_may_not_lead_the_medium_by_more_than_the_model_allows():
    model = ThermalModel(ThermalConfig(medium="oil", medium_mass_kg=1.0))
    model.set_power(2000.0)
    worst = 0.0
    for _ in range(6000):  # 10 min at full power (the hob's cut-out aside)
        model.step(0.1)
        worst = max(worst, model.pan_c - model.medium_c)
    assert worst < plausibility.pan_lead_limit_c(PARAMS, "oil", 2000.0)
    assert plausibility.pan_lead_limit_c(PARAMS, "oil", 0.0) == pytest.approx(2 * plausibility.SENSOR_TOLERANCE_C)
