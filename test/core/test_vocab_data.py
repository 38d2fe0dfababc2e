"""Our packaged vocabulary equals the standard's ids and numbers, field by field."""

from __future__ import annotations

import json
import pathlib
import re

import pytest

from cookwala_ros.core import vocab

UPSTREAM_NAMES = {"ops.json", "units.json", "incidents.json", "facets.json", "transitions.json",
                  "safety-limits.default.json"}


def _entries(spec_dir: pathlib.Path, name: str) -> dict:
    return {e["id"]: e for e in json.loads((spec_dir / "vocab" / name).read_text())["entries"]}


def test_operation_ids_match_the_standard(spec_dir):
    assert set(vocab.operations()) == set(_entries(spec_dir, "ops.json"))
    assert len(vocab.operations()) == 57


def test_every_operation_field_matches(spec_dir):
    for op_id, theirs in _entries(spec_dir, "ops.json").items():
        ours = vocab.op(op_id)
        assert ours["executable"] == theirs.get("executable", True), op_id
        assert ours["sensors"] == theirs.get("sensors", []), op_id
        assert ours["families"] == [c.split(".")[-1] for c in theirs.get("classes", [])], op_id
        assert set(ours["params"]) == set(theirs.get("paramsSchema", {}).get("properties", {})), op_id
        env = theirs.get("envelope")
        if env is None:
            assert "envelope" not in ours, op_id
            continue
        mine = ours["envelope"]
        assert mine["medium"] == env["medium"], op_id
        assert mine.get("tempBandC") == ([env["tempC"]["min"], env["tempC"]["max"]] if "tempC" in env else None), op_id
        assert mine.get("pressureBandKPa") == (
            [env["pressureKPa"]["min"], env["pressureKPa"]["max"]] if "pressureKPa" in env else None), op_id
        for field, theirs_field in (("agitation", "agitation"), ("lid", "lid"), ("attention", "attention"),
                                    ("unattended", "unattended"), ("hazards", "hazards"), ("ladder", "sensorLadder")):
            assert mine.get(field) == env.get(theirs_field), (op_id, field)
        expected_method = pathlib.PurePosixPath(env["testMethod"]).stem if "testMethod" in env else None
        assert mine.get("testMethod") == expected_method, op_id


def test_kitchen_units_and_heat_levels_match(spec_dir):
    units = _entries(spec_dir, "units.json")
    converted = {i.split(".")[-1]: e["convert"] for i, e in units.items() if "convert" in e}
    assert set(vocab.kitchen_units()) == set(converted)
    for name, conv in converted.items():
        assert vocab.unit(name) == {"base": conv["to"], "factor": conv["factor"]}, name
    levels = {i.split(".")[-1]: e["surfaceTempC"] for i, e in units.items() if "surfaceTempC" in e}
    assert set(vocab.heat_levels()) == set(levels)
    for name, band in levels.items():
        assert vocab.heat_level(f"cw.heat.{name}") == (band["min"], band["max"])


def test_incident_types_match(spec_dir):
    theirs = list(_entries(spec_dir, "incidents.json"))
    assert list(vocab.incident_types()) == theirs


def test_every_sensor_and_hazard_named_by_an_operation_is_known(spec_dir):
    for op_id, theirs in _entries(spec_dir, "ops.json").items():
        env = theirs.get("envelope", {})
        for sensor_id in theirs.get("sensors", []) + [r for r in env.get("sensorLadder", []) if r.startswith("cw.")]:
            assert sensor_id in vocab.sensor_ids(), (op_id, sensor_id)
        assert set(env.get("hazards", [])) <= vocab.hazards(), op_id


_EQUIPMENT_CLASS = re.compile(r"cw\.eq\.[a-z0-9_]+(?:\.[a-z0-9_]+)*")


def _equipment_classes_named(spec_dir: pathlib.Path) -> set[str]:
    """The standard has no equipment vocabulary file: its equipment classes are the `cw.eq.*` ids
    its schemas, examples, docs and data name."""
    named = set()
    for path in spec_dir.rglob("*"):
        if path.is_file() and path.suffix in {".json", ".jsonld", ".md", ".yaml"}:
            named |= set(_EQUIPMENT_CLASS.findall(path.read_text(encoding="utf-8")))
    return named


