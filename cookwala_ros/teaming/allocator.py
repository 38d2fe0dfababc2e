"""team_plan (REASONING §5.3): list scheduling over the bids, CP-SAT on top, and re-planning.

The standard's planner is CP-SAT with a greedy list-scheduling fallback. The greedy plan is made
first, always: it finds what nobody can do, and it is CP-SAT's hint (`teaming/cpsat.py`), whose
plan replaces it only when it is shorter; without OR-Tools, or with `solver="greedy"`, the greedy
plan stands. Greedy: tasks are taken highest upward rank first
(the longest chain of work still behind them), each on the robot that finishes it earliest.
A task starts after its predecessors end, plus a hand-off when a predecessor ran on another
robot; after its robot's previous task; and after the previous user of each shared resource
(a hob is one resource, whoever cooks on it). Ties go to the lower actor id, then task id, so the
same bids always give the same plan. Times are seconds from the plan's start.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping

from cookwala_ros.core.conditions import format_duration
from cookwala_ros.teaming import cpsat
from cookwala_ros.teaming.types import Bid, Decline, Task, Unassignable

DEFAULT_HANDOFF_S = 30.0
SOLVER_NAME = "cookwala_ros-greedy"
SOLVERS = ("auto", "cp-sat", "greedy")  # auto: CP-SAT when OR-Tools imports, else greedy
UNASSIGNABLE_KEY = "x-cookwala-ros-unassignable"


@dataclass(frozen=True)
class ScheduledTask:
    task_id: str
    op: str
    actor_id: str
    start_s: float
    end_s: float
    resources: tuple[str, ...] = ()
    binding: str | None = None  # the task whose end set this start (for the critical path)


@dataclass
class Schedule:
    """A plan in seconds; `to_team_plan()` gives the standard's TeamPlan."""

    tasks: dict[str, ScheduledTask]
    predecessors: dict[str, tuple[str, ...]]
    unassignable: tuple[Unassignable, ...] = ()
    handoff_s: float = DEFAULT_HANDOFF_S
    assumptions: tuple[str, ...] = field(default_factory=tuple)
    solver: str = SOLVER_NAME  # whose plan this is
    optimal: bool = False  # CP-SAT proved no plan over these bids has a shorter makespan
    bound_s: float | None = None  # CP-SAT's lower bound on the makespan (None: it did not run)

    @property
    def makespan_s(self) -> float:
        return max((t.end_s for t in self.tasks.values()), default=0.0)

    def actor_of(self, task_id: str) -> str | None:
        scheduled = self.tasks.get(task_id)
        return scheduled.actor_id if scheduled else None

    def critical_path(self) -> list[str]:
        """The chain of tasks whose ends set each other's starts, ending at the last to finish."""
        if not self.tasks:
            return []
        last = max(self.tasks.values(), key=lambda t: (t.end_s, t.task_id))
        path = [last.task_id]
        while (binding := self.tasks[path[-1]].binding) is not None and binding not in path:
            path.append(binding)
        return path[::-1]

    def handoffs(self) -> list[dict]:
        """One hand-off per (predecessor, receiving robot) where the work changes hands."""
        out: dict[tuple[str, str], dict] = {}
        for task in sorted(self.tasks.values(), key=lambda t: (t.start_s, t.task_id)):
            for pred_id in self.predecessors.get(task.task_id, ()):
                pred = self.tasks.get(pred_id)
                if pred is not None and pred.actor_id != task.actor_id:
                    out.setdefault((pred_id, task.actor_id), {
                        "from": pred.actor_id, "to": task.actor_id, "item": pred_id, "at": format_duration(pred.end_s)})
        return list(out.values())

    def to_team_plan(self) -> dict:
        """advice.schema.json#/$defs/TeamPlan (starts and ends are offsets from the plan's start)."""
        makespan = self.makespan_s
        handoffs = self.handoffs()
        handoff_to: dict[str, str] = {}
        for h in sorted(handoffs, key=lambda h: (h["item"], h["to"])):
            handoff_to.setdefault(h["item"], h["to"])
        assignments = []
        for actor in sorted({t.actor_id for t in self.tasks.values()}):
            mine = sorted((t for t in self.tasks.values() if t.actor_id == actor), key=lambda t: (t.start_s, t.task_id))
            planned = []
            for t in mine:
                item = {"ref": t.task_id, "op": t.op, "start": format_duration(t.start_s), "end": format_duration(t.end_s)}
                if t.resources:
                    item["resources"] = list(t.resources)
                if t.task_id in handoff_to:
                    item["handoffTo"] = handoff_to[t.task_id]
                planned.append(item)
            busy = sum(t.end_s - t.start_s for t in mine)
            assignments.append({"actorId": actor, "tasks": planned,
                                "utilization": round(busy / makespan, 3) if makespan > 0 else 0.0})
        plan: dict = {
            "assignments": assignments,
            "makespan": format_duration(makespan),
            "criticalPath": self.critical_path(),
            "handoffs": handoffs,
            "leases": [{"resource": r, "holder": t.actor_id, "from": format_duration(t.start_s),
                        "until": format_duration(t.end_s)}
                       for t in sorted(self.tasks.values(), key=lambda t: (t.start_s, t.task_id)) for r in t.resources],
            "solver": {"name": self.solver, "objective": "makespan",
                       "status": "infeasible" if self.unassignable else "optimal" if self.optimal else "feasible"},
            "assumptions": [f"hand-off between robots takes {format_duration(self.handoff_s)}", *self.assumptions],
        }
        if self.unassignable:
            plan[UNASSIGNABLE_KEY] = [u.to_wire() for u in self.unassignable]
        return plan


