"""Greedy team plan: precedence, hand-offs, a shared hob, determinism, re-planning."""

from __future__ import annotations

import pytest

from cookwala_ros.teaming.allocator import allocate, replan
from cookwala_ros.teaming.types import Decline, Task

from teaming_fixtures import bid


def spans(schedule) -> dict[str, tuple[str, float, float]]:
    return {t: (s.actor_id, s.start_s, s.end_s) for t, s in sorted(schedule.tasks.items())}


def test_a_task_starts_after_its_predecessors_end():
    tasks = [Task("a", "cw.op.cut", 100), Task("b", "cw.op.cut", 50), Task("c", "cw.op.mix", 30, predecessors=("a", "b"))]
    bids = [bid(r, t.id, t.duration_s) for r in ("robot:1", "robot:2") for t in tasks]
    schedule = allocate(tasks, bids, handoff_s=0)
    got = spans(schedule)
    assert got["a"][0] != got["b"][0]  # the two cuts run side by side
    assert got["c"][1] == 100 and got["c"][0] == got["a"][0]
    assert schedule.makespan_s == 130
    assert schedule.critical_path() == ["a", "c"]


def test_a_hand_off_is_added_when_the_next_task_runs_on_another_robot():
    tasks = [Task("cut", "cw.op.cut", 60), Task("fry", "cw.op.saute", 120, predecessors=("cut",))]
    bids = [bid("robot:arm", "cut", 60), bid("robot:cooker", "fry", 120)]
    schedule = allocate(tasks, bids, handoff_s=45)
    assert spans(schedule) == {"cut": ("robot:arm", 0, 60), "fry": ("robot:cooker", 105, 225)}
    plan = schedule.to_team_plan()
    assert plan["handoffs"] == [{"from": "robot:arm", "to": "robot:cooker", "item": "cut", "at": "PT1M"}]
    assert plan["assignments"][0]["tasks"][0]["handoffTo"] == "robot:cooker"
    assert plan["makespan"] == "PT3M45S"


def test_the_same_robot_needs_no_hand_off_and_wins_on_finish_time():
    tasks = [Task("cut", "cw.op.cut", 60), Task("mix", "cw.op.mix", 60, predecessors=("cut",))]
    # robot:b mixes faster (50 s) but would need a 30 s hand-off: robot:a finishes first
    bids = [bid("robot:a", "cut", 60), bid("robot:a", "mix", 60), bid("robot:b", "mix", 50)]
    assert spans(allocate(tasks, bids, handoff_s=30))["mix"] == ("robot:a", 60, 120)
    assert spans(allocate(tasks, bids, handoff_s=5))["mix"] == ("robot:b", 65, 115)


def test_two_robots_never_use_one_hob_at_once():
    tasks = [Task("soup", "cw.op.simmer", 600, resources=("appliance:hob-1",)),
             Task("sauce", "cw.op.simmer", 300, resources=("appliance:hob-1",)),
             Task("salad", "cw.op.mix", 120)]
    bids = [bid(r, t.id, t.duration_s) for r in ("robot:a", "robot:b") for t in tasks]
    schedule = allocate(tasks, bids)
    hob = sorted((s.start_s, s.end_s) for s in schedule.tasks.values() if "appliance:hob-1" in s.resources)
    assert hob[0][1] <= hob[1][0]
    plan = schedule.to_team_plan()
    assert [lease["resource"] for lease in plan["leases"]] == ["appliance:hob-1", "appliance:hob-1"]
    # without the shared hob both simmers would run at once on the two robots
    free = allocate([Task(t.id, t.op, t.duration_s) for t in tasks], bids)
    assert free.makespan_s == 600 < schedule.makespan_s == 900


def test_ties_go_to_the_lower_actor_id_and_the_plan_is_deterministic():
    tasks = [Task("x", "cw.op.mix", 10)]
    bids = [bid("robot:b", "x", 10), bid("robot:a", "x", 10)]
    first = allocate(tasks, bids).to_team_plan()
    assert first["assignments"][0]["actorId"] == "robot:a"
    assert allocate(tasks, list(reversed(bids))).to_team_plan() == first


