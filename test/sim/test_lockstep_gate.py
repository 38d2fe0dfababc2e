"""The lock-step clock's bookkeeping (pure): who it waits for, and who it stops waiting for."""

from __future__ import annotations

from cookwala_ros.ros.lockstep import StepGate

S = 1_000_000_000  # 1 s in ns


def test_a_step_waits_for_every_member_and_only_for_members():
    gate = StepGate(grace_ns=2 * S)
    assert gate.late(10) == []  # nobody joined: nobody to wait for
    assert gate.join("/heater_sim", 0) and not gate.join("/heater_sim", 0)
    assert gate.done("/executor", 10, 0)  # a first report joins its sender
    assert gate.late(10) == ["/heater_sim"]
    assert not gate.done("/heater_sim", 10, 0)
    assert gate.late(10) == [] and gate.late(11) == ["/heater_sim", "/executor"]
    gate.done("/heater_sim", 5, 0)  # an old, re-delivered report never undoes a newer one
    assert gate.late(10) == []


def test_a_member_late_beyond_the_grace_is_dropped_and_a_later_report_counts_it_again():
    gate = StepGate(grace_ns=2 * S)
    gate.done("/arm_sim", 10, 0)
    gate.done("/heater_sim", 10, 0)
    gate.done("/heater_sim", 20, 0)
    published_at = 1 * S  # step 20 went out at steady 1 s
    assert gate.drop_silent(20, published_at, 3 * S) == []  # exactly the grace: still waited for
    assert gate.drop_silent(20, published_at, 3 * S + 1) == ["/arm_sim"]
    assert gate.members == ["/heater_sim"] and gate.dropped == ["/arm_sim"]
    assert gate.late(20) == []
    assert gate.done("/arm_sim", 20, 4 * S)  # back: waited for again from now on
    assert gate.late(30) == ["/heater_sim", "/arm_sim"]


def test_the_grace_of_a_member_that_joins_mid_step_counts_from_its_joining():
    gate = StepGate(grace_ns=2 * S)
    gate.join("/probe", 5 * S)  # joins 4 s after step 20 went out
    assert gate.drop_silent(20, 1 * S, 6 * S) == []
    assert gate.drop_silent(20, 1 * S, 7 * S + 1) == ["/probe"]


def test_leaving_stops_the_wait_at_once():
    gate = StepGate(grace_ns=2 * S)
    gate.join("/executor", 0)
    assert gate.late(10) == ["/executor"]
    assert gate.leave("/executor") and not gate.leave("/executor")
    assert gate.late(10) == [] and gate.dropped == []


def test_idle_members_are_not_waited_for_and_the_clock_steps_to_the_earliest_wake():
    gate = StepGate(grace_ns=2 * S)
    step = S // 10
    assert gate.next_step(0, step) == step  # nobody: one step
    gate.done("/executor", 0, 0, wake_ns=S)  # idle: step me next at 1 s
    gate.done("/arm_sim", 0, 0, wake_ns=2 * S)
    assert gate.late(step) == [] and gate.next_step(0, step) == S  # straight to the earliest wake
    assert gate.late(S) == ["/executor"]  # waited for at its wake; the arm, still asleep, is not
    gate.done("/heater_sim", 0, 0)  # a busy member: every step
    assert gate.next_step(0, step) == step
    assert gate.late(step) == ["/heater_sim"]
    gate.done("/heater_sim", step, 0)
    assert gate.late(step) == [] and gate.next_step(step, step) == 2 * step


def test_a_wake_is_never_behind_the_next_step_and_an_old_report_does_not_move_it():
    gate = StepGate(grace_ns=2 * S)
    step = S // 10
    gate.done("/arm_sim", 5 * step, 0, wake_ns=5 * step)  # a wake not ahead of its own step = the next step
    assert gate.next_step(5 * step, step) == 6 * step and gate.late(6 * step) == ["/arm_sim"]
    gate.done("/arm_sim", 6 * step, 0, wake_ns=3 * S)
    gate.done("/arm_sim", 5 * step, 0)  # re-delivered older report
    assert gate.next_step(6 * step, step) == 3 * S
    gate.done("/arm_sim", 7 * step, 0)  # it woke early (a command came): every step again
    assert gate.next_step(7 * step, step) == 8 * step
