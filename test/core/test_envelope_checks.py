"""Envelopes: bands, altitude, heat levels, node numbers and trace checks."""

from __future__ import annotations

from fractions import Fraction

import pytest

from cookwala_ros.core import envelope


def test_altitude_shift_is_linear_and_exact():
    assert envelope.band("cw.op.boil", 300) == envelope.Band(Fraction(97), Fraction(101))
    b = envelope.band("cw.op.boil", 299)
    assert b.lo == Fraction(98) - Fraction(299, 300)
    assert 97 not in b and 97.01 in b
    assert envelope.band("cw.op.boil", -300).hi == 103
    assert envelope.band("cw.op.steam", 600) == envelope.Band(Fraction(93), Fraction(100))
    # other media never shift
    assert envelope.band("cw.op.deep_fry", 3000) == envelope.band("cw.op.deep_fry", 0)
    assert envelope.band("cw.op.pressure_cook", 3000) == envelope.band("cw.op.pressure_cook", 0)
    assert envelope.band("cw.op.cut") is None


@pytest.mark.parametrize("bad", ["1500", float("inf"), True, [1]])
def test_altitude_must_be_a_number(bad):
    with pytest.raises(ValueError, match="altitudeM"):
        envelope.band("cw.op.boil", bad)


def test_heat_levels():
    assert envelope.heat_level_can_hold("cw.op.saute", "medium")
    assert not envelope.heat_level_can_hold("cw.op.saute", "max")
    assert not envelope.heat_level_can_hold("cw.op.sear", "very_low")


def test_node_problem_names_the_field():
    fry = lambda **p: {"id": "n", "op": "cw.op.deep_fry", "params": p}
    assert envelope.node_problem("cw.op.deep_fry", fry(oilTempC=175)) is None
    assert "oilTempC 260" in envelope.node_problem("cw.op.deep_fry", fry(oilTempC=260))
    assert "not a finite number" in envelope.node_problem("cw.op.deep_fry", fry(oilTempC="185"))
    assert "not a finite number" in envelope.node_problem("cw.op.deep_fry", fry(tempC=float("nan")))
    assert "heat level" in envelope.node_problem("cw.op.saute", {"params": {"heat": "max"}})
    assert "pressure" in envelope.node_problem("cw.op.pressure_cook", {"params": {"pressureKPa": 101}})
    assert envelope.node_problem("cw.op.pressure_cook", {"params": {"pressureKPa": 100}}) is None


def test_targets_only_count_on_the_medium_sensor():
    core = {"params": {"target": {"sensor": "cw.sense.core_temp", "value": 71, "unit": "degC"}}}
    air = {"params": {"target": {"sensor": "cw.sense.oven_temp", "value": 71, "unit": "degC"}}}
    vendor = {"params": {"target": {"sensor": "x-acme.air", "value": 71, "unit": "degC"}}}
    assert envelope.node_problem("cw.op.bake", core) is None
    assert "target 71" in envelope.node_problem("cw.op.bake", air)
    assert "target 71" in envelope.node_problem("cw.op.bake", vendor)  # unknown sensors are checked


def test_boil_target_at_altitude():
    node = {"params": {"target": {"sensor": "cw.sense.liquid_temp", "value": 100, "unit": "degC", "tolerance": 2}}}
    assert envelope.node_problem("cw.op.boil", node, 0) is None
    assert "93–97" in envelope.node_problem("cw.op.boil", node, 1500)


def _trace(*temps):
    return [{"t": i * 30, "tempC": t} for i, t in enumerate(temps)]


def test_trace_reference_semantics_ignores_warm_up():
    assert envelope.check_trace("cw.op.simmer", _trace(120, 95, 94))["reason"] == "ok"
    assert envelope.check_trace("cw.op.simmer", _trace(40, 70, 90, 97))["reason"] == "left_envelope"
    assert envelope.check_trace("cw.op.simmer", _trace(40, 70))["reason"] == "never_reached_envelope"


def test_strict_trace_counts_overshoot_during_warm_up():
    result = envelope.check_trace("cw.op.simmer", _trace(120, 95, 94), strict=True)
    assert result == {"envelopeOk": False, "targetOk": None, "reason": "left_envelope"}
    assert envelope.check_trace("cw.op.simmer", _trace(40, 95, 94), strict=True)["reason"] == "ok"


def test_trace_target_rules():
    target = {"value": 94, "tolerance": 1}
    assert envelope.check_trace("cw.op.simmer", _trace(80, 94, 95), target)["targetOk"] is True
    assert envelope.check_trace("cw.op.simmer", _trace(80, 94, 90), target)["reason"] == "missed_target"
    assert envelope.check_trace("cw.op.simmer", _trace(80, 94), {"value": 99})["reason"] == "target_outside_envelope"
    assert envelope.check_trace("cw.op.simmer", _trace(80, "x"))["reason"] == "non_numeric_reading"
    assert envelope.check_trace("cw.op.mix", _trace(20))["reason"] == "no_thermal_envelope"