def _check_graph(tasks: Mapping[str, Task]) -> None:
    for task in tasks.values():
        for pred in task.predecessors:
            if pred not in tasks:
                raise ValueError(f"predecessors: task {task.id!r} follows unknown task {pred!r}")
    state: dict[str, int] = {}

    def visit(task_id: str, trail: tuple[str, ...]) -> None:
        if state.get(task_id) == 2:
            return
        if state.get(task_id) == 1:
            raise ValueError(f"predecessors: cycle through {' -> '.join(trail + (task_id,))}")
        state[task_id] = 1
        for pred in tasks[task_id].predecessors:
            visit(pred, trail + (task_id,))
        state[task_id] = 2

    for task_id in sorted(tasks):
        visit(task_id, ())


def _upward_rank(tasks: Mapping[str, Task], durations: Mapping[str, float]) -> dict[str, float]:
    successors: dict[str, list[str]] = {t: [] for t in tasks}
    for task in tasks.values():
        for pred in task.predecessors:
            successors[pred].append(task.id)
    rank: dict[str, float] = {}

    def of(task_id: str) -> float:
        if task_id not in rank:
            rank[task_id] = durations.get(task_id, 0.0) + max((of(s) for s in successors[task_id]), default=0.0)
        return rank[task_id]

    for task_id in tasks:
        of(task_id)
    return rank


def _decline_reasons(task_id: str, declines: Iterable[Decline], bids: Iterable[Bid], roster: Iterable[str],
                     excluded: Iterable[str]) -> dict[str, str]:
    reasons = {a: "no_answer" for a in roster}
    reasons.update({b.actor_id: "other" for b in bids if b.task_id == task_id and not b.can_do})
    reasons.update({d.actor_id: d.reason for d in declines if d.task_id == task_id})
    reasons.update({a: "actor_lost" for a in excluded})
    return reasons


