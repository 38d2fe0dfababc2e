"""Issue 16: after every stop input, 0 W and standstill stay until the local reset.

The shipped `kitchen` scene (LiveKitchen, with its safety monitor) cooks a saute that needs a
person, heats and stirs every simulated second; per stop input (e-stop button, the monitor's
Stop service, HTTP POST …/stop, the person leaving, the smoke detector) the trials each
fire the input while the hob delivers power and the arm moves (10 by default). An outside observer
(kitchen_watch) records the wire on the steady clock; stop_trials.judge() decides: the hob
reports 0 W within 1 s and the arm is still within 0.5 s (and the monitor verifies both), and
from then on until the reset no HeaterCommand asks for heat and no trajectory other than a halt
appears, whoever sends it. A failure lists every violating trial (what, from which node, how
late). `COOKWALA_STOP_TRIALS` raises the number of trials (never below 10); the >= 50 per
input of issue 16, with figures, is benchmarks/stop_holds.py.
"""

from __future__ import annotations

import os

import pytest

from kitchen_watch import KitchenWatch
from stop_trials import INPUTS, RECIPE, RTF, GuardedKitchen, StopTrials, summary

MIN_TRIALS = 10  # per stop input (issue 22); the >= 50 of issue 16 is the benchmark's
TRIALS = max(MIN_TRIALS, int(os.environ.get("COOKWALA_STOP_TRIALS") or MIN_TRIALS))
# What these trials found and what fixed it (7 Dec): the arm moving again after the halt (halt
# re-sends timed in sim time; re-sent halts re-planned from a joint state measured while the arm
# still braked: HaltPlan), the monitor faulting on a 0 W state after an early verification, the
# first cook after a reset stopped by the old stop's heat cut, shared-memory freezes (loopback DDS
# profile), the monitor planning from joint states it had not caught up with, a 0 W under the
# executor's own OFF verifying the stop (HeaterState.commanded_by), a judge reading lagging states,
# and a lock-step arm that braked only as fast as a slowed /clock advanced (standstills at 0.7 and
# 0.8 s beside the e2e soup; arm_sim now never moves slower than real time, `stall_s`), and a
# cook whose stirring waited forever for a pose command the monitor's gate had dropped as stale
# (1 cook in about 150 with 2 busy processes per core; core.motion.resend_due). README,
# Benchmarks, has the figures.


@pytest.fixture(scope="module")
def stop_trials():
    kitchen = GuardedKitchen(rtf=RTF, recipes=[RECIPE], startup_timeout_s=90.0)
    kitchen.start()
    watch = KitchenWatch("fault_stop_watch")
    trials = StopTrials(kitchen, watch)
    try:
        trials.ready()
        yield trials
    finally:
        trials.close()
        watch.close()
        kitchen.stop()


@pytest.mark.slow
@pytest.mark.timeout(120 + TRIALS * 12)  # a cap for a loaded host; an idle one needs ~1.3 s a trial
@pytest.mark.parametrize("stop_input", INPUTS)
def test_stop_holds_until_reset(stop_input, stop_trials):
    trials = [stop_trials.run(stop_input, i) for i in range(TRIALS)]  # a spurious stop fails the trial at once
    report = summary(trials)
    print(report)
    assert not any(t.violations for t in trials), f"the stop did not hold after {stop_input}:\n{report}"


def _wire(**extra):
    """A clean stop 10 ms after a trigger at t=100: halt at +5 ms, 0 W at +20 ms, still at +30 ms."""
    from kitchen_watch import HeatCmd, Sample, SafetySample, TrajCmd

    wire = {"heat_cmds": [HeatCmd(99.9, 1, 1500.0, 0.0, "executor", "/executor"),
                          HeatCmd(100.005, 0, 0.0, 0.0, "safety_monitor", "/safety_monitor")],
            "trajectories": [TrajCmd(99.95, 1, 0.3, "/executor"), TrajCmd(100.005, 0, 0.0, "/safety_monitor")],
            "heater": [Sample(99.99, 1500.0), Sample(100.02, 0.0), Sample(100.5, 0.0)],
            "joints": [Sample(99.99, 0.8), Sample(100.01, 0.4), Sample(100.03, 0.0), Sample(100.5, 0.0)],
            "safety": [SafetySample(100.05, "stopped", "estop", ("estop",), 0.02, 0.03)], "events": []}
    for key, rows in extra.items():
        wire[key] = sorted(wire[key] + rows, key=lambda r: r.t)
    return wire


