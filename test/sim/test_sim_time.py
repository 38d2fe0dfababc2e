"""Clock readings become model steps: origin, big forward jumps, and restarts."""

from __future__ import annotations

import pytest

from cookwala_ros.sim.sim_time import SimTime

S = 1_000_000_000


def test_first_reading_sets_the_origin_and_later_ones_step():
    clock = SimTime()
    assert clock.advance(0).seconds == 0.0  # sim time not received yet
    first = clock.advance(1000 * S)
    assert (first.seconds, first.model_time) == (0.0, 0.0)
    step = clock.advance(1000 * S + S // 2)
    assert step.seconds == pytest.approx(0.5) and step.model_time == pytest.approx(0.5)
    assert clock.model_time(1002 * S) == pytest.approx(2.0)


def test_forward_jump_is_capped_and_backward_jump_restarts_without_stepping():
    clock = SimTime(max_step_s=10.0)
    clock.advance(100 * S)
    jump = clock.advance(200 * S)
    assert jump.seconds == 10.0 and jump.skipped == pytest.approx(90.0) and jump.model_time == pytest.approx(10.0)
    back = clock.advance(50 * S)
    assert back.restarted and back.seconds == 0.0 and back.model_time == pytest.approx(10.0)
    after = clock.advance(51 * S)
    assert after.seconds == pytest.approx(1.0) and after.model_time == pytest.approx(11.0)
