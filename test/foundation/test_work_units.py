"""How `make test` splits the suite over xdist workers (test/work_units.py): the heavy scenes form
one unit, every other module is a unit of its own, and every HEAVY entry names something real."""

from __future__ import annotations

import pathlib

import work_units

TEST = pathlib.Path(__file__).resolve().parents[1]


def test_heavy_tests_are_one_unit_and_other_modules_one_each():
    assert work_units.work_unit("test/faults/test_fault_stop_holds.py::test_stop_holds_until_reset[estop]") == "heavy"
    assert work_units.work_unit("test/bringup/test_two_robots.py::test_names_are_per_robot") == "heavy"
    assert work_units.work_unit("test/safety/test_safety_node_stops.py::test_stop_service") == \
        "test/safety/test_safety_node_stops.py"
    assert work_units.work_unit("test/safety/test_safety_node_stops.py::test_estop_topic_latches_until_reset") == \
        "test/safety/test_safety_node_stops.py"


def test_every_heavy_entry_exists():
    for entry in work_units.HEAVY:
        assert (TEST / entry).exists(), entry
