"""The monitor's own thermometer checks (safety.plausibility, issue 16): energy in against the
medium reading, the pan surface against the medium, and max_temp limits against what the pan
surface implies. Driven by the sim's thermal model (the sim is the hardware)."""

from __future__ import annotations

import math

from cookwala_ros.core import plausibility as core_plausibility
from cookwala_ros.core.heat_model import ThermalParams
from cookwala_ros.safety import incidents
from cookwala_ros.safety.monitor import HeaterReading, Monitor, MonitorConfig
from cookwala_ros.safety.packs import effective_pack
from cookwala_ros.safety.plausibility import LEAD_HOLD_S, SensorPlausibility
from cookwala_ros.sim.thermal_model import SensorFault, ThermalConfig, ThermalModel

OIL_LIMIT = {"id": "oil.max_temp", "kind": "max_temp", "action": "cut_heat", "appliesTo": {"medium": "oil"},
             "max": 200, "unit": "degC"}


def run(check, model, seconds, *, power=2000.0, medium_of=None, dt=0.1, limits=(), start=1.0):
    """Heat the sim pot at `power` and feed the check; (time, findings) of the first findings."""
    t = start
    model.set_power(power)
    while t < start + seconds:
        r = model.readings()
        medium_c = medium_of(model) if medium_of else r.medium_temp_c
        found = check.update(t, model.power_w, model.config.medium, model.medium_mass_kg, medium_c, r.pan_temp_c,
                             limits, "cw.op.deep_fry")
        if found:
            return t - start, found
        model.step(dt)
        t += dt
    return None, []


def test_a_stuck_oil_sensor_is_found_within_the_bound():
    model = ThermalModel(ThermalConfig(medium="oil", medium_mass_kg=1.3, initial_temp_c=45.0))
    model.set_sensor_fault("medium", SensorFault.STUCK)
    at, found = run(SensorPlausibility(), model, 600.0)
    bound = core_plausibility.bound_for(ThermalParams(), "oil", 1.3, 2000.0).detection_time_s(2000.0)
    assert found and at <= bound
    assert {f.trigger for f in found} <= {"sensor_implausible:oil", "sensor_implausible:oil_vs_pan"}
    assert all(f.action == "cut_heat" for f in found)
    assert model.medium_c < 190.0


def test_true_thermometers_are_never_flagged():
    for medium, mass in (("oil", 1.3), ("water", 2.0), ("oil", 0.3)):
        model = ThermalModel(ThermalConfig(medium=medium, medium_mass_kg=mass))
        check = SensorPlausibility()
        t = 1.0
        hold = 180.0 if medium == "oil" else 95.0
        for i in range(30000):  # 50 min: warm-up, bang-bang hold, then off
            model.set_power(0.0 if model.medium_c > hold or i > 24000 else 2000.0)
            r = model.readings()
            found = check.update(t, model.power_w, medium, mass, r.medium_temp_c, r.pan_temp_c, [OIL_LIMIT], None)
            assert not found, (medium, mass, t, found)
            model.step(0.1)
            t += 0.1


def test_an_oil_sensor_reading_far_below_the_pan_is_found_from_the_pan():
    """It moves (so the energy check alone may pass it), but 60 °C low: the pan says it lies."""
    model = ThermalModel(ThermalConfig(medium="oil", medium_mass_kg=1.3, initial_temp_c=120.0))
    model.set_power(2000.0)
    for _ in range(600):  # let the pan lead settle
        model.step(0.1)
    at, found = run(SensorPlausibility(), model, 120.0, medium_of=lambda m: m.medium_c - 70.0)
    assert [f.trigger for f in found] == ["sensor_implausible:oil_vs_pan"]
    assert LEAD_HOLD_S <= at < LEAD_HOLD_S + 1.0


def test_a_runaway_under_a_sensor_stuck_near_the_limit_is_found_before_the_hob_cut_out():
    """Full power while the oil sensor follows at 90 % and then sticks at 185 °C (under the 200 °C
    limit): found before the pan reaches the hob's own 300 °C cut-out."""
    model = ThermalModel(ThermalConfig(medium="oil", medium_mass_kg=1.0, initial_temp_c=150.0))
    at, found = run(SensorPlausibility(), model, 900.0, limits=[OIL_LIMIT],
                    medium_of=lambda m: 150.0 + 0.9 * (m.medium_c - 150.0) if m.medium_c < 190 else 185.0)
    assert found and model.pan_c < 300.0


