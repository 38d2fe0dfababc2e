"""The simulated hob's command modes, protections and faults."""

from __future__ import annotations

import math

import pytest

from cookwala_ros.sim.heater import HeaterFault, HeaterMode, SimHeater
from cookwala_ros.sim.thermal_model import SensorFault, ThermalConfig, ThermalModel


def make(medium="water", **kw):
    return SimHeater(ThermalModel(ThermalConfig(medium=medium, **kw)), max_power_w=2000.0, overtemp_cutoff_c=300.0)


def test_power_mode_delivers_clipped_power_and_off_cuts_it_at_once():
    heater = make()
    heater.command(HeaterMode.POWER, power_w=5000.0)
    assert heater.power_w == 2000.0 and heater.snapshot().on
    heater.step(10.0)
    heater.command(HeaterMode.OFF)
    snap = heater.snapshot()
    assert (snap.on, snap.power_w, snap.commanded_mode, snap.fault) == (False, 0.0, HeaterMode.OFF, HeaterFault.NONE)


def test_setpoint_mode_holds_the_medium_near_the_setpoint():
    heater = make("oil", medium_mass_kg=0.92)
    heater.command(HeaterMode.SETPOINT, setpoint_c=170.0)
    heater.step(1200.0)
    snap = heater.snapshot()
    assert snap.medium_temp_c == pytest.approx(170.0, abs=5.0)
    assert 0.0 < snap.power_w < 2000.0


def test_setpoint_mode_fails_safe_without_its_sensor():
    heater = make()
    heater.command(HeaterMode.SETPOINT, setpoint_c=90.0)
    heater.step(5.0)
    assert heater.power_w > 0
    heater.set_sensor_fault("medium", SensorFault.DISCONNECTED)
    snap = heater.snapshot()
    assert snap.power_w == 0.0 and not snap.medium_sensor_ok and math.isnan(snap.medium_temp_c)
    assert snap.fault == HeaterFault.SENSOR_DISCONNECTED and "medium sensor" in snap.fault_detail


def test_welded_relay_keeps_heating_after_off_and_says_so():
    heater = make()
    heater.command(HeaterMode.POWER, power_w=1200.0)
    heater.set_relay_welded(True)
    heater.command(HeaterMode.OFF)
    before = heater.thermal.medium_c
    heater.step(30.0)
    snap = heater.snapshot()
    assert snap.on and snap.power_w == 1200.0 and snap.fault == HeaterFault.RELAY_WELDED
    assert heater.thermal.medium_c > before + 3.0
    heater.set_relay_welded(False)
    assert heater.snapshot().power_w == 0.0


def test_overtemp_cutout_trips_and_resets_only_after_off_and_cooling():
    heater = make("pan_surface")
    heater.command(HeaterMode.POWER, power_w=2000.0)
    heater.step(200.0)
    snap = heater.snapshot()
    assert snap.fault == HeaterFault.OVERTEMP and snap.power_w == 0.0
    assert snap.pan_surface_temp_c < 320.0
    heater.command(HeaterMode.POWER, power_w=500.0)  # still tripped
    assert heater.power_w == 0.0
    heater.step(3000.0)  # cools down
    heater.command(HeaterMode.OFF)
    heater.command(HeaterMode.POWER, power_w=500.0)
    assert heater.power_w == 500.0 and heater.snapshot().fault == HeaterFault.NONE


@pytest.mark.parametrize(
    "args, field",
    [((7,), "mode"), ((HeaterMode.POWER, -1.0), "power_w"), ((HeaterMode.SETPOINT, 0.0, math.nan), "setpoint_c")],
)
def test_bad_commands_name_the_field(args, field):
    heater = make()
    with pytest.raises(ValueError, match=field):
        heater.command(*args)


def test_new_contents_keep_the_pan_temperature_and_the_medium_only_if_unchanged():
    heater = make("pan_surface", initial_temp_c=20.0)
    heater.command(HeaterMode.POWER, power_w=1500.0)
    heater.step(60.0)
    hot_pan = heater.thermal.pan_c
    assert hot_pan > 100.0
    heater.set_contents("oil", 0.2, lid=False)  # oil into the hot pan: the oil starts at room temperature
    thermal = heater.thermal
    assert thermal.config.medium == "oil" and thermal.medium_mass_kg == 0.2
    assert thermal.pan_c == hot_pan and thermal.medium_c == pytest.approx(20.0)
    assert heater.mode is HeaterMode.POWER and heater.power_w == 1500.0  # the command in force stays
    heater.step(30.0)
    warm_oil = heater.thermal.medium_c
    heater.set_contents("oil", 0.4, lid=True)  # more of the same: the oil keeps its temperature
    assert heater.thermal.medium_c == warm_oil and heater.thermal.medium_mass_kg == 0.4 and heater.thermal.config.lid
    assert heater.time == pytest.approx(90.0)


def test_new_contents_carry_sensor_faults_and_bad_contents_name_the_field():
    heater = make("water")
    heater.set_sensor_fault("medium", SensorFault.DISCONNECTED)
    heater.set_contents("water", 2.0, lid=False)
    assert math.isnan(heater.thermal.readings().medium_temp_c)
    with pytest.raises(ValueError, match="medium_mass_kg"):
        heater.set_contents("water", -1.0, lid=False)
    with pytest.raises(ValueError, match="medium"):
        heater.set_contents("soup", 1.0, lid=False)
    assert heater.thermal.medium_mass_kg == 2.0  # a refused change leaves the pot as it was
