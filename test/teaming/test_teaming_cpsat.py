"""CP-SAT team plan (issue 11): shorter than greedy where greedy falls short, never longer, every
constraint held, the same plan at any load, and the standard's TeamPlan."""

from __future__ import annotations

import random

import pytest

from cookwala_ros.teaming import cpsat
from cookwala_ros.teaming.allocator import SOLVER_NAME as GREEDY, allocate, replan
from cookwala_ros.teaming.types import Task

from teaming_fixtures import bid, standard_validator

pytestmark = pytest.mark.skipif(not cpsat.available(), reason="OR-Tools is not installed (requirements/python.txt)")


def check_plan(schedule, tasks, bids, handoff_s: float) -> None:
    """Every rule of the job shop, from the plan alone."""
    by_id = {t.id: t for t in tasks}
    offers = {(b.task_id, b.actor_id): b for b in bids if b.can_do}
    placed = schedule.tasks
    for s in placed.values():
        offer = offers[(s.task_id, s.actor_id)]  # only a robot that bid for it
        assert s.end_s - s.start_s == pytest.approx(offer.duration_s)
        assert s.start_s >= offer.eta_s - 1e-9
        for p in by_id[s.task_id].predecessors:
            gap = handoff_s if placed[p].actor_id != s.actor_id else 0.0
            assert s.start_s >= placed[p].end_s + gap - 1e-6, (p, s.task_id)
    ordered = sorted(placed.values(), key=lambda s: s.start_s)
    for i, a in enumerate(ordered):
        for b in ordered[i + 1:]:
            shares = a.actor_id == b.actor_id or set(a.resources) & set(b.resources)
            assert not (shares and b.start_s < a.end_s - 1e-6), f"{a.task_id} and {b.task_id} overlap"


def test_cp_sat_balances_what_greedy_does_not():
    # greedy (longest first, earliest finish): 3+2+2 on one robot, 3+2 on the other = 7; best is 6
    tasks = [Task(n, "cw.op.cut", d) for n, d in (("a", 3), ("b", 3), ("c", 2), ("d", 2), ("e", 2))]
    bids = [bid(r, t.id, t.duration_s) for r in ("robot:1", "robot:2") for t in tasks]
    greedy = allocate(tasks, bids, handoff_s=0, solver="greedy")
    solved = allocate(tasks, bids, handoff_s=0)
    assert greedy.makespan_s == 7 and solved.makespan_s == 6
    check_plan(solved, tasks, bids, 0)
    plan = solved.to_team_plan()
    assert plan["solver"] == {"name": cpsat.SOLVER_NAME, "objective": "makespan", "status": "optimal"}
    assert greedy.to_team_plan()["solver"]["name"] == GREEDY


def test_a_greedy_plan_that_is_already_best_stays_and_is_marked_optimal():
    tasks = [Task("cut", "cw.op.cut", 60), Task("fry", "cw.op.saute", 120, predecessors=("cut",))]
    bids = [bid("robot:arm", "cut", 60), bid("robot:cooker", "fry", 120)]
    schedule = allocate(tasks, bids, handoff_s=45)
    assert {t: (s.actor_id, s.start_s) for t, s in schedule.tasks.items()} == {
        "cut": ("robot:arm", 0), "fry": ("robot:cooker", 105)}
    assert schedule.to_team_plan()["solver"] == {"name": GREEDY, "objective": "makespan", "status": "optimal"}


def test_hand_offs_and_a_shared_hob_shape_the_solved_plan():
    # two soups on one hob: whoever heats, the hob serves one pot at a time; chopping moves
    # between robots only with the hand-off
    tasks = [Task("chop1", "cw.op.cut", 40), Task("chop2", "cw.op.cut", 40),
             Task("boil1", "cw.op.boil", 100, predecessors=("chop1",), resources=("appliance:hob-1",)),
             Task("boil2", "cw.op.boil", 100, predecessors=("chop2",), resources=("appliance:hob-1",))]
    bids = [bid("robot:a", t.id, t.duration_s) for t in tasks] + [bid("robot:b", t.id, t.duration_s) for t in tasks]
    schedule = allocate(tasks, bids, handoff_s=30)
    check_plan(schedule, tasks, bids, 30)
    assert schedule.makespan_s == 240  # 40 chop, 100 + 100 on the hob; the second chop fits meanwhile
    hob = sorted((s.start_s, s.end_s) for s in schedule.tasks.values() if s.resources)
    assert hob[0][1] <= hob[1][0]