def test_the_oil_limit_is_checked_against_what_the_pan_implies():
    """Oil at 225 °C, the hob at low power; the oil sensor reads 150 °C (under the 200 °C limit),
    the pan surface says the oil is above the limit."""
    hot = ThermalModel(ThermalConfig(medium="oil", medium_mass_kg=1.0, initial_temp_c=225.0))
    hot.set_power(200.0)
    for _ in range(600):
        hot.step(0.1)
    check, found, t = SensorPlausibility(), [], 1.0
    while not any(f.trigger.startswith("limit:") for f in found) and t < 300.0:
        r = hot.readings()  # (a lead seen first may decay no faster than C_pan/(k/2): it takes a while)
        found = check.update(t, 200.0, "oil", 1.0, 150.0, r.pan_temp_c, [OIL_LIMIT], "cw.op.deep_fry")
        hot.step(0.1)
        t += 0.1
    pan = [f for f in found if f.trigger == "limit:oil.max_temp:pan"]
    assert pan and pan[0].limit_id == "oil.max_temp" and pan[0].action == "cut_heat"
    assert hot.medium_c > 200.0
    # a pan that may just lead an oil under the limit implies nothing
    lead = core_plausibility.pan_lead_limit_c(ThermalParams(), "oil", 2000.0)
    assert not SensorPlausibility().update(1.0, 2000.0, "oil", 1.0, 150.0, 200.0 + lead - 1.0, [OIL_LIMIT], None)


def test_no_hob_clock_no_energy_check():
    check = SensorPlausibility()
    for i in range(5000):
        assert check.update(math.nan, 2000.0, "water", 1.0, 20.0, 25.0) == []


def test_the_monitor_halts_on_a_lying_sensor_and_reports_a_sensor_failure():
    monitor = Monitor(effective_pack([]), MonitorConfig(heater_state_timeout_s=0.5))
    model = ThermalModel(ThermalConfig(medium="water", medium_mass_kg=1.0))
    model.set_sensor_fault("medium", SensorFault.STUCK)
    model.set_power(2000.0)
    monitor.on_heater(HeaterReading(0.0, True, "water", 20.0, 20.0), 0.0)
    monitor.activate(0.0)
    halted_at = None
    for i in range(1, 3000):
        r = model.readings()
        reading = HeaterReading(2000.0, False, "water", r.medium_temp_c, r.pan_temp_c,
                                medium_mass_kg=1.0, stamp_s=100.0 + i * 0.1)
        if monitor.on_heater(reading, i * 0.005):  # the sim runs 20x faster than the steady clock
            halted_at = i * 0.1
            break
        model.step(0.1)
    bound = core_plausibility.bound_for(ThermalParams(), "water", 1.0, 2000.0).detection_time_s(2000.0)
    assert halted_at is not None and halted_at <= bound
    assert monitor.state == "stopped" and "sensor_implausible:water" in monitor.arbiter.active_triggers
    report = next(r for r in monitor.outbox if r.trigger == "sensor_implausible:water")
    assert incidents.classify(report.trigger) == ("cookwala.device.fault", "cw.incident.sensor_failure")


def test_cold_water_into_a_hot_pan_is_no_fault():
    """The soup's simmer after its saute: 1.5 kg of water at 20 °C into a pan at 170 °C."""
    model = ThermalModel(ThermalConfig(medium="pan_surface", medium_mass_kg=1.0))
    model.set_power(2000.0)
    while model.pan_c < 170.0:
        model.step(0.1)
    check = SensorPlausibility()
    t = 1.0
    for pot in (model, model.refilled("water", 1.5, False)):
        for _ in range(3000 if pot is not model else 10):
            r = pot.readings()
            found = check.update(t, pot.power_w, pot.config.medium, pot.medium_mass_kg if not pot.dry else 0.0,
                                 r.medium_temp_c, r.pan_temp_c, [OIL_LIMIT], None)
            assert not found, (t, found)
            pot.step(0.1)
            t += 0.1