def test_the_judge_passes_a_stop_that_holds_and_names_what_came_back():
    from kitchen_watch import HeatCmd, Sample, TrajCmd
    from stop_trials import Trial, judge

    clean = judge(Trial("estop", 0), _wire(), 100.0, 101.0)
    assert clean.violations == [] and round(clean.off_s, 3) == 0.02 and round(clean.still_s, 3) == 0.03

    late = judge(Trial("estop", 1), _wire(heat_cmds=[HeatCmd(100.1, 1, 800.0, 0.0, "executor", "/executor")],
                                          heater=[Sample(100.11, 800.0)],
                                          trajectories=[TrajCmd(100.2, 1, 0.34, "/executor", 0.5)],
                                          joints=[Sample(100.25, 0.5)]), 100.0, 101.0)
    assert late.re_energised and late.re_moved
    text = "\n".join(late.violations)
    assert "800 W from /executor (source=executor) at +100 ms, 80 ms after 0 W" in text, text
    assert "motion (0.34 rad away), 1 point(s) over 0.50 s, from /executor at +200 ms" in text, text
    assert "heater state above 0 W again" in text and "arm moving again" in text, text

    slow = judge(Trial("estop", 2), _wire(heater=[Sample(100.01, 1500.0)]), 100.0, 101.0)
    assert slow.violations == []  # a hot state before the first 0 W is the stop still landing
    missed = judge(Trial("estop", 3), {**_wire(), "heater": [Sample(100.02, 1500.0), Sample(101.2, 0.0)]}, 100.0, 102.0)
    assert any(v.startswith("0 W not within 1 s") for v in missed.violations), missed.violations


def test_a_halt_is_braking_to_rest_and_a_stale_leg_is_motion():
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from kitchen_watch import hold_deviation

    def one_point(positions, seconds, velocities=()):
        point = JointTrajectoryPoint(positions=positions, velocities=list(velocities),
                                     time_from_start=Duration(sec=int(seconds), nanosec=int(seconds % 1 * 1e9)))
        return JointTrajectory(joint_names=["a", "b"], points=[point])

    moving = [({"a": 0.0, "b": 1.0}, {"a": 2.0, "b": 0.0})]
    assert hold_deviation(JointTrajectory(), moving) == 0.0  # the empty halt of old
    assert hold_deviation(one_point([0.4, 1.0], 0.4, [0.0, 0.0]), moving) < 1e-9  # brakes 2 rad/s over 0.4 s
    assert hold_deviation(one_point([0.6, 1.0], 0.4), moving) < 1e-9  # ... from a state 0.1 s old
    assert abs(hold_deviation(one_point([0.0, 1.34], 0.5), moving) - 0.5) < 1e-9  # a stir leg: a stops dead, b moves
    assert hold_deviation(one_point([0.4, 1.0], 0.4, [0.5, 0.0]), moving) == float("inf")  # does not end at rest
    still = [({"a": 0.0, "b": 1.0}, {"a": 0.0, "b": 0.0})]
    assert abs(hold_deviation(one_point([0.4, 1.0], 0.4), still) - 0.4) < 1e-9  # from standstill: motion


def test_a_halt_is_judged_by_the_states_published_before_it_was_sent():
    """The monitor planned from a state the arm published 5 ms before the halt went out; an
    observer that lags has only older ones at hand when the halt arrives, and by those the rest
    point lies beyond any braking: motion. By the states published before it was sent it is a halt."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from kitchen_watch import HOLD_TOLERANCE_RAD, deviation_when_sent, hold_deviation

    halt = JointTrajectory(joint_names=["a"], points=[JointTrajectoryPoint(
        positions=[1.25], velocities=[0.0], time_from_start=Duration(nanosec=250_000_000))])
    older = ({"a": 0.0}, {"a": 2.0})  # 0.6 s of sim earlier at 2 rad/s
    newest = ({"a": 1.0}, {"a": 2.0})  # what the monitor planned from: 1.0 + 2.0 * 0.125 = 1.25
    assert hold_deviation(halt, [older]) > HOLD_TOLERANCE_RAD  # the lagging observer's verdict
    published = [(10.0, older), (10.095, newest)]
    assert deviation_when_sent(halt, published, sent=10.1) == 0.0  # a halt
    assert deviation_when_sent(halt, published, sent=10.09) > HOLD_TOLERANCE_RAD  # sent before that state
    assert deviation_when_sent(halt, published, sent=11.0) is None  # nothing in the window