@pytest.mark.parametrize("seed", range(12))
def test_random_kitchens_never_get_a_longer_plan_and_every_rule_holds(seed):
    rng = random.Random(seed)
    robots = [f"robot:{i}" for i in range(rng.randint(2, 3))]
    tasks: list[Task] = []
    for i in range(rng.randint(4, 9)):
        preds = tuple(sorted({f"t{j}" for j in range(i) if rng.random() < 0.25}))
        resources = ("appliance:hob-1",) if rng.random() < 0.3 else ()
        tasks.append(Task(f"t{i}", "cw.op.mix", None, predecessors=preds, resources=resources))
    bids = []
    for t in tasks:
        able = rng.sample(robots, rng.randint(1, len(robots)))
        bids += [bid(r, t.id, rng.randint(5, 60), eta=rng.choice((0, 0, 10))) for r in sorted(able)]
    handoff = rng.choice((0, 15, 30))
    greedy = allocate(tasks, bids, handoff_s=handoff, solver="greedy")
    solved = allocate(tasks, bids, handoff_s=handoff)
    check_plan(greedy, tasks, bids, handoff)
    check_plan(solved, tasks, bids, handoff)
    assert solved.makespan_s <= greedy.makespan_s
    assert solved.critical_path()[-1] == max(solved.tasks.values(), key=lambda s: (s.end_s, s.task_id)).task_id
    again = allocate(tasks, bids, handoff_s=handoff)  # one worker, a deterministic budget: the same plan
    assert again.tasks == solved.tasks and again.to_team_plan() == solved.to_team_plan()


def test_replan_with_cp_sat_keeps_started_work_and_moves_the_lost_robots_tasks():
    tasks = [Task(n, "cw.op.cut", 3 if n in "ab" else 2) for n in "abcdef"]
    bids = [bid(r, t.id, t.duration_s) for r in ("robot:1", "robot:2", "robot:3") for t in tasks]
    first = allocate(tasks, bids, handoff_s=0)
    lost = first.tasks["f"].actor_id
    started = {t for t, s in first.tasks.items() if s.start_s == 0}
    again = replan(first, tasks, bids, started=started, lost_actor=lost, now_s=1.0)
    check_plan(again, tasks, bids, 0)
    for t in started:
        assert again.tasks[t] == first.tasks[t]  # only unstarted tasks move
    for t, s in again.tasks.items():
        if t not in started:
            assert s.actor_id != lost and s.start_s >= 1.0
            if first.tasks[t].actor_id != lost:
                assert s.actor_id == first.tasks[t].actor_id  # the others keep their own


def test_an_unknown_solver_is_refused_by_name():
    with pytest.raises(ValueError, match="solver: 'cpsat' is not one of auto, cp-sat, greedy"):
        allocate([Task("a", "cw.op.cut", 1)], [bid("robot:1", "a", 1)], solver="cpsat")


def test_a_solved_plan_is_the_standards_team_plan(spec_dir):
    team_plan = standard_validator(spec_dir, "advice.schema.json#/$defs/TeamPlan")
    tasks = [Task(n, "cw.op.cut", d) for n, d in (("a", 3), ("b", 3), ("c", 2), ("d", 2), ("e", 2))]
    plan = allocate(tasks, [bid(r, t.id, t.duration_s) for r in ("robot:1", "robot:2") for t in tasks],
                    handoff_s=0).to_team_plan()
    assert plan["solver"]["name"] == cpsat.SOLVER_NAME
    assert list(team_plan.iter_errors(plan)) == [], plan