def allocate(tasks: Iterable[Task], bids: Iterable[Bid], *, declines: Iterable[Decline] = (),
             handoff_s: float = DEFAULT_HANDOFF_S, roster: Iterable[str] = (),
             pinned: Mapping[str, ScheduledTask] | None = None,
             allowed_actors: Mapping[str, Iterable[str]] | None = None,
             excluded_actors: Iterable[str] = (), not_before_s: float = 0.0,
             assumptions: Iterable[str] = (), solver: str = "auto") -> Schedule:
    """Schedule `tasks` over the `bids` (can_do ones are the candidates): the greedy plan, then
    CP-SAT's when it is shorter (`solver`: auto, cp-sat, greedy; cp-sat without OR-Tools is an error).

    `pinned` tasks keep their actor and times (already started); `allowed_actors` restricts a
    task's candidates; `excluded_actors` never get work; nothing unpinned starts before
    `not_before_s`. A task nobody can do, and everything after it, is reported unassignable with
    every robot's reason (`roster` robots that did not answer: `no_answer`).
    """
    if solver not in SOLVERS:
        raise ValueError(f"solver: {solver!r} is not one of {', '.join(SOLVERS)}")
    if solver == "cp-sat" and not cpsat.available():
        raise ValueError("solver: cp-sat needs OR-Tools (pip install ortools), which does not import here")
    by_id = {t.id: t for t in tasks}
    _check_graph(by_id)
    bids = list(bids)
    declines = list(declines)
    roster = tuple(roster)
    excluded = set(excluded_actors)
    pinned = dict(pinned or {})
    candidates: dict[str, dict[str, Bid]] = {t: {} for t in by_id}
    for bid in bids:
        if bid.can_do and bid.task_id in by_id and bid.actor_id not in excluded:
            allowed = None if allowed_actors is None else allowed_actors.get(bid.task_id)
            if allowed is None or bid.actor_id in set(allowed):
                candidates[bid.task_id].setdefault(bid.actor_id, bid)
    durations = {t: min((b.duration_s for b in c.values()), default=0.0) for t, c in candidates.items()}
    durations.update({t: s.end_s - s.start_s for t, s in pinned.items()})
    rank = _upward_rank(by_id, durations)

    scheduled: dict[str, ScheduledTask] = dict(pinned)
    actor_last: dict[str, ScheduledTask] = {}
    resource_last: dict[str, ScheduledTask] = {}
    for s in sorted(pinned.values(), key=lambda s: (s.end_s, s.task_id)):
        actor_last[s.actor_id] = s
        for r in s.resources:
            resource_last[r] = s
    unassignable: dict[str, Unassignable] = {}
    remaining = {t for t in by_id if t not in scheduled}
    while remaining:
        ready = [t for t in remaining if all(p in scheduled or p in unassignable for p in by_id[t].predecessors)]
        task_id = min(ready, key=lambda t: (-rank[t], t))
        task = by_id[task_id]
        remaining.discard(task_id)
        lost_preds = [p for p in task.predecessors if p in unassignable]
        if lost_preds or not candidates[task_id]:
            detail = (f"predecessor {', '.join(sorted(lost_preds))} is unassignable" if lost_preds
                      else "no robot can do it")
            unassignable[task_id] = Unassignable(
                task_id, _decline_reasons(task_id, declines, bids, roster, excluded), detail)
            continue
        best: tuple | None = None
        for actor_id in sorted(candidates[task_id]):
            bid = candidates[task_id][actor_id]
            options: list[tuple[float, str | None]] = [(not_before_s, None), (bid.eta_s, None)]
            if actor_id in actor_last:
                options.append((actor_last[actor_id].end_s, actor_last[actor_id].task_id))
            for pred_id in task.predecessors:
                pred = scheduled[pred_id]
                options.append((pred.end_s + (handoff_s if pred.actor_id != actor_id else 0.0), pred_id))
            for r in task.resources:
                if r in resource_last:
                    options.append((resource_last[r].end_s, resource_last[r].task_id))
            start, binding = max(options, key=lambda o: (o[0], o[1] is not None))
            finish = start + bid.duration_s
            if best is None or (finish, start) < (best[0], best[1]):
                best = (finish, start, actor_id, binding)
        finish, start, actor_id, binding = best
        placed = ScheduledTask(task_id, task.op, actor_id, start, finish, task.resources, binding)
        scheduled[task_id] = placed
        actor_last[actor_id] = placed
        for r in task.resources:
            resource_last[r] = placed
    greedy = Schedule(scheduled, {t.id: t.predecessors for t in by_id.values()},
                      tuple(unassignable[t] for t in sorted(unassignable)), handoff_s, tuple(assumptions))
    if solver == "greedy":
        return greedy
    return _improved(greedy, by_id, candidates, pinned, not_before_s)


