"""Execution lifecycle and Mission moves."""

from __future__ import annotations

import itertools
import json

import pytest

from cookwala_ros.core import lifecycle
from cookwala_ros.core.lifecycle import IllegalTransition


def _table_from_schema_text(spec_dir) -> set[tuple[str, str]]:
    schema = json.loads((spec_dir / "schemas" / "core.schema.json").read_text())
    text = schema["$defs"]["ExecutionState"]["description"].split(":", 1)[1].split(". ", 1)[0]
    pairs = set()
    for clause in text.split(";"):
        if "→" not in clause:
            continue
        frm, tos = clause.strip().split("→")
        pairs |= {(frm.strip(), to.strip(" .")) for to in tos.split("|")}
    return pairs


def test_table_equals_the_schema_description(spec_dir):
    legal = _table_from_schema_text(spec_dir)
    states = json.loads((spec_dir / "schemas" / "core.schema.json").read_text())["$defs"]["ExecutionState"]["enum"]
    assert set(states) == set(lifecycle.EXECUTION_STATES)
    for a, b in itertools.product(states, repeat=2):
        assert lifecycle.can_transition(a, b) == ((a, b) in legal), (a, b)


def test_final_states_never_move():
    assert lifecycle.FINAL_STATES == {"refused", "stopped", "completed", "failed"}
    for final, to in itertools.product(lifecycle.FINAL_STATES, lifecycle.EXECUTION_STATES):
        assert lifecycle.is_final(final)
        with pytest.raises(IllegalTransition, match=final):
            lifecycle.transition(final, to)


def test_happy_path_and_stop_path():
    state = "accepted"
    for to in ("preparing", "running", "paused", "running", "completed"):
        state = lifecycle.transition(state, to)
    assert state == "completed"
    assert lifecycle.transition(lifecycle.transition("running", "stopping"), "stopped") == "stopped"


def test_stop_target():
    assert lifecycle.stop_target("accepted") == "stopped"
    for state in ("preparing", "running", "paused", "needs_human", "stopping"):
        target = lifecycle.stop_target(state)
        assert target == "stopping"
        assert state == "stopping" or lifecycle.can_transition(state, target)
    assert lifecycle.stop_target("completed") is None


def test_unknown_states():
    assert not lifecycle.can_transition("cooking", "running")
    assert not lifecycle.can_transition("running", "done")
    with pytest.raises(ValueError, match="cooking"):
        lifecycle.is_final("cooking")


def test_mission_roles():
    assert lifecycle.can_mission_transition("ready", "committed", "holder")
    assert not lifecycle.can_mission_transition("ready", "committed", "executor")
    assert lifecycle.mission_allowed_roles("closed", "executing") == ()
    with pytest.raises(IllegalTransition, match="executor"):
        lifecycle.mission_transition("ready", "committed", "executor")
    assert {"draft", "closed", "failed", "cancelled", "executing"} <= lifecycle.mission_states()


def test_vector_handlers():
    assert lifecycle.vector_execution_transition({"from": "paused", "to": "running"}) == {"allowed": True}
    assert lifecycle.vector_mission_transition({"from": "draft", "to": "executing", "role": "holder"}) == {"allowed": False}
