"""Carrying out a contract-net plan (REASONING §5.3–5.4): which awarded task to send to which
robot next, and what becomes of the rest when a task fails or a robot is lost.

Pure bookkeeping, no ROS and no clocks: the coordinator node asks `next_goals()`, sends those
ExecuteNode goals, and reports back with `start`, `finish` and `lose`. A task runs only once
every predecessor completed, on a robot that runs nothing else, and while no running task holds
one of its resources. Only unstarted tasks move on re-planning; a failure blocks what follows it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from cookwala_ros.teaming.allocator import Schedule
from cookwala_ros.teaming.types import Task


class TaskState:
    """The states of a dispatched task (plain strings, so `summary()` is JSON as it stands)."""

    PENDING = "pending"  # has a robot, waits for its predecessors, robot or resources
    RUNNING = "running"  # its goal was sent and accepted
    COMPLETED = "completed"
    FAILED = "failed"
    BLOCKED = "blocked"  # a predecessor failed: it will never run
    UNASSIGNED = "unassigned"  # no robot (nobody could do it, or its robot was lost)
    ALL = (PENDING, RUNNING, COMPLETED, FAILED, BLOCKED, UNASSIGNED)


@dataclass
class _Entry:
    task: Task
    state: str
    actor: str | None
    start_s: float  # planned start; inf when no plan places it
    detail: str = ""


class Dispatch:
    """The run state of one plan's tasks; deterministic (every scan goes in sorted id order)."""

    def __init__(self, tasks: Iterable[Task], schedule: Schedule) -> None:
        self._entries: dict[str, _Entry] = {}
        for task in sorted(tasks, key=lambda t: t.id):
            if task.id in self._entries:
                raise ValueError(f"tasks: duplicate task id {task.id!r}")
            placed = schedule.tasks.get(task.id)
            self._entries[task.id] = (
                _Entry(task, TaskState.PENDING, placed.actor_id, placed.start_s) if placed is not None
                else _Entry(task, TaskState.UNASSIGNED, None, math.inf, "no robot was awarded it"))
        self._check_known(schedule, "schedule")
        self._successors: dict[str, list[str]] = {t: [] for t in self._entries}
        for entry in self._entries.values():
            for pred in entry.task.predecessors:
                if pred not in self._entries:
                    raise ValueError(f"predecessors: task {entry.task.id!r} follows unknown task {pred!r}")
                self._successors[pred].append(entry.task.id)
        self._lost: set[str] = set()

    # ------------------------------------------------------------------ queries

    def state(self, task_id: str) -> str:
        return self._entry(task_id).state

    def actor(self, task_id: str) -> str | None:
        return self._entry(task_id).actor

    def detail(self, task_id: str) -> str:
        return self._entry(task_id).detail

    @property
    def done(self) -> bool:
        """Nothing is pending or running (unassigned tasks left over make the outcome failed)."""
        return not any(e.state in (TaskState.PENDING, TaskState.RUNNING) for e in self._entries.values())

    @property
    def outcome(self) -> str:
        return "completed" if all(e.state == TaskState.COMPLETED for e in self._entries.values()) else "failed"

    @property
    def started(self) -> list[str]:
        """Tasks that ran or run (what `allocator.replan(started=...)` must pin)."""
        ran = (TaskState.RUNNING, TaskState.COMPLETED, TaskState.FAILED)
        return [t for t, e in self._entries.items() if e.state in ran]

    def summary(self) -> dict[str, dict]:
        return {t: {"state": e.state, "actor": e.actor, "detail": e.detail} for t, e in self._entries.items()}

    def handoffs_into(self, task_id: str) -> list[tuple[str, str]]:
        """(predecessor id, its robot) for each completed predecessor another robot ran: what
        `task_id`'s robot takes over from someone else when it starts (REASONING §5.4 hand-offs)."""
        entry = self._entry(task_id)
        return [(p, self._entries[p].actor) for p in sorted(entry.task.predecessors)
                if self._entries[p].state == TaskState.COMPLETED and self._entries[p].actor not in (None, entry.actor)]

    def op(self, task_id: str) -> str:
        return self._entry(task_id).task.op

    def next_goals(self) -> list[tuple[str, str]]:
        """(task id, actor id) of the tasks that may start now, by planned start then id; at most one
        per robot and no two sharing a resource. Changes nothing: call `start` once a goal is sent."""
        running = [e for e in self._entries.values() if e.state == TaskState.RUNNING]
        busy_actors = {e.actor for e in running}
        held = {r for e in running for r in e.task.resources}
        goals: list[tuple[str, str]] = []
        for entry in sorted(self._entries.values(), key=lambda e: (e.start_s, e.task.id)):
            if entry.state != TaskState.PENDING or entry.actor in busy_actors or held & set(entry.task.resources):
                continue
            if all(self._entries[p].state == TaskState.COMPLETED for p in entry.task.predecessors):
                goals.append((entry.task.id, entry.actor))
                busy_actors.add(entry.actor)
                held.update(entry.task.resources)
        return goals

    # ------------------------------------------------------------------ transitions

    def start(self, task_id: str) -> None:
        """pending -> running; refused when the task may not start now (see `next_goals`)."""
        entry = self._entry(task_id)
        if entry.state != TaskState.PENDING:
            raise ValueError(f"{task_id}: cannot start a {entry.state} task")
        waiting = [p for p in entry.task.predecessors if self._entries[p].state != TaskState.COMPLETED]
        if waiting:
            raise ValueError(f"{task_id}: predecessors not completed: {', '.join(waiting)}")
        for other_id, other in self._entries.items():
            if other.state != TaskState.RUNNING:
                continue
            if other.actor == entry.actor:
                raise ValueError(f"{task_id}: {entry.actor} is running {other_id}")
            shared = sorted(set(other.task.resources) & set(entry.task.resources))
            if shared:
                raise ValueError(f"{task_id}: {', '.join(shared)} held by running {other_id}")
        entry.state = TaskState.RUNNING

    def finish(self, task_id: str, ok: bool, detail: str = "") -> list[str]:
        """running -> completed or failed; a failure blocks every pending or unassigned task after
        it (they can never run). Returns the ids newly blocked."""
        entry = self._entry(task_id)
        if entry.state != TaskState.RUNNING:
            raise ValueError(f"{task_id}: cannot finish a {entry.state} task")
        entry.detail = detail
        entry.state = TaskState.COMPLETED if ok else TaskState.FAILED
        return [] if ok else self._block_after(task_id)

    def lose(self, actor_id: str, why: str) -> tuple[list[str], list[str]]:
        """The robot is gone: what it ran failed (blocking what follows), what it had not started
        becomes unassigned for a re-plan. Returns (moved, failed) ids; it gets no more work."""
        self._lost.add(actor_id)
        note = f"{actor_id} lost: {why}"
        failed = [t for t, e in self._entries.items() if e.actor == actor_id and e.state == TaskState.RUNNING]
        for task_id in failed:
            self.finish(task_id, False, note)
        moved = [t for t, e in self._entries.items() if e.actor == actor_id and e.state == TaskState.PENDING]
        for task_id in moved:
            entry = self._entries[task_id]
            entry.state, entry.actor, entry.detail = TaskState.UNASSIGNED, None, note
        return moved, failed

    def reassign(self, task_id: str, actor_id: str) -> None:
        """unassigned -> pending on `actor_id` (it keeps its place in the planned order)."""
        entry = self._entry(task_id)
        if entry.state != TaskState.UNASSIGNED:
            raise ValueError(f"{task_id}: cannot reassign a {entry.state} task")
        if actor_id in self._lost:
            raise ValueError(f"{task_id}: {actor_id} was lost")
        entry.state, entry.actor, entry.detail = TaskState.PENDING, actor_id, ""

    def give_up(self, task_id: str, why: str) -> list[str]:
        """unassigned -> failed: no robot will do it (nobody bid, or a re-plan found nobody), so
        what follows it can never run either. Returns the ids newly blocked."""
        entry = self._entry(task_id)
        if entry.state != TaskState.UNASSIGNED:
            raise ValueError(f"{task_id}: cannot give up a {entry.state} task")
        entry.state, entry.detail = TaskState.FAILED, why
        return self._block_after(task_id)

    def apply(self, schedule: Schedule) -> list[str]:
        """Take a re-plan (allocator.replan): unassigned tasks it places become pending on its robot;
        pending tasks take its planned starts (and keep their robot: replan does not move them).
        Returns the ids newly pending."""
        self._check_known(schedule, "schedule")
        for task_id, placed in sorted(schedule.tasks.items()):
            if self._entries[task_id].state == TaskState.UNASSIGNED and placed.actor_id in self._lost:
                raise ValueError(f"schedule: {task_id} placed on lost {placed.actor_id}")
        newly: list[str] = []
        for task_id, placed in sorted(schedule.tasks.items()):
            entry = self._entries[task_id]
            if entry.state == TaskState.UNASSIGNED:
                self.reassign(task_id, placed.actor_id)
                newly.append(task_id)
            if entry.state == TaskState.PENDING:
                entry.start_s = placed.start_s
        return newly

    # ------------------------------------------------------------------ helpers

    def _entry(self, task_id: str) -> _Entry:
        try:
            return self._entries[task_id]
        except KeyError:
            raise ValueError(f"{task_id}: unknown task") from None

    def _check_known(self, schedule: Schedule, name: str) -> None:
        unknown = sorted(set(schedule.tasks) - set(self._entries))
        if unknown:
            raise ValueError(f"{name}: places unknown task(s) {', '.join(unknown)}")

    def _block_after(self, failed_id: str) -> list[str]:
        blocked: list[str] = []
        seen: set[str] = set()
        frontier = [failed_id]
        while frontier:
            for succ in sorted(self._successors[frontier.pop()]):
                if succ in seen:
                    continue
                seen.add(succ)
                frontier.append(succ)
                entry = self._entries[succ]
                if entry.state in (TaskState.PENDING, TaskState.UNASSIGNED):
                    entry.state, entry.detail = TaskState.BLOCKED, f"predecessor {failed_id} failed"
                    blocked.append(succ)
        return sorted(blocked)
