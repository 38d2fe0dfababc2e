"""Team plans at size (issue 11): time to a plan and makespan, greedy list scheduling against CP-SAT
(with the greedy plan as its hint) and against CP-SAT's proven lower bound.

    python benchmarks/teaming_bench.py [--tasks 10 20 50] [--robots 3 5 10] [--kitchens 3] [--budget 2.0]

Each kitchen is random but seeded (the same on every run): recipes of chained steps that branch
and join, a third of the steps on one of two hobs (a shared resource), every robot able to do a
random part of the work (every step by at least one), at its own speed, some robots busy for a
while (ETA), hand-offs of 30 s. Per size the figures are the mean over the kitchens: makespans
in seconds, the gap of each plan to the bound, how many CP-SAT plans are proven optimal, and
the wall time of each planner. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import pathlib
import random
import statistics
import sys
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cookwala_ros.teaming import cpsat  # noqa: E402
from cookwala_ros.teaming.allocator import allocate  # noqa: E402
from cookwala_ros.teaming.types import Bid, Task  # noqa: E402

HANDOFF_S = 30.0
OPS = ("cw.op.cut", "cw.op.mix", "cw.op.saute", "cw.op.simmer", "cw.op.boil", "cw.op.pour")


def kitchen(n_tasks: int, n_robots: int, seed: int) -> tuple[list[Task], list[Bid]]:
    rng = random.Random(seed * 1000 + n_tasks * 31 + n_robots)
    tasks: list[Task] = []
    for i in range(n_tasks):
        recent = [f"s{j}" for j in range(max(0, i - 4), i)]
        preds = tuple(sorted(p for p in recent if rng.random() < 0.35))
        hob = ("appliance:hob-1",) if rng.random() < 0.17 else ("appliance:hob-2",) if rng.random() < 0.2 else ()
        tasks.append(Task(f"s{i}", rng.choice(OPS), None, predecessors=preds, resources=hob))
    robots = [f"robot:{r}" for r in range(n_robots)]
    speed = {r: rng.uniform(0.7, 1.4) for r in robots}
    eta = {r: rng.choice((0.0, 0.0, 0.0, 60.0, 180.0)) for r in robots}
    bids = []
    for t in tasks:
        work = rng.randint(30, 600)
        able = [r for r in robots if rng.random() < 0.5] or [rng.choice(robots)]
        bids += [Bid("cfp", r, t.id, True, eta[r], round(work * speed[r])) for r in able]
    return tasks, bids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, nargs="+", default=[10, 20, 50])
    parser.add_argument("--robots", type=int, nargs="+", default=[3, 5, 10])
    parser.add_argument("--kitchens", type=int, default=3, help="random kitchens per size (default 3)")
    parser.add_argument("--budget", type=float, default=cpsat.DETERMINISTIC_BUDGET,
                        help=f"CP-SAT deterministic time per plan (default {cpsat.DETERMINISTIC_BUDGET:g})")
    args = parser.parse_args()
    if not cpsat.available():
        print("OR-Tools does not import: install requirements/python.txt", file=sys.stderr)
        return 2
    cpsat.DETERMINISTIC_BUDGET = args.budget
    print(f"# {args.kitchens} kitchen(s) per size, hand-off {HANDOFF_S:g} s, CP-SAT budget {args.budget:g} "
          "deterministic units, one worker")
    print(f"{'tasks':>5} {'robots':>6} | {'greedy s':>9} {'cp-sat s':>9} {'bound s':>9} | {'greedy gap':>10} "
          f"{'cp-sat gap':>10} {'optimal':>7} | {'greedy ms':>9} {'cp-sat ms':>9}")
    for n_tasks in args.tasks:
        for n_robots in args.robots:
            rows = []
            for k in range(args.kitchens):
                tasks, bids = kitchen(n_tasks, n_robots, k)
                t0 = time.perf_counter()
                greedy = allocate(tasks, bids, handoff_s=HANDOFF_S, solver="greedy")
                t1 = time.perf_counter()
                solved = allocate(tasks, bids, handoff_s=HANDOFF_S, solver="cp-sat")
                t2 = time.perf_counter()
                bound = solved.bound_s or 0.0
                rows.append((greedy.makespan_s, solved.makespan_s, bound,
                             greedy.makespan_s / bound - 1 if bound else float("nan"),
                             solved.makespan_s / bound - 1 if bound else float("nan"),
                             solved.optimal, (t1 - t0) * 1e3, (t2 - t1) * 1e3))
            mean = [statistics.fmean(r[i] for r in rows) for i in (0, 1, 2, 3, 4, 6, 7)]
            optimal = sum(r[5] for r in rows)
            print(f"{n_tasks:>5} {n_robots:>6} | {mean[0]:>9.0f} {mean[1]:>9.0f} {mean[2]:>9.0f} | "
                  f"{mean[3]:>10.1%} {mean[4]:>10.1%} {optimal:>4}/{len(rows):<2} | {mean[5]:>9.1f} {mean[6]:>9.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