def _improved(greedy: Schedule, by_id: Mapping[str, Task], candidates: Mapping[str, Mapping[str, Bid]],
              pinned: Mapping[str, ScheduledTask], not_before_s: float) -> Schedule:
    """CP-SAT over the tasks the greedy plan placed and did not pin: its plan when shorter, else
    the greedy plan, marked optimal when CP-SAT proved that makespan minimal."""
    free = {t: by_id[t] for t in greedy.tasks if t not in pinned}
    fixed = {t: cpsat.Fixed(s.actor_id, s.start_s, s.end_s, s.resources) for t, s in pinned.items()}
    hint = {t: cpsat.Placement(t, s.actor_id, s.start_s) for t, s in greedy.tasks.items() if t in free}
    solution = cpsat.solve(free, {t: candidates[t] for t in free}, handoff_s=greedy.handoff_s, fixed=fixed,
                           not_before_s=not_before_s, hint=hint)
    if solution is None:
        return greedy
    placed: dict[str, ScheduledTask] = dict(pinned)
    for t, p in solution.placements.items():
        duration = candidates[t][p.actor_id].duration_s
        placed[t] = ScheduledTask(t, by_id[t].op, p.actor_id, p.start_s, p.start_s + duration, by_id[t].resources)
    solved = replace(greedy, tasks=_with_bindings(placed, by_id, greedy.handoff_s), solver=cpsat.SOLVER_NAME,
                     optimal=solution.optimal, bound_s=solution.bound_s)
    if solved.makespan_s < greedy.makespan_s - 1e-6:
        return solved
    return replace(greedy, optimal=solution.optimal, bound_s=solution.bound_s)


def _with_bindings(placed: Mapping[str, ScheduledTask], by_id: Mapping[str, Task],
                   handoff_s: float) -> dict[str, ScheduledTask]:
    """Each task's binding (for the critical path): the predecessor, earlier task of its robot or
    earlier user of its resources whose end (plus a hand-off) is its start."""
    out: dict[str, ScheduledTask] = {}
    for t, s in placed.items():
        if s.binding is not None:
            out[t] = s
            continue
        options: list[tuple[float, str]] = []
        for p in by_id[t].predecessors if t in by_id else ():
            if p in placed:
                options.append((placed[p].end_s + (handoff_s if placed[p].actor_id != s.actor_id else 0.0), p))
        for other in placed.values():
            if other.task_id != t and other.end_s <= s.start_s + 1e-6 and (
                    other.actor_id == s.actor_id or set(other.resources) & set(s.resources)):
                options.append((other.end_s, other.task_id))
        tight = sorted(o for o in options if abs(o[0] - s.start_s) < 1e-3)
        out[t] = replace(s, binding=tight[-1][1] if tight else None)
    return out


def replan(schedule: Schedule, tasks: Iterable[Task], bids: Iterable[Bid], *, started: Iterable[str],
           lost_actor: str, now_s: float, declines: Iterable[Decline] = (), roster: Iterable[str] = (),
           solver: str = "auto") -> Schedule:
    """Rolling-horizon re-plan after `lost_actor` is gone (REASONING §5.3: only unstarted tasks move).

    Started and completed tasks keep their robot and times, the lost robot's included (what
    became of them is the executor's report, not the plan's). The other robots keep their
    unstarted tasks, re-timed from `now_s`; the lost robot's unstarted tasks go to the robots
    whose bids said they can do them, or are reported unassignable.
    """
    started = set(started)
    tasks = list(tasks)
    pinned = {t: s for t, s in schedule.tasks.items() if t in started}
    allowed = {t: (s.actor_id,) for t, s in schedule.tasks.items()
               if t not in started and s.actor_id != lost_actor}
    moved = sorted(t for t, s in schedule.tasks.items() if t not in started and s.actor_id == lost_actor)
    note = f"{lost_actor} lost at {format_duration(now_s)}; moved: {', '.join(moved) or 'nothing'}"
    return allocate(tasks, bids, declines=declines, handoff_s=schedule.handoff_s, roster=roster, pinned=pinned,
                    allowed_actors=allowed, excluded_actors=(lost_actor,), not_before_s=now_s,
                    assumptions=(*schedule.assumptions, note), solver=solver)
