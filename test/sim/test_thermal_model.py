"""Thermal model against closed-form results (the acceptance criteria of the simulated hob)."""

from __future__ import annotations

import math

import pytest

from cookwala_ros.sim.thermal_model import (
    MEDIA,
    PAN_SPECIFIC_HEAT,
    SOURCE_EFFICIENCY,
    WATER_LATENT_HEAT,
    SensorFault,
    ThermalConfig,
    ThermalModel,
    boiling_point_c,
)

POWER_W = 2000.0
INDUCTION = 0.85


def heat(model: ThermalModel, until, step=0.1, limit_s=7200.0):
    while not until(model):
        model.step(step)
        assert model.time < limit_s, "condition never reached"
    return model.time


def test_efficiencies_are_the_knowledge_base_midpoints(spec_dir):
    import json

    entries = json.loads((spec_dir / "knowledge" / "energy.json").read_text())["entries"]
    by_source = {}
    for entry in entries:
        by_source.setdefault(entry["source"], entry["efficiency"])  # first entry per source
    for source, efficiency in SOURCE_EFFICIENCY.items():
        expected = by_source[source]
        assert efficiency == pytest.approx((expected["min"] + expected["max"]) / 2), source
    assert SOURCE_EFFICIENCY["electric_induction"] == pytest.approx(INDUCTION)


def test_water_reaches_boiling_in_the_closed_form_time_without_losses():
    model = ThermalModel(ThermalConfig(medium="water", medium_mass_kg=1.0, losses=False, initial_temp_c=20.0))
    model.set_power(POWER_W)
    t = heat(model, lambda m: m.medium_c >= 100.0, step=0.05)
    capacity = 1.0 * MEDIA["water"].specific_heat + 1.0 * PAN_SPECIFIC_HEAT  # water + pan [J/K]
    expected = capacity * (100.0 - 20.0) / (POWER_W * INDUCTION)
    assert t == pytest.approx(expected, rel=0.02)


def test_energy_is_conserved_while_heating_and_boiling():
    model = ThermalModel(ThermalConfig(medium="water", medium_mass_kg=0.5, losses=True))
    start = model.stored_energy_j()
    model.set_power(1500.0)
    model.step(900.0)  # heats up, then boils for several minutes
    assert model.evaporated_kg > 0.1
    assert model.heat_in_j == pytest.approx(1500.0 * INDUCTION * 900.0)
    assert model.stored_energy_j() - start == pytest.approx(model.heat_in_j - model.losses_j, rel=1e-9)


@pytest.mark.parametrize("altitude_m, boiling_c", [(0.0, 100.0), (1500.0, 95.0)])
def test_water_plateaus_at_the_altitude_boiling_point_and_evaporates_at_p_eta_over_l(altitude_m, boiling_c):
    assert boiling_point_c(altitude_m) == pytest.approx(boiling_c)
    model = ThermalModel(ThermalConfig(medium="water", medium_mass_kg=1.0, altitude_m=altitude_m, losses=True))
    model.set_power(POWER_W)
    heat(model, lambda m: m.boiling)
    model.step(120.0)  # let the pan settle
    highest = model.medium_c
    mass_before, t_before = model.medium_mass_kg, model.time
    for _ in range(300):
        model.step(1.0)
        highest = max(highest, model.medium_c)
    assert highest == pytest.approx(boiling_c, abs=1e-9)  # never above the boiling point
    assert model.medium_c == pytest.approx(boiling_c, abs=1e-9)
    rate = (mass_before - model.medium_mass_kg) / (model.time - t_before)
    assert rate == pytest.approx(POWER_W * INDUCTION / WATER_LATENT_HEAT, rel=0.05)


def test_lid_reduces_heat_loss_at_a_simmer():
    rates = {}
    for lid in (False, True):
        model = ThermalModel(ThermalConfig(medium="water", medium_mass_kg=1.0, initial_temp_c=99.0, lid=lid))
        model.set_power(400.0)
        model.step(600.0)
        start = model.evaporated_kg
        model.step(600.0)
        rates[lid] = (model.evaporated_kg - start) / 600.0
    assert rates[True] > rates[False] > 0


def test_oil_passes_180_and_keeps_rising_past_its_smoke_point():
    model = ThermalModel(ThermalConfig(medium="oil", medium_mass_kg=0.92, oil_smoke_point_c=230.0))  # 1 L of oil
    model.set_power(POWER_W)
    t180 = heat(model, lambda m: m.medium_c >= 180.0)
    assert t180 < 600.0
    heat(model, lambda m: m.smoking)
    at_smoke = model.medium_c
    model.step(60.0)
    assert model.medium_c > at_smoke + 5.0 and model.smoking
    assert model.evaporated_kg == 0.0 and model.medium_mass_kg == pytest.approx(0.92)


def test_water_boils_dry_and_then_the_pan_overheats():
    model = ThermalModel(ThermalConfig(medium="water", medium_mass_kg=0.1))
    model.set_power(POWER_W)
    heat(model, lambda m: m.dry)
    assert model.evaporated_kg == pytest.approx(0.1)
    model.step(60.0)
    assert model.pan_c > 150.0 and model.medium_c == model.pan_c


def test_cooling_without_power_with_losses_only():
    model = ThermalModel(ThermalConfig(medium="water", initial_temp_c=90.0, losses=False))
    model.step(600.0)
    assert model.medium_c == pytest.approx(90.0)
    model = ThermalModel(ThermalConfig(medium="water", initial_temp_c=90.0, losses=True))
    model.step(600.0)
    assert 20.0 < model.medium_c < 89.0


def test_empty_pan_heats_as_one_mass():
    model = ThermalModel(ThermalConfig(medium="pan_surface", losses=False))
    model.set_power(1000.0)
    model.step(10.0)
    assert model.pan_c == pytest.approx(20.0 + 1000.0 * INDUCTION * 10.0 / PAN_SPECIFIC_HEAT)
    assert model.medium_c == model.pan_c


def test_sensor_faults():
    model = ThermalModel(ThermalConfig(medium="water"))
    model.set_power(POWER_W)
    model.step(30.0)
    model.set_sensor_fault("medium", SensorFault.DISCONNECTED)
    model.set_sensor_fault("pan", SensorFault.STUCK)
    stuck_at = model.pan_c
    model.step(30.0)
    r = model.readings()
    assert math.isnan(r.medium_temp_c) and not r.medium_ok
    assert r.pan_temp_c == stuck_at and r.pan_ok and model.pan_c > stuck_at + 1.0
    model.set_sensor_fault("medium", SensorFault.NONE)
    assert model.readings().medium_temp_c == model.medium_c


@pytest.mark.parametrize(
    "config, field",
    [
        (ThermalConfig(medium="soup"), "medium"),
        (ThermalConfig(medium_mass_kg=0.0), "medium_mass_kg"),
        (ThermalConfig(heat_source="fusion"), "heat_source"),
        (ThermalConfig(efficiency=1.5), "efficiency"),
        (ThermalConfig(initial_temp_c=120.0), "initial_temp_c"),
        (ThermalConfig(altitude_m=20000.0), "altitude_m"),
    ],
)
def test_bad_configuration_names_the_field(config, field):
    with pytest.raises(ValueError, match=field):
        ThermalModel(config)
