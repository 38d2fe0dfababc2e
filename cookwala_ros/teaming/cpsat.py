"""team_plan on OR-Tools CP-SAT (REASONING §5.3): the greedy allocator's job shop, solved exactly.

One optional interval per (task, robot that bid for it), exactly one of them present. A task starts
after each predecessor ends, plus the hand-off when the two run on different robots; not before
its robot's ETA or the plan's not-before time. A robot does one task at a time (its attention is
blocked), and a shared resource (one hob) serves one task at a time, whoever runs it. Started
tasks are fixed. The objective is the makespan.

The solve runs on one worker with a deterministic time budget and a fixed seed, so a loaded host
gets the same plan as an idle one. The greedy plan is the solver's hint: CP-SAT never does worse,
and `allocator.allocate` keeps the greedy plan (its tie rules are documented) unless CP-SAT's is
shorter. Without OR-Tools this module reports itself unavailable and the greedy plan stands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from cookwala_ros.teaming.types import Bid, Task

SOLVER_NAME = "ortools-cp-sat"
MS = 1000  # the model counts integer milliseconds
DETERMINISTIC_BUDGET = 2.0  # CP-SAT deterministic time units per solve (load-independent)
WALL_LIMIT_S = 30.0  # a backstop only; the deterministic budget ends a solve long before it


@dataclass(frozen=True)
class Placement:
    task_id: str
    actor_id: str
    start_s: float


@dataclass(frozen=True)
class Solution:
    placements: dict[str, Placement]
    optimal: bool  # the makespan is proven minimal (for the whole plan, pinned tasks included)
    bound_s: float  # no plan over these bids is shorter than this (the makespan itself when optimal)


def available() -> bool:
    try:
        from ortools.sat.python import cp_model  # noqa: F401
    except ImportError:
        return False
    return True


def _ms_up(seconds: float) -> int:
    return int(math.ceil(seconds * MS - 1e-6))


@dataclass(frozen=True)
class Fixed:
    """A task that keeps its robot and times (started, or outside the solve)."""

    actor_id: str
    start_s: float
    end_s: float
    resources: tuple[str, ...]


def solve(tasks: Mapping[str, Task], candidates: Mapping[str, Mapping[str, Bid]], *, handoff_s: float,
          fixed: Mapping[str, Fixed], not_before_s: float, hint: Mapping[str, Placement],
          budget: float | None = None) -> Solution | None:
    """Place every task of `tasks` (each with at least one candidate bid) on one of its
    candidates; `fixed` tasks (predecessors, robot and resource users) keep theirs. None when
    OR-Tools is missing or no solution came within the budget."""
    try:
        from ortools.sat.python import cp_model
    except ImportError:
        return None
    if not tasks:
        return None
    model = cp_model.CpModel()
    hand = _ms_up(handoff_s)
    floor = _ms_up(not_before_s)
    durations = {t: {a: _ms_up(b.duration_s) for a, b in candidates[t].items()} for t in tasks}
    fixed_end = max((_ms_up(f.end_s) for f in fixed.values()), default=0)
    latest_eta = max((_ms_up(b.eta_s) for c in candidates.values() for b in c.values()), default=0)
    horizon = max(fixed_end, floor, latest_eta) + sum(max(d.values()) + hand for d in durations.values())

    start = {t: model.new_int_var(0, horizon, f"start:{t}") for t in tasks}
    end = {t: model.new_int_var(0, horizon, f"end:{t}") for t in tasks}
    chosen: dict[str, dict[str, object]] = {}
    by_actor: dict[str, list] = {}
    by_resource: dict[str, list] = {}
    for t in sorted(tasks):
        chosen[t] = {}
        for a in sorted(candidates[t]):
            present = model.new_bool_var(f"on:{t}:{a}")
            interval = model.new_optional_fixed_size_interval_var(start[t], durations[t][a], present, f"run:{t}:{a}")
            chosen[t][a] = present
            by_actor.setdefault(a, []).append(interval)
            for r in tasks[t].resources:
                by_resource.setdefault(r, []).append(interval)
            model.add(start[t] >= _ms_up(candidates[t][a].eta_s)).only_enforce_if(present)
        model.add_exactly_one(chosen[t].values())
        model.add(end[t] == start[t] + sum(durations[t][a] * x for a, x in chosen[t].items()))
        model.add(start[t] >= floor)
    for name, f in sorted(fixed.items()):
        begin, size = _ms_up(f.start_s), max(0, _ms_up(f.end_s) - _ms_up(f.start_s))
        interval = model.new_fixed_size_interval_var(begin, size, f"fixed:{name}")
        by_actor.setdefault(f.actor_id, []).append(interval)
        for r in f.resources:
            by_resource.setdefault(r, []).append(interval)
    for t in sorted(tasks):
        for p in tasks[t].predecessors:
            if p in fixed:
                model.add(start[t] >= _ms_up(fixed[p].end_s))
                for a, x in chosen[t].items():
                    if a != fixed[p].actor_id:
                        model.add(start[t] >= _ms_up(fixed[p].end_s) + hand).only_enforce_if(x)
            elif p in tasks:
                model.add(start[t] >= end[p])
                for a, x in chosen[t].items():
                    same = chosen[p].get(a)
                    condition = [x] if same is None else [x, same.Not()]
                    model.add(start[t] >= end[p] + hand).only_enforce_if(condition)
            else:
                raise ValueError(f"task {t!r} follows {p!r}, which is neither solved nor fixed")
    for intervals in (*by_actor.values(), *by_resource.values()):
        if len(intervals) > 1:
            model.add_no_overlap(intervals)
    makespan = model.new_int_var(0, horizon, "makespan")
    model.add_max_equality(makespan, [*end.values(), fixed_end])
    model.minimize(makespan)
    for t, placed in hint.items():
        if t in tasks and placed.actor_id in chosen[t]:
            model.add_hint(start[t], _ms_up(placed.start_s))
            for a, x in chosen[t].items():
                model.add_hint(x, a == placed.actor_id)

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    solver.parameters.max_deterministic_time = DETERMINISTIC_BUDGET if budget is None else budget
    solver.parameters.max_time_in_seconds = WALL_LIMIT_S
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    placements = {}
    for t in sorted(tasks):
        actor = next(a for a, x in chosen[t].items() if solver.boolean_value(x))
        placements[t] = Placement(t, actor, solver.value(start[t]) / MS)
    return Solution(placements, status == cp_model.OPTIMAL, solver.best_objective_bound / MS)
