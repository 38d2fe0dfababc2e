"""Carrying out a plan: precedence order, one task per robot, shared resources, failures that
block what follows, a lost robot's tasks moved by a re-plan."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cookwala_ros.teaming.allocator import Schedule, allocate, replan
from cookwala_ros.teaming.dispatch import Dispatch, TaskState
from cookwala_ros.teaming.types import Task

from teaming_fixtures import bid

HOB = "appliance:hob-1"


def planned(tasks: list[Task], owners: dict[str, str], **extra_bids: tuple[str, float]) -> tuple[Dispatch, Schedule]:
    """A Dispatch over the greedy plan where each task is bid for only by its owner (so the plan
    puts it there); `extra_bids` adds one more (actor, duration) bid for a task."""
    bids = [bid(owners[t.id], t.id, t.duration_s) for t in tasks if t.id in owners]
    bids += [bid(actor, task_id, duration) for task_id, (actor, duration) in extra_bids.items()]
    schedule = allocate(tasks, bids, handoff_s=0, solver="greedy")
    return Dispatch(tasks, schedule), schedule


def run(dispatch: Dispatch, task_id: str, ok: bool = True, detail: str = "") -> list[str]:
    dispatch.start(task_id)
    return dispatch.finish(task_id, ok, detail)


def test_a_chain_over_two_robots_goes_in_precedence_order():
    tasks = [Task("a", "cw.op.cut", 60), Task("b", "cw.op.saute", 60, predecessors=("a",)),
             Task("c", "cw.op.plate", 30, predecessors=("b",))]
    dispatch, _ = planned(tasks, {"a": "robot:1", "b": "robot:2", "c": "robot:1"})
    assert dispatch.next_goals() == [("a", "robot:1")]
    dispatch.start("a")
    assert dispatch.next_goals() == [] and dispatch.state("a") == TaskState.RUNNING
    with pytest.raises(ValueError, match="predecessors not completed: a"):
        dispatch.start("b")
    dispatch.finish("a", True)
    assert dispatch.next_goals() == [("b", "robot:2")]
    assert not dispatch.done
    run(dispatch, "b")
    assert dispatch.next_goals() == [("c", "robot:1")]
    run(dispatch, "c")
    assert dispatch.next_goals() == []
    assert dispatch.done and dispatch.outcome == "completed"
    assert dispatch.summary() == {t: {"state": "completed", "actor": a, "detail": ""}
                                  for t, a in (("a", "robot:1"), ("b", "robot:2"), ("c", "robot:1"))}


def test_independent_tasks_on_two_robots_start_together_in_planned_order():
    tasks = [Task("a", "cw.op.cut", 60), Task("b", "cw.op.wash", 60)]
    bids = [bid("robot:2", "a", 60, eta=10), bid("robot:1", "b", 60)]
    dispatch = Dispatch(tasks, allocate(tasks, bids, solver="greedy"))
    assert dispatch.next_goals() == [("b", "robot:1"), ("a", "robot:2")]  # b is planned first
    for task_id, _ in dispatch.next_goals():
        dispatch.start(task_id)
    assert dispatch.state("a") == dispatch.state("b") == TaskState.RUNNING


def test_two_tasks_on_one_robot_go_one_at_a_time():
    tasks = [Task("a", "cw.op.cut", 60), Task("b", "cw.op.wash", 30)]
    dispatch, schedule = planned(tasks, {"a": "robot:1", "b": "robot:1"})
    assert schedule.tasks["a"].start_s < schedule.tasks["b"].start_s
    assert dispatch.next_goals() == [("a", "robot:1")]  # both are ready; the robot takes one
    dispatch.start("a")
    assert dispatch.next_goals() == []
    with pytest.raises(ValueError, match="robot:1 is running a"):
        dispatch.start("b")
    dispatch.finish("a", True)
    assert dispatch.next_goals() == [("b", "robot:1")]


def test_a_shared_resource_serialises_tasks_of_different_robots():
    tasks = [Task("fry", "cw.op.saute", 120, resources=(HOB,)), Task("boil", "cw.op.boil", 60, resources=(HOB,)),
             Task("cut", "cw.op.cut", 30)]
    dispatch, schedule = planned(tasks, {"fry": "robot:1", "boil": "robot:2", "cut": "robot:2"})
    assert [schedule.tasks[t].start_s for t in ("fry", "boil", "cut")] == [0, 120, 180]
    # boil is ready and its robot idle, but fry takes the hob first; cut needs no hob and goes
    assert dispatch.next_goals() == [("fry", "robot:1"), ("cut", "robot:2")]
    dispatch.start("fry")
    dispatch.start("cut")
    assert dispatch.finish("cut", True) == []
    assert dispatch.next_goals() == []  # robot:2 is idle, but the hob is held
    with pytest.raises(ValueError, match=f"{HOB} held by running fry"):
        dispatch.start("boil")
    dispatch.finish("fry", True)
    assert dispatch.next_goals() == [("boil", "robot:2")]


def test_a_failure_blocks_its_successors_transitively_but_not_an_independent_branch():
    tasks = [Task("a", "cw.op.cut", 60), Task("b", "cw.op.saute", 60, predecessors=("a",)),
             Task("c", "cw.op.plate", 30, predecessors=("b",)), Task("d", "cw.op.wash", 30),
             Task("u", "cw.op.garnish", 10, predecessors=("b",))]  # nobody bids: unassigned
    dispatch, _ = planned(tasks, {"a": "robot:1", "b": "robot:2", "c": "robot:1", "d": "robot:2"})
    assert dispatch.state("u") == TaskState.UNASSIGNED
    dispatch.start("a")
    assert dispatch.finish("a", False, "knife slipped") == ["b", "c", "u"]
    assert dispatch.state("a") == TaskState.FAILED and dispatch.detail("a") == "knife slipped"
    assert {t: dispatch.state(t) for t in "bcu"} == {t: TaskState.BLOCKED for t in "bcu"}
    assert dispatch.detail("c") == "predecessor a failed"
    assert dispatch.next_goals() == [("d", "robot:2")]  # the independent branch carries on
    assert not dispatch.done
    run(dispatch, "d")
    assert dispatch.state("d") == TaskState.COMPLETED
    assert dispatch.done and dispatch.outcome == "failed"
    with pytest.raises(ValueError, match="cannot finish a completed task"):
        dispatch.finish("d", True)


def test_losing_a_robot_fails_what_it_runs_and_unassigns_what_it_had_not_started():
    tasks = [Task("a", "cw.op.cut", 60), Task("b", "cw.op.saute", 60, predecessors=("a",)),
             Task("c", "cw.op.wash", 30), Task("d", "cw.op.stir", 30)]
    dispatch, _ = planned(tasks, {"a": "robot:1", "b": "robot:2", "c": "robot:1", "d": "robot:2"})
    assert dict(dispatch.next_goals()) == {"a": "robot:1", "d": "robot:2"}
    dispatch.start("a")
    moved, failed = dispatch.lose("robot:1", "offline")
    assert (moved, failed) == (["c"], ["a"])
    assert dispatch.state("a") == TaskState.FAILED and dispatch.detail("a") == "robot:1 lost: offline"
    assert dispatch.state("b") == TaskState.BLOCKED  # it needed a
    assert dispatch.state("c") == TaskState.UNASSIGNED and dispatch.actor("c") is None
    assert dispatch.state("d") == TaskState.PENDING and dispatch.next_goals() == [("d", "robot:2")]
    with pytest.raises(ValueError, match="robot:1 was lost"):
        dispatch.reassign("c", "robot:1")
    dispatch.reassign("c", "robot:2")
    assert dispatch.state("c") == TaskState.PENDING and dispatch.actor("c") == "robot:2"
    with pytest.raises(ValueError, match="cannot reassign a pending task"):
        dispatch.reassign("c", "robot:3")


def test_a_replan_after_a_loss_puts_the_moved_task_on_another_robot_and_it_runs():
    tasks = [Task("p", "cw.op.cut", 60), Task("q", "cw.op.wash", 60), Task("s", "cw.op.saute", 100)]
    dispatch, schedule = planned(tasks, {"p": "robot:1", "q": "robot:1", "s": "robot:2"}, q=("robot:2", 200))
    assert schedule.actor_of("q") == "robot:1"  # robot:2 bid, but robot:1 is sooner
    assert dict(dispatch.next_goals()) == {"p": "robot:1", "s": "robot:2"}
    dispatch.start("p")
    dispatch.start("s")
    assert dispatch.started == ["p", "s"]
    assert dispatch.lose("robot:1", "battery") == (["q"], ["p"])
    bids = [bid("robot:1", "p", 60), bid("robot:1", "q", 60), bid("robot:2", "s", 100), bid("robot:2", "q", 200)]
    after = replan(schedule, tasks, bids, started=dispatch.started, lost_actor="robot:1", now_s=30, solver="greedy")
    assert dispatch.apply(after) == ["q"]
    assert dispatch.state("q") == TaskState.PENDING and dispatch.actor("q") == "robot:2"
    assert dispatch.state("p") == TaskState.FAILED  # a pinned, started task is not revived
    assert dispatch.next_goals() == []  # robot:2 still runs s
    dispatch.finish("s", True)
    assert dispatch.next_goals() == [("q", "robot:2")]
    run(dispatch, "q")
    assert dispatch.done and dispatch.outcome == "failed"  # p failed with its robot
    assert dispatch.summary()["q"] == {"state": "completed", "actor": "robot:2", "detail": ""}


def test_apply_takes_the_new_planned_starts_of_pending_tasks():
    tasks = [Task("a", "cw.op.cut", 60), Task("b", "cw.op.wash", 60)]
    bids = [bid("robot:1", "a", 60), bid("robot:2", "b", 60, eta=30)]
    schedule = allocate(tasks, bids, solver="greedy")
    dispatch = Dispatch(tasks, schedule)
    assert dispatch.next_goals() == [("a", "robot:1"), ("b", "robot:2")]
    retimed = replace(schedule, tasks={"a": replace(schedule.tasks["a"], start_s=90.0), "b": schedule.tasks["b"]})
    assert dispatch.apply(retimed) == []  # nothing was unassigned
    assert dispatch.next_goals() == [("b", "robot:2"), ("a", "robot:1")]


def test_unassignable_tasks_start_unassigned_and_leave_the_run_failed():
    tasks = [Task("a", "cw.op.cut", 60), Task("x", "cw.op.flambe", 30)]
    dispatch, _ = planned(tasks, {"a": "robot:1"})
    assert dispatch.state("x") == TaskState.UNASSIGNED and dispatch.actor("x") is None
    assert dispatch.next_goals() == [("a", "robot:1")]
    run(dispatch, "a")
    assert dispatch.done and dispatch.outcome == "failed"
    with pytest.raises(ValueError, match="cannot start a unassigned task"):
        dispatch.start("x")
    dispatch.reassign("x", "robot:1")
    assert not dispatch.done and dispatch.next_goals() == [("x", "robot:1")]
    run(dispatch, "x")
    assert dispatch.outcome == "completed"


def test_a_schedule_or_graph_naming_unknown_tasks_is_refused():
    tasks = [Task("a", "cw.op.cut", 60), Task("b", "cw.op.cut", 60)]
    _, schedule = planned(tasks, {"a": "robot:1", "b": "robot:1"})
    with pytest.raises(ValueError, match="unknown task"):
        Dispatch(tasks[:1], schedule)
    with pytest.raises(ValueError, match="follows unknown task 'z'"):
        Dispatch([Task("a", "cw.op.cut", 60, predecessors=("z",))], allocate([], [], solver="greedy"))
    with pytest.raises(ValueError, match="unknown task"):
        Dispatch(tasks, schedule).state("nope")


def test_giving_up_an_unassigned_task_blocks_what_follows_and_ends_the_run():
    tasks = [Task("a", "cw.op.cut", 10), Task("b", "cw.op.saute", 10, predecessors=("a",)), Task("c", "cw.op.stir", 10)]
    schedule = allocate(tasks, [bid("robot:x", "b", 10), bid("robot:x", "c", 10)])
    run = Dispatch(tasks, schedule)
    assert run.state("a") == TaskState.UNASSIGNED
    assert run.next_goals() == [("c", "robot:x")]  # b waits for a, which nobody does
    assert run.give_up("a", "nobody bid") == ["b"]
    assert (run.state("a"), run.state("b")) == (TaskState.FAILED, TaskState.BLOCKED)
    with pytest.raises(ValueError, match="cannot give up a failed task"):
        run.give_up("a", "again")
    run.start("c")
    run.finish("c", True)
    assert run.done and run.outcome == "failed"


def test_a_task_takes_over_what_another_robot_made_and_nothing_its_own_robot_made():
    tasks = [Task("a", "cw.op.cut", 60), Task("b", "cw.op.simmer", 60), Task("c", "cw.op.mix", 30, predecessors=("a", "b"))]
    dispatch, _ = planned(tasks, {"a": "robot:1", "b": "robot:2", "c": "robot:1"})
    run(dispatch, "a")
    assert dispatch.handoffs_into("c") == []  # b has not completed yet: nothing to take over
    run(dispatch, "b")
    assert dispatch.handoffs_into("c") == [("b", "robot:2")]  # a was robot:1's own
    assert dispatch.handoffs_into("a") == [] and dispatch.op("b") == "cw.op.simmer"