def test_equipment_classes_match_the_standard(spec_dir):
    assert vocab.equipment_classes() == _equipment_classes_named(spec_dir)


def test_heat_sources_are_the_heat_equipment_classes():
    heat = vocab.heat_source_classes()
    assert "cw.eq.heat.hob" in heat and "cw.eq.vessel.pot.sauce" not in heat
    assert heat < vocab.equipment_classes() and all(c.startswith("cw.eq.heat.") for c in heat)


def test_mission_table_matches(spec_dir):
    theirs = json.loads((spec_dir / "profiles" / "mission" / "transitions.json").read_text())
    ours = vocab.load("mission_states.json")
    assert ours["initial"] == theirs["initial"] and ours["final"] == theirs["final"]
    flat = {(f, t): roles for f, targets in ours["moves"].items() for t, roles in targets.items()}
    assert flat == {(t["from"], t["to"]): t["allowedRoles"] for t in theirs["transitions"]}


def test_default_safety_pack_matches(spec_dir):
    theirs = json.loads((spec_dir / "profiles" / "core" / "safety-limits.default.json").read_text())
    ours = vocab.load("safety_defaults.json")
    assert ours["id"] == theirs["id"] and ours["core"] == theirs["core"]
    fields = ("id", "kind", "action", "appliesTo", "min", "max", "unit", "holdFor")
    assert [{k: l.get(k) for k in fields} for l in ours["limits"]] == \
        [{k: l.get(k) for k in fields} for l in theirs["limits"]]


def test_oven_sensor_alias():
    assert vocab.canonical_sensor("cw.sense.oven_temp") == vocab.canonical_sensor("cw.sense.oven_air_temp")
    assert vocab.sensor("cw.sense.oven_temp") == "cw.sense.oven_air_temp"
    assert vocab.canonical_sensor("x-acme.probe") == "x-acme.probe"
    with pytest.raises(vocab.UnknownVocabularyId, match="cw.sense.telepathy"):
        vocab.sensor("cw.sense.telepathy")


def test_every_sensor_has_one_quantity_with_units_of_the_standard():
    from cookwala_ros.core import units

    groups = vocab.load("sensors.json")["quantities"]
    listed = [s for ids in groups.values() for s in ids]
    canonical = {vocab.canonical_sensor(s) for s in vocab.sensor_ids()}
    assert sorted(listed) == sorted(canonical)  # each canonical sensor once, aliases resolve
    dimensions = {units.dimension(u) for u in units.WIRE_UNITS}
    assert set(groups) - {"none"} <= dimensions
    assert vocab.sensor_quantity("cw.sense.oven_temp") == vocab.sensor_quantity("cw.sense.liquid_temp") == "temperature"
    assert vocab.sensor_quantity("cw.sense.vision") is None


def test_lookups_name_the_unknown_id():
    with pytest.raises(vocab.UnknownVocabularyId, match="cw.op.levitate"):
        vocab.op("cw.op.levitate")
    with pytest.raises(vocab.UnknownVocabularyId, match="volcano"):
        vocab.heat_level("volcano")
    with pytest.raises(vocab.UnknownVocabularyId, match="oz"):
        vocab.unit("oz")


def test_envelope_lookups():
    assert vocab.envelope("cw.op.simmer")["tempBandC"] == [85, 96]
    assert vocab.envelope("cw.op.deep_fry")["ladder"] == ["cw.sense.oil_temp"]
    assert vocab.envelope("cw.op.mix") is None
    assert vocab.is_executable("cw.op.legacy_step") is False
    assert vocab.heat_level("max") == (240, 280)


def test_data_files_are_ours_not_upstream_copies():
    names = {p.name for p in vocab.DATA_DIR.iterdir()}
    assert not names & UPSTREAM_NAMES
    for path in vocab.DATA_DIR.glob("*.json"):
        text = path.read_text(encoding="utf-8")
        assert '"definition"' not in text and '"label"' not in text, path.name
