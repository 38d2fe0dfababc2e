"""Issue 16: after every stop input, 0 W and standstill stay until the local reset.

The shipped `kitchen` scene (LiveKitchen, with its safety monitor) cooks a saute that needs a
person, heats and stirs every simulated second; per stop input (e-stop button, the monitor's
Stop service, HTTP POST …/stop, the person leaving, the smoke detector) at least 50 trials each
fire the input while the hob delivers power and the arm moves. An outside observer
(kitchen_watch) records the wire on the steady clock; stop_trials.judge() decides: the hob
reports 0 W within 1 s and the arm is still within 0.5 s (and the monitor verifies both), and
from then on until the reset no HeaterCommand asks for heat and no trajectory other than a halt
appears, whoever sends it. A failure lists every violating trial (what, from which node, how
late). `COOKWALA_STOP_TRIALS` raises the count (never below 50); figures: benchmarks/stop_holds.py.
"""

from __future__ import annotations

import os

import pytest

from kitchen_watch import KitchenWatch
from stop_trials import INPUTS, RECIPE, RTF, GuardedKitchen, StopTrials, summary

MIN_TRIALS = 50  # the acceptance of issue 16: >= 50 trials per stop input
TRIALS = max(MIN_TRIALS, int(os.environ.get("COOKWALA_STOP_TRIALS", MIN_TRIALS)))


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
@pytest.mark.timeout(120 + TRIALS * 8)
@pytest.mark.parametrize("stop_input", INPUTS)
def test_stop_holds_until_reset(stop_input, stop_trials):
    spurious = len(stop_trials.spurious)
    trials = [stop_trials.run(stop_input, i) for i in range(TRIALS)]
    report = summary(trials)
    if len(stop_trials.spurious) > spurious:  # not this acceptance; issue 16 item 14 tracks false stops
        report += "\ncooks restarted (monitor stopped on its own, or no heat with motion): " + "; ".join(
            stop_trials.spurious[spurious:])
    print(report)
    assert not any(t.violations for t in trials), f"the stop did not hold after {stop_input}:\n{report}"
