"""What a Presence reading means: nobody unless person_present is true and fresh (issue 10)."""

from __future__ import annotations

import math

import pytest

from cookwala_ros.core import presence


@pytest.mark.parametrize("person_present, reach", [(True, 0.0), (True, 60.0), (True, 12.5)])
def test_a_fresh_true_within_a_minute_is_a_person(person_present, reach):
    assert presence.counts_as_present(person_present, reach)
    assert presence.nobody_reason(person_present, reach, age_s=0.2, stale_s=5.0) is None


@pytest.mark.parametrize("person_present, reach", [
    (False, 0.0),  # the message's defaults
    (False, 30.0),  # reachable_within_s alone never makes a person
    (False, math.inf),
    (True, 60.5),  # the other fields only narrow a true
    (True, math.inf),
    (True, math.nan),
    (True, -1.0),
])
def test_everything_else_is_nobody(person_present, reach):
    assert not presence.counts_as_present(person_present, reach)
    assert presence.nobody_reason(person_present, reach, age_s=0.2, stale_s=5.0)


def test_a_stale_true_and_no_reading_are_nobody():
    assert "old" in presence.nobody_reason(True, 0.0, age_s=5.5, stale_s=5.0)
    assert presence.nobody_reason(True, 0.0, age_s=5.0, stale_s=5.0) is None
    assert presence.nobody_reason(None, 0.0, age_s=None, stale_s=5.0) == "no presence reading"
