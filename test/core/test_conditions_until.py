"""Evaluating a node's `until`: durations, three-valued checks, holdFor, time windows, timeouts."""

from __future__ import annotations

import pytest

from cookwala_ros.core import conditions
from cookwala_ros.core.conditions import MET, MET_BY_TIME, PENDING, TIMED_OUT, UntilTracker

LIQUID = "cw.sense.liquid_temp"
PAN = "cw.sense.pan_surface_temp"


@pytest.mark.parametrize("text, seconds", [
    ("PT5M", 300), ("PT1H30M", 5400), ("PT15S", 15), ("PT0.5S", 0.5), ("P1D", 86400), ("P1DT2H", 93600),
])
def test_parse_duration(text, seconds):
    assert conditions.parse_duration(text) == seconds


@pytest.mark.parametrize("bad", ["5M", "PT", "P", "PT5X", 300, None, "PT-5M"])
def test_parse_duration_names_the_field(bad):
    with pytest.raises(ValueError, match="until/maxTime"):
        conditions.parse_duration(bad, "until/maxTime")


def test_bad_duration_in_until_is_reported_with_its_pointer():
    with pytest.raises(ValueError, match="/process/nodes/2/until/minTime"):
        UntilTracker({"minTime": "five minutes"}, "/process/nodes/2/until")


def test_format_duration():
    assert conditions.format_duration(300) == "PT5M"
    assert conditions.format_duration(3725) == "PT1H2M5S"
    assert conditions.format_duration(0) == "PT0S"


def test_sensor_condition_waits_for_min_time_then_is_met():
    t = UntilTracker({"all": [{"sensor": PAN, "gte": 150}], "minTime": "PT1M", "maxTime": "PT4M"})
    assert t.evaluate(10, {PAN: 160}) == PENDING  # true, but before minTime
    assert t.evaluate(60, {PAN: 149.9}) == PENDING
    assert t.evaluate(61, {PAN: 150}) == MET


def test_hold_for_needs_the_check_true_without_a_break():
    t = UntilTracker({"all": [{"sensor": LIQUID, "between": [85, 96], "holdFor": "PT10S"}]})
    assert t.evaluate(0, {LIQUID: 90}) == PENDING
    assert t.evaluate(9, {LIQUID: 90}) == PENDING
    assert t.evaluate(9.5, {LIQUID: 97}) == PENDING  # broken: the clock restarts
    assert t.evaluate(10, {LIQUID: 95}) == PENDING
    assert t.evaluate(19.9, {LIQUID: 95}) == PENDING
    assert t.evaluate(20, {LIQUID: 95}) == MET


def test_any_all_not_and_lte():
    t = UntilTracker({"any": [{"sensor": LIQUID, "gte": 98}, {"all": [{"sensor": PAN, "lte": 100},
                                                                     {"not": {"sensor": LIQUID, "lte": 50}}]}]})
    assert t.evaluate(0, {LIQUID: 60, PAN: 120}) == PENDING
    assert t.evaluate(1, {LIQUID: 60, PAN: 90}) == MET
    assert UntilTracker({"all": [{"sensor": LIQUID, "eq": 5}]}).evaluate(0, {LIQUID: 5}) == MET


def test_unobservable_condition_ends_on_nominal_time():
    until = {"all": [{"vision": "cw.cue.golden_brown"}], "minTime": "PT2M", "nominalTime": "PT3M", "maxTime": "PT5M"}
    t = UntilTracker(until)
    assert t.evaluate(150, {}) == PENDING
    assert t.evaluate(180, {}) == MET_BY_TIME
    # a missing sensor reading is unknown too; without nominalTime the fallback is maxTime
    t = UntilTracker({"all": [{"sensor": LIQUID, "gte": 90}], "maxTime": "PT5M"})
    assert t.evaluate(299, {LIQUID: None}) == PENDING
    assert t.evaluate(300, {LIQUID: float("nan")}) == MET_BY_TIME


def test_a_known_false_beats_an_unknown_and_times_out():
    t = UntilTracker({"all": [{"sensor": LIQUID, "gte": 90}, {"vision": "cw.cue.bubbles"}], "maxTime": "PT1M"})
    assert t.evaluate(30, {LIQUID: 50}) == PENDING
    assert t.evaluate(60, {LIQUID: 50}) == TIMED_OUT


def test_optional_checks_that_cannot_be_observed_are_skipped():
    t = UntilTracker({"all": [{"sensor": LIQUID, "gte": 90}, {"vision": "cw.cue.bubbles", "optional": True}]})
    assert t.evaluate(0, {LIQUID: 91}) == MET


def test_time_only_condition_uses_nominal_then_min_then_max():
    assert UntilTracker({"minTime": "PT5M", "maxTime": "PT8M", "nominalTime": "PT6M"}).evaluate(359, {}) == PENDING
    assert UntilTracker({"minTime": "PT5M", "maxTime": "PT8M", "nominalTime": "PT6M"}).evaluate(360, {}) == MET_BY_TIME
    assert UntilTracker({"minTime": "PT5M", "maxTime": "PT8M"}).evaluate(300, {}) == MET_BY_TIME
    assert UntilTracker({"maxTime": "PT8M"}).evaluate(480, {}) == MET_BY_TIME
    assert UntilTracker(None).evaluate(0, {}) == MET_BY_TIME


def test_extend_pushes_the_timeout_out():
    t = UntilTracker({"all": [{"sensor": LIQUID, "gte": 99}], "maxTime": "PT4M"})
    assert t.evaluate(240, {LIQUID: 90}) == TIMED_OUT
    t.extend(conditions.extension_s(t.window))
    assert t.max_s == 300
    assert t.evaluate(280, {LIQUID: 90}) == PENDING
    assert t.evaluate(300, {LIQUID: 90}) == TIMED_OUT


def test_timeout_action_defaults_to_asking_a_person():
    assert conditions.timeout_action({"onTimeout": "extend"}) == "extend"
    assert conditions.timeout_action({}) == "ask_human"
    assert conditions.timeout_action({"onTimeout": "explode"}) == "ask_human"


def test_condition_sensors_lists_every_sensor_in_the_tree():
    until = {"any": [{"sensor": LIQUID, "gte": 1}, {"all": [{"sensor": PAN, "lte": 2}, {"vision": "cw.cue.x"}]}],
             "not": {"sensor": "cw.sense.mass", "gte": 3}}
    assert conditions.condition_sensors(until) == {LIQUID, PAN, "cw.sense.mass"}
