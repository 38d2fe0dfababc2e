"""Exact kitchen units, conversions, tolerances and money (CORE §4).

Kitchen units have exact metric values (tsp 5 ml, tbsp 15 ml, cup 240 ml, pinch 0.36 g,
dash 0.6 ml), so conversions are done with fractions and rounded only at the edge. Volume and
mass are different dimensions: crossing between them needs a density, never a guess. Money is
a decimal string and is handled as `Decimal`, never as a binary float.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from cookwala_ros.core import vocab

# Every unit allowed on the wire, and the subset on a ratio scale (zero means none).
WIRE_UNITS = frozenset({
    "g", "kg", "mg", "ml", "l", "tsp", "tbsp", "cup", "pinch", "dash", "pcs",
    "degC", "W", "kW", "mm", "cm", "rpm", "Pa", "kPa", "pct", "s",
})
RATIO_UNITS = WIRE_UNITS - {"degC"}

# Base units of the dimensions, and the non-kitchen multiples we also convert.
_BASES = {"g": "mass", "ml": "volume", "pcs": "count", "degC": "temperature", "W": "power",
          "mm": "length", "rpm": "speed", "Pa": "pressure", "pct": "fraction", "s": "time"}
_OTHER_MULTIPLES = {"kW": ("W", 1000), "cm": ("mm", 10), "kPa": ("Pa", 1000)}


class UnitError(ValueError):
    """A conversion that cannot be done; `code` is the machine-readable reason."""

    code = "unit_error"


class UnknownUnit(UnitError):
    code = "unknown_unit"


class NeedsDensity(UnitError):
    """Volume <-> mass without a density: an error, never a guess (CORE §4)."""

    code = "needs_density"


class IncompatibleUnits(UnitError):
    code = "incompatible_units"


def _exact(x: Any) -> Fraction:
    if isinstance(x, bool) or not isinstance(x, (int, float, Decimal, Fraction, str)):
        raise UnitError(f"not a number: {x!r}")
    if isinstance(x, float) and not math.isfinite(x):
        raise UnitError(f"not a finite number: {x!r}")
    # str(float) is the shortest decimal that round-trips: 0.36 stays exactly 36/100.
    return Fraction(str(x)) if isinstance(x, float) else Fraction(x)


def to_base(unit: str) -> tuple[str, Fraction]:
    """(base unit, exact factor) of a wire unit: `tbsp` -> ('ml', 15)."""
    if unit in _BASES:
        return unit, Fraction(1)
    if unit in _OTHER_MULTIPLES:
        base, factor = _OTHER_MULTIPLES[unit]
        return base, Fraction(factor)
    try:
        record = vocab.unit(unit)
    except vocab.UnknownVocabularyId:
        raise UnknownUnit(f"unknown unit: {unit!r}") from None
    return record["base"], _exact(record["factor"])


def dimension(unit: str) -> str:
    return _BASES[to_base(unit)[0]]


def convert_exact(value: Any, unit: str, to: str, density_g_per_ml: Any = None) -> Fraction:
    """Convert `value` from `unit` to `to` exactly; volume<->mass uses the density (g/ml)."""
    amount = _exact(value)
    base_from, f_from = to_base(unit)
    base_to, f_to = to_base(to)
    amount *= f_from
    if base_from != base_to:
        if {base_from, base_to} != {"g", "ml"}:
            raise IncompatibleUnits(f"cannot convert {unit} ({_BASES[base_from]}) to {to} ({_BASES[base_to]})")
        if density_g_per_ml is None:
            raise NeedsDensity(f"converting {unit} to {to} needs a density (densityGPerMl)")
        density = _exact(density_g_per_ml)
        if density <= 0:
            raise UnitError(f"density must be > 0 g/ml, got {density_g_per_ml!r}")
        amount = amount * density if base_from == "ml" else amount / density
    return amount / f_to


def convert(value: Any, unit: str, to: str, density_g_per_ml: Any = None, digits: int = 6) -> float | int:
    """`convert_exact` rounded to `digits` decimals; whole results come back as int."""
    exact = convert_exact(value, unit, to, density_g_per_ml)
    rounded = round(exact, digits)
    return int(rounded) if rounded.denominator == 1 else float(rounded)


def convert_quantity(quantity: dict, to: str) -> float | int:
    """Convert a Quantity dict, using its own `densityGPerMl` when crossing volume and mass."""
    return convert(quantity["value"], quantity["unit"], to, quantity.get("densityGPerMl"))


# ------------------------------------------------------------------ tolerances and Quantity

_QUANTITY_FIELDS = {"value", "unit", "tolerance", "toleranceAbs", "pieces", "massPerPiece", "densityGPerMl"}


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def quantity_problems(q: Any, pointer: str = "") -> list[str]:
    """Why `q` is not a valid Quantity, as '<json pointer>: <problem>' strings (empty = valid).

    Relative `tolerance` is allowed only on ratio-scale units (never °C); `toleranceAbs` is the
    absolute form and the only one allowed on °C; the two never appear together.
    """
    if not isinstance(q, dict):
        return [f"{pointer or '/'}: a quantity must be an object"]
    out = []
    for key in q:
        if key not in _QUANTITY_FIELDS and not key.startswith("x-"):
            out.append(f"{pointer}/{key}: unknown field")
    if "value" not in q:
        out.append(f"{pointer}/value: required")
    elif not _is_number(q["value"]) or q["value"] < 0:
        out.append(f"{pointer}/value: must be a number >= 0")
    unit = q.get("unit")
    if "unit" not in q:
        out.append(f"{pointer}/unit: required")
    elif unit not in WIRE_UNITS:
        out.append(f"{pointer}/unit: unknown unit {unit!r}")
    if "tolerance" in q:
        tol = q["tolerance"]
        if not _is_number(tol) or not 0 <= tol <= 1:
            out.append(f"{pointer}/tolerance: must be a number in [0, 1]")
        if unit not in RATIO_UNITS:
            out.append(f"{pointer}/tolerance: a relative tolerance is not allowed on {unit!r}; use toleranceAbs")
        if "toleranceAbs" in q:
            out.append(f"{pointer}: tolerance and toleranceAbs are mutually exclusive")
    if "toleranceAbs" in q and (not _is_number(q["toleranceAbs"]) or q["toleranceAbs"] < 0):
        out.append(f"{pointer}/toleranceAbs: must be a number >= 0")
    if "pieces" in q and (not _is_number(q["pieces"]) or q["pieces"] < 0):
        out.append(f"{pointer}/pieces: must be a number >= 0")
    if "densityGPerMl" in q and (not _is_number(q["densityGPerMl"]) or q["densityGPerMl"] <= 0):
        out.append(f"{pointer}/densityGPerMl: must be a number > 0")
    if "massPerPiece" in q:
        out.extend(quantity_problems(q["massPerPiece"], f"{pointer}/massPerPiece"))
    return out


def is_valid_quantity(q: Any) -> bool:
    return not quantity_problems(q)


def within_tolerance(q: dict, measured: float) -> bool:
    """Whether a measured value (in the quantity's unit) meets the quantity and its tolerance."""
    value = q["value"]
    if "toleranceAbs" in q:
        return abs(measured - value) <= q["toleranceAbs"]
    if "tolerance" in q:
        if q["unit"] not in RATIO_UNITS:
            raise UnitError(f"relative tolerance on {q['unit']!r}")
        return abs(measured - value) <= abs(value) * q["tolerance"]
    return measured == value


# ------------------------------------------------------------------ money

_DECIMAL = re.compile(r"^-?[0-9]{1,15}(\.[0-9]{1,6})?$")
_CURRENCY = re.compile(r"^[A-Z]{3}$")


@dataclass(frozen=True)
class Money:
    amount: Decimal
    currency: str

    def to_wire(self) -> dict:
        return {"amount": format_decimal(self.amount), "currency": self.currency}

    def __add__(self, other: "Money") -> "Money":
        if not isinstance(other, Money) or other.currency != self.currency:
            raise ValueError("money can only be added in the same currency")
        return Money(self.amount + other.amount, self.currency)


def parse_decimal(text: Any, pointer: str = "/amount") -> Decimal:
    """A wire decimal string as Decimal; numbers (floats especially) are refused."""
    if not isinstance(text, str) or not _DECIMAL.match(text):
        raise ValueError(f"{pointer}: must be a decimal string like \"12.70\", got {text!r}")
    try:
        return Decimal(text)
    except InvalidOperation:  # pragma: no cover - the pattern already guarantees a decimal
        raise ValueError(f"{pointer}: not a decimal: {text!r}") from None


def format_decimal(amount: Decimal) -> str:
    """Decimal -> wire string, keeping its scale ("12.70" stays "12.70")."""
    text = format(amount, "f")
    if not _DECIMAL.match(text):
        raise ValueError(f"amount {text} does not fit the wire format (15 digits, 6 decimals)")
    return text


def parse_money(doc: Any, pointer: str = "") -> Money:
    if not isinstance(doc, dict):
        raise ValueError(f"{pointer or '/'}: money must be an object with amount and currency")
    currency = doc.get("currency")
    if not isinstance(currency, str) or not _CURRENCY.match(currency):
        raise ValueError(f"{pointer}/currency: must be an ISO 4217 code like \"EGP\", got {currency!r}")
    return Money(parse_decimal(doc.get("amount"), f"{pointer}/amount"), currency)


# ------------------------------------------------------------------ conformance handler

def vector_units(data: dict) -> dict:
    """Conformance handler for `units` vectors: a conversion, or a quantity's validity."""
    if "quantity" in data:
        return {"schemaValid": is_valid_quantity(data["quantity"])}
    try:
        return {"value": convert(data["value"], data["unit"], data["to"], data.get("density"))}
    except UnitError as exc:
        return {"error": exc.code}
