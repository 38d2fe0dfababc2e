"""Exact kitchen units, density rules, tolerances and decimal money."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest

from cookwala_ros.core import units


def test_kitchen_units_are_exact():
    assert units.convert_exact(1, "tsp", "ml") == 5
    assert units.convert_exact(1, "tbsp", "ml") == 15
    assert units.convert_exact(1, "cup", "ml") == 240
    assert units.convert_exact(1, "pinch", "g") == Fraction(36, 100)
    assert units.convert_exact(1, "dash", "ml") == Fraction(6, 10)
    # exact arithmetic: 3 dashes are 1.8 ml, not 1.7999999999999998
    assert units.convert(3, "dash", "ml") == 1.8
    assert units.convert_exact(1, "tsp", "tbsp") == Fraction(1, 3)


def test_whole_results_are_ints_and_others_round_to_six_places():
    assert units.convert(2, "tbsp", "ml") == 30 and isinstance(units.convert(2, "tbsp", "ml"), int)
    assert units.convert(1, "l", "cup") == 4.166667


def test_volume_mass_needs_density():
    with pytest.raises(units.NeedsDensity) as info:
        units.convert(1, "cup", "g")
    assert info.value.code == "needs_density"
    assert units.convert(1, "cup", "g", 0.53) == 127.2
    assert units.convert(127.2, "g", "cup", 0.53) == 1
    with pytest.raises(units.UnitError, match="density"):
        units.convert(1, "cup", "g", 0)


def test_quantity_uses_its_own_density():
    assert units.convert_quantity({"value": 2, "unit": "tbsp", "densityGPerMl": 0.92}, "g") == 27.6
    with pytest.raises(units.NeedsDensity):
        units.convert_quantity({"value": 2, "unit": "tbsp"}, "g")


def test_other_dimensions_never_convert():
    with pytest.raises(units.IncompatibleUnits):
        units.convert(1, "g", "degC", 1.0)
    with pytest.raises(units.IncompatibleUnits):
        units.convert(1, "pcs", "g")
    with pytest.raises(units.UnknownUnit, match="degF"):
        units.convert(350, "degF", "degC")
    with pytest.raises(units.UnitError):
        units.convert(True, "g", "kg")
    with pytest.raises(units.UnitError):
        units.convert(float("nan"), "g", "kg")
    assert units.dimension("tbsp") == "volume" and units.dimension("pinch") == "mass"


def test_quantity_tolerance_rules():
    assert units.is_valid_quantity({"value": 200, "unit": "g", "tolerance": 0.1})
    assert units.is_valid_quantity({"value": 94, "unit": "degC", "toleranceAbs": 3})
    problems = units.quantity_problems({"value": 94, "unit": "degC", "tolerance": 0.05})
    assert problems == ["/tolerance: a relative tolerance is not allowed on 'degC'; use toleranceAbs"]
    assert units.quantity_problems({"value": 1, "unit": "g", "massPerPiece": {"value": 1, "unit": "g", "bad": 1}}) == \
        ["/massPerPiece/bad: unknown field"]
    assert not units.is_valid_quantity({"value": 1, "unit": "g", "tolerance": 0.1, "toleranceAbs": 1})


def test_within_tolerance():
    assert units.within_tolerance({"value": 200, "unit": "g", "tolerance": 0.1}, 219)
    assert not units.within_tolerance({"value": 200, "unit": "g", "tolerance": 0.1}, 221)
    assert units.within_tolerance({"value": 94, "unit": "degC", "toleranceAbs": 3}, 91)
    assert not units.within_tolerance({"value": 94, "unit": "degC", "toleranceAbs": 3}, 90.9)
    with pytest.raises(units.UnitError):
        units.within_tolerance({"value": 94, "unit": "degC", "tolerance": 0.1}, 94)


def test_money_is_decimal_never_float():
    money = units.parse_money({"amount": "12.70", "currency": "EGP"})
    assert money.amount == Decimal("12.70")
    assert (money + units.parse_money({"amount": "0.30", "currency": "EGP"})).to_wire() == {"amount": "13.00", "currency": "EGP"}
    for bad in (12.7, "12,70", "1e3", "12.1234567", ""):
        with pytest.raises(ValueError, match="/amount"):
            units.parse_money({"amount": bad, "currency": "EGP"})
    with pytest.raises(ValueError, match="/currency"):
        units.parse_money({"amount": "1.00", "currency": "egp"})
    with pytest.raises(ValueError, match="same currency"):
        units.parse_money({"amount": "1", "currency": "EGP"}) + units.parse_money({"amount": "1", "currency": "USD"})


def test_vector_handler_shapes():
    assert units.vector_units({"value": 2, "unit": "tbsp", "to": "ml"}) == {"value": 30}
    assert units.vector_units({"value": 1, "unit": "cup", "to": "g"}) == {"error": "needs_density"}
    assert units.vector_units({"quantity": {"value": 1, "unit": "degC", "tolerance": 0.1}}) == {"schemaValid": False}
