"""Does a stop hold until the reset? Stop trials on the shipped kitchen scene, per stop input.

The same trials as test/faults/test_fault_stop_holds.py (its harness, test/faults/stop_trials.py,
is imported from there): the `kitchen` scene with its safety monitor cooks a saute that needs a
person, heats and stirs; each trial fires one stop input (estop, service, http, presence, limit)
while the hob delivers power and the arm moves, watches the wire from an outside observer on the
steady clock, releases the input and resets the monitor locally.

Prints per input: trials, trials that violated the acceptance (a stop that did not land in time,
or anything asking for heat or motion after 0 W / standstill), trials re-energised after 0 W,
trials where the arm was commanded or moved again after standstill, trials where heat was asked
for after a halt but before the hob reported 0 W, and p50/p99/max of
trigger -> 0 W and trigger -> standstill (first heater state <= 1 W after a heater-off command,
first joint state below 0.01 rad/s after a halt). Asserts nothing.

Run from the repository with the project's venv:
    .venv/bin/python benchmarks/stop_holds.py [--trials 50] [--inputs estop,service,http,presence,limit] [-v]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "test", "faults"))  # the harness lives with the test
sys.path.insert(0, os.path.join(REPO, "test"))  # and its helpers (ros_helpers)


def main() -> int:
    from stop_trials import INPUTS, RTF

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=50, help="stop trials per input (default 50)")
    parser.add_argument("--inputs", default=",".join(INPUTS), help=f"comma-separated, from {','.join(INPUTS)}")
    parser.add_argument("--rtf", type=float, default=RTF, help=f"real-time factor of the scene (default {RTF:g})")
    parser.add_argument("--samples", metavar="FILE", help="also write every trial as a JSON line to FILE")
    parser.add_argument("--node-log", metavar="FILE", help="write the scene's node output to FILE")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every trial as it ends")
    args = parser.parse_args()
    inputs = [name.strip() for name in args.inputs.split(",") if name.strip()]
    unknown = sorted(set(inputs) - set(INPUTS))
    if unknown or not inputs:
        parser.error(f"--inputs: unknown {', '.join(unknown) or 'nothing chosen'}; choose from {', '.join(INPUTS)}")
    if args.trials < 1:
        parser.error("--trials must be at least 1")

    os.environ.setdefault("ROS_DOMAIN_ID", str(40 + os.getpid() % 50))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ.pop("ROS_LOCALHOST_ONLY", None)
    os.environ.setdefault("ROS_LOG_DIR", tempfile.mkdtemp(prefix="stop-holds-"))

    from kitchen_watch import KitchenWatch
    from stop_trials import RECIPE, GuardedKitchen, StopTrials, pct

    print(f"stop holds: {args.trials} trials per input ({', '.join(inputs)}), kitchen at {args.rtf:g}x real time, "
          f"ROS_DOMAIN_ID {os.environ['ROS_DOMAIN_ID']}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f} before start", flush=True)
    started = time.monotonic()
    node_log = open(args.node_log, "w", encoding="utf-8") if args.node_log else None  # noqa: SIM115
    kitchen = GuardedKitchen(rtf=args.rtf, recipes=[RECIPE], startup_timeout_s=90.0, quiet=node_log is None,
                             output=node_log)
    kitchen.start()
    watch = KitchenWatch("stop_holds_watch")
    log = (lambda line: print("  " + line, flush=True)) if args.verbose else None
    runner = StopTrials(kitchen, watch, log=log)
    trials = []
    try:
        runner.ready()
        print(f"scene up after {time.monotonic() - started:.1f} s", flush=True)
        try:
            for name in inputs:
                for i in range(args.trials):
                    trials.append(runner.run(name, i))
                    if not args.verbose:
                        print(f"\r  {name} {i + 1}/{args.trials}   ", end="", file=sys.stderr, flush=True)
        except AssertionError as exc:  # a spurious stop ends the run: it is a fault, not a retry
            print(f"\nstopped after {len(trials)} trials: {exc}", flush=True)
        print(file=sys.stderr)
    finally:
        runner.close()
        watch.close()
        kitchen.stop()

    if args.samples:
        with open(args.samples, "a", encoding="utf-8") as out:
            for t in trials:
                out.write(json.dumps({"input": t.input, "index": t.index, "off_s": t.off_s, "still_s": t.still_s,
                                      "monitor_off_s": t.monitor_off_s, "monitor_still_s": t.monitor_still_s,
                                      "monitor_state": t.monitor_state, "violations": t.violations,
                                      "before_off": t.before_off, "before_still": t.before_still, "wall_s": t.wall_s, "phases": t.phases}) + "\n")
    print(f"\n{'input':<10}{'n':>4}{'violated':>10}{'re-energised':>14}{'moved again':>13}{'heat before 0 W':>17}"
          f"  {'trigger->0 W [ms]':>26}  {'trigger->standstill [ms]':>26}  {'trial [s]':>9}")
    print(f"{'':<68}" + "  ".join(f"{'p50':>8} {'p99':>8} {'max':>8}" for _ in range(2)) + f"  {'p50':>9}")
    for name in inputs:
        mine = [t for t in trials if t.input == name]
        cells = []
        for key in ("off_s", "still_s"):
            values = [getattr(t, key) * 1000 for t in mine]
            cells.append(f"{pct(values, 50):8.1f} {pct(values, 99):8.1f} {pct(values, 100):8.1f}")
        print(f"{name:<10}{len(mine):>4}{sum(bool(t.violations) for t in mine):>10}"
              f"{sum(t.re_energised for t in mine):>14}{sum(t.re_moved for t in mine):>13}"
              f"{sum(bool(t.before_off) for t in mine):>17}  "
              + "  ".join(cells) + f"  {pct([t.wall_s for t in mine], 50):9.2f}")
    bad = [t for t in trials if t.violations]
    if bad:
        print("\nviolations:")
        for t in bad:
            print(f"  {t.line()}")
    if runner.spurious:
        print(f"\nstops the monitor made on its own, or cooks that did not get going ({len(runner.spurious)}):")
        for why in sorted(set(runner.spurious)):
            print(f"  {runner.spurious.count(why)} x {why}")
    print(f"\n{len(trials)} trials in {time.monotonic() - started:.0f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
