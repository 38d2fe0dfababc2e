"""Read-only access to the vocabulary data packaged in `cookwala_ros/core/vocabulary/`.

Operations, envelopes, kitchen units, heat levels, sensors, equipment classes, hazards and
incident types are loaded once and cached: the data never changes while a process runs, and
every check in `core` looks ids up here instead of carrying its own copy of the standard's
numbers.
"""

from __future__ import annotations

import functools
import json
import pathlib
from typing import Any

DATA_DIR = pathlib.Path(__file__).resolve().parent / "vocabulary"

# Media whose boiling point moves with altitude (CORE §3: water and steam bands shift).
ALTITUDE_MEDIA = frozenset({"water", "steam"})
# Ladder rungs that are not sensors.
NON_SENSOR_RUNGS = frozenset({"model", "time", "human"})
# Equipment classes under this prefix are heat sources (a hob, an oven).
HEAT_SOURCE_PREFIX = "cw.eq.heat."


class UnknownVocabularyId(KeyError):
    """An id that the packaged vocabulary does not define."""

    def __init__(self, kind: str, value: Any):
        super().__init__(f"unknown {kind} id: {value!r}")
        self.kind = kind
        self.value = value

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


@functools.lru_cache(maxsize=None)
def load(name: str) -> dict:
    """One data file of the vocabulary folder, parsed (cached; do not mutate the result)."""
    path = DATA_DIR / name
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def operations() -> dict[str, dict]:
    """All operation records keyed by id (`cw.op.*`)."""
    return load("operations.json")["operations"]


def op(op_id: str) -> dict:
    """The operation record for `op_id`; raises UnknownVocabularyId when it is not defined."""
    try:
        return operations()[op_id]
    except (KeyError, TypeError):
        raise UnknownVocabularyId("operation", op_id) from None


def is_known_op(op_id: Any) -> bool:
    return isinstance(op_id, str) and op_id in operations()


def envelope(op_id: str) -> dict | None:
    """The physical envelope of an operation, or None for operations without one."""
    return op(op_id).get("envelope")


def is_executable(op_id: str) -> bool:
    """False for operations a device may never run (e.g. the imported legacy step)."""
    return bool(op(op_id).get("executable", True))


def heat_levels() -> dict[str, tuple[float, float]]:
    """Hob heat level name -> pan-surface band (min, max) in °C."""
    return {name: tuple(band) for name, band in load("measures.json")["heatLevels"].items()}


def heat_level(name: str) -> tuple[float, float]:
    """Pan-surface band (min, max) °C of a heat level; accepts `medium` or `cw.heat.medium`."""
    short = name.rsplit(".", 1)[-1] if isinstance(name, str) else name
    try:
        return heat_levels()[short]
    except (KeyError, TypeError):
        raise UnknownVocabularyId("heat level", name) from None


def kitchen_units() -> dict[str, dict]:
    """Unit symbol -> {'base': metric base unit, 'factor': exact factor}."""
    return load("measures.json")["kitchenUnits"]


def unit(unit_id: str) -> dict:
    """Conversion record of a unit (`tbsp` or `cw.unit.tbsp`)."""
    short = unit_id.rsplit(".", 1)[-1] if isinstance(unit_id, str) else unit_id
    try:
        return kitchen_units()[short]
    except (KeyError, TypeError):
        raise UnknownVocabularyId("unit", unit_id) from None


def sensor_ids() -> frozenset[str]:
    return frozenset(load("sensors.json")["sensors"])


def sensor_aliases() -> dict[str, str]:
    return load("sensors.json")["aliases"]


def canonical_sensor(sensor_id: str) -> str:
    """The canonical id of a sensor (project decision 7: oven_temp == oven_air_temp).

    Unknown and vendor (`x-…`) ids are returned unchanged: a device may declare sensors the
    vocabulary does not list.
    """
    return sensor_aliases().get(sensor_id, sensor_id)


def sensor_quantity(sensor_id: str) -> str | None:
    """What a sensor measures, as a dimension of core/units.py (`temperature`, `mass`, ...); None
    when the standard has no unit for its reading (vision, boil detection). Aliases resolve."""
    canonical = canonical_sensor(sensor_id)
    for quantity, ids in load("sensors.json")["quantities"].items():
        if canonical in ids:
            return None if quantity == "none" else quantity
    raise UnknownVocabularyId("sensor", sensor_id)


def sensor(sensor_id: str) -> str:
    """Canonical id of a vocabulary sensor; raises UnknownVocabularyId for unknown `cw.` ids."""
    if isinstance(sensor_id, str) and (sensor_id in sensor_ids() or sensor_id.startswith("x-")):
        return canonical_sensor(sensor_id)
    raise UnknownVocabularyId("sensor", sensor_id)


def equipment_classes() -> frozenset[str]:
    """The equipment class ids (`cw.eq.*`) the standard names: heat sources, vessels, tools."""
    return frozenset(load("equipment_classes.json")["classes"])


def heat_source_classes() -> frozenset[str]:
    """The equipment classes that are heat sources (`cw.eq.heat.*`): what a device's heaters are."""
    return frozenset(c for c in equipment_classes() if c.startswith(HEAT_SOURCE_PREFIX))


def hazards() -> frozenset[str]:
    return frozenset(load("hazards.json")["hazards"])


def incident_types() -> tuple[str, ...]:
    return tuple(load("incident_types.json")["incidentTypes"])
