"""A heater fault is a code with a meaning, never a sentence the engine searches."""

from __future__ import annotations

import pytest

from cookwala_ros.core.run_types import HeaterFault


@pytest.mark.parametrize("code, cuts, incident", [
    ("overtemp", True, "cw.incident.overheat"),
    ("relay_welded", True, "cw.incident.equipment_failure"),
    ("stale_state", True, "cw.incident.equipment_failure"),
    ("sensor_disconnected", False, "cw.incident.equipment_failure"),  # the ladder copes; heat goes on
])
def test_each_code_says_whether_it_cuts_heat_and_which_incident_it_is(code, cuts, incident):
    fault = HeaterFault.of(code)
    assert fault.cuts_heat is cuts and fault.incident == incident and f"heater.{fault}" == f"heater.{code}"


def test_no_fault_is_none_and_an_unknown_code_cuts_heat():
    assert HeaterFault.of(None) is None and HeaterFault.of("") is None
    unknown = HeaterFault.of("the temperature sensor said something odd")  # text is not a code
    assert unknown is HeaterFault.OTHER and unknown.cuts_heat