def test_eta_delays_a_robots_start():
    tasks = [Task("x", "cw.op.mix", 10)]
    schedule = allocate(tasks, [bid("robot:a", "x", 10, eta=100), bid("robot:b", "x", 50)])
    assert spans(schedule) == {"x": ("robot:b", 0, 50)}


def test_unknown_predecessor_and_cycles_are_refused():
    with pytest.raises(ValueError, match="unknown task 'zz'"):
        allocate([Task("a", "cw.op.mix", 1, predecessors=("zz",))], [])
    with pytest.raises(ValueError, match="cycle"):
        allocate([Task("a", "cw.op.mix", 1, predecessors=("b",)), Task("b", "cw.op.mix", 1, predecessors=("a",))], [])


def test_what_follows_an_unassignable_task_is_unassignable_too():
    tasks = [Task("a", "cw.op.cut", 10), Task("b", "cw.op.mix", 10, predecessors=("a",)), Task("c", "cw.op.mix", 10)]
    schedule = allocate(tasks, [bid("robot:a", "b", 10), bid("robot:a", "c", 10)],
                        declines=[Decline("cfp-1", "robot:a", "a", "missing_op")])
    assert set(schedule.tasks) == {"c"}
    assert [(u.task_id, u.reasons, u.detail) for u in schedule.unassignable] == [
        ("a", {"robot:a": "missing_op"}, "no robot can do it"),
        ("b", {}, "predecessor a is unassignable"),
    ]


def kitchen():
    tasks = [Task("n1", "cw.op.cut", 60), Task("n2", "cw.op.cut", 60),
             Task("n3", "cw.op.mix", 60, predecessors=("n1", "n2")), Task("n4", "cw.op.mix", 60, predecessors=("n3",)),
             Task("n5", "cw.op.cut", 60)]
    bids = [bid(r, t.id, t.duration_s) for r in ("robot:a", "robot:b", "robot:c") for t in tasks]
    return tasks, bids


def test_replan_moves_only_the_lost_robots_unstarted_tasks():
    tasks, bids = kitchen()
    before = allocate(tasks, bids, handoff_s=10)
    lost = before.tasks["n3"].actor_id
    started = {t for t, s in before.tasks.items() if s.start_s == 0}  # what was running at t=0
    after = replan(before, tasks, bids, started=started, lost_actor=lost, now_s=30)
    for t in started:  # started tasks keep robot and times, even the lost robot's
        assert after.tasks[t] == before.tasks[t]
    for t, s in before.tasks.items():
        if t not in started and s.actor_id != lost:  # others keep their unstarted work
            assert after.tasks[t].actor_id == s.actor_id and after.tasks[t].start_s >= 30
    moved = [t for t, s in before.tasks.items() if t not in started and s.actor_id == lost]
    assert moved and all(after.tasks[t].actor_id != lost for t in moved)
    assert all(after.tasks[t].start_s >= 30 for t in moved)
    assert after.unassignable == ()
    assert any(lost in a and "moved" in a for a in after.to_team_plan()["assumptions"])


def test_replan_reports_a_moved_task_nobody_else_can_do():
    tasks = [Task("fry", "cw.op.deep_fry", 300), Task("mix", "cw.op.mix", 60)]
    bids = [bid("robot:fryer", "fry", 300), bid("robot:fryer", "mix", 60), bid("robot:b", "mix", 90)]
    declines = [Decline("cfp-1", "robot:b", "fry", "missing_sensor")]
    before = allocate(tasks, bids, declines=declines)
    assert before.tasks["fry"].actor_id == "robot:fryer"
    after = replan(before, tasks, bids, started=(), lost_actor="robot:fryer", now_s=0, declines=declines)
    assert after.tasks["mix"].actor_id == "robot:b"
    (lost,) = after.unassignable
    assert lost.task_id == "fry" and lost.reasons == {"robot:b": "missing_sensor", "robot:fryer": "actor_lost"}
