"""TeamData in and out: round trips, and malformed dicts name the field."""

from __future__ import annotations

import json

import pytest

from cookwala_ros.teaming.allocator import allocate
from cookwala_ros.teaming.types import (
    Award, Bid, CallForProposals, Decline, Task, TaskNeeds, answers_from_team_data,
)

from teaming_fixtures import bid, cfp, standard_validator

TASKS = (Task("r#n1", "cw.op.simmer", 600, needs=TaskNeeds(("cw.eq.heat.hob",), ("cw.sense.liquid_temp",), True),
              resources=("appliance:hob-1",)),
         Task("r#n2", "cw.op.mix", 30, predecessors=("r#n1",)))


def test_round_trips():
    call = cfp(*TASKS)
    assert CallForProposals.from_team_data(json.loads(json.dumps(call.to_team_data()))) == call
    b = Bid("cfp-1", "robot:a", "r#n1", True, 5, 600, 700, 80)
    assert answers_from_team_data(b.to_team_data()) == [b]
    d = Decline("cfp-1", "robot:a", "r#n2", "missing_op", "no mixer")
    assert answers_from_team_data(d.to_team_data()) == [d]
    a = Award("cfp-1", "robot:a", ("r#n1", "r#n2"), "robot:hub")
    assert Award.from_team_data(a.to_team_data()) == a


def test_a_bid_for_several_tasks_splits_its_duration_unless_it_says_per_task():
    data = {"cfpId": "cfp-1", "bid": {"actorId": "robot:a", "canDo": ["x", "y"], "etaS": 0, "durationS": 100}}
    assert [b.duration_s for b in answers_from_team_data(data)] == [50, 50]
    data["bid"]["x-cookwala-ros-durationsS"] = {"x": 70, "y": 30}
    assert [b.duration_s for b in answers_from_team_data(data)] == [70, 30]
    data["tasks"] = ["z"]
    assert [(b.task_id, b.can_do) for b in answers_from_team_data(data)] == [("x", True), ("y", True), ("z", False)]


@pytest.mark.parametrize("data, field", [
    ([], "TeamData"),
    ({"cfpId": 3}, "cfpId"),
    ({"cfpId": "c", "colour": "red"}, "colour"),
    ({"cfpId": "c", "tasks": ["ok", 4]}, "tasks/1"),
    ({"cfpId": "c", "bid": {"actorId": "a", "canDo": ["x"], "etaS": True, "durationS": 1}}, "bid/etaS"),
    ({"cfpId": "c", "bid": {"actorId": "a", "canDo": ["x"], "etaS": -1, "durationS": 1}}, "bid/etaS"),
    ({"cfpId": "c", "bid": {"actorId": "a", "canDo": ["x"], "etaS": 0}}, "bid/durationS"),
    ({"cfpId": "c", "bid": {"actorId": "a", "canDo": ["x"], "etaS": 0, "durationS": 1, "price": 2}}, "bid/price"),
    ({"cfpId": "c", "bid": {"actorId": "a", "canDo": ["x"], "etaS": 0, "durationS": 1, "batteryAfterPct": 120}},
     "bid/batteryAfterPct"),
    ({"cfpId": "c", "from": "a", "tasks": ["x"], "x-cookwala-ros-reason": "tired"}, "x-cookwala-ros-reason"),
    ({"from": "a", "tasks": ["x"]}, "cfpId"),
])
def test_malformed_answers_name_the_field(data, field):
    with pytest.raises(ValueError, match=f"^{field}"):
        answers_from_team_data(data)


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d.pop("x-cookwala-ros-tasks"), "x-cookwala-ros-tasks"),
    (lambda d: d["x-cookwala-ros-tasks"][1].update(durationS="long"), "x-cookwala-ros-tasks/1/durationS"),
    (lambda d: d["x-cookwala-ros-tasks"][0]["needs"].update(attended="yes"), "x-cookwala-ros-tasks/0/needs/attended"),
    (lambda d: d["x-cookwala-ros-tasks"][0].update(colour="red"), "x-cookwala-ros-tasks/0/colour"),
    (lambda d: d.update(tasks=["r#n1"]), "tasks"),
    (lambda d: d.update(deadline=5), "deadline"),
])
def test_malformed_calls_name_the_field(mutate, field):
    data = cfp(*TASKS).to_team_data()
    mutate(data)
    with pytest.raises(ValueError, match=f"^{field}"):
        CallForProposals.from_team_data(data)


def test_team_data_and_team_plan_validate_against_the_standard(spec_dir):
    team_data = standard_validator(spec_dir, "event.schema.json#/$defs/TeamData")
    team_plan = standard_validator(spec_dir, "advice.schema.json#/$defs/TeamPlan")
    call = cfp(*TASKS)
    documents = [call.to_team_data(), Bid("cfp-1", "robot:a", "r#n1", True, 5, 600, None, 80).to_team_data(),
                 Decline("cfp-1", "robot:b", "r#n2", "busy").to_team_data(),
                 Award("cfp-1", "robot:a", ("r#n1",), "robot:hub").to_team_data()]
    for document in documents:
        assert list(team_data.iter_errors(document)) == [], document
    # a negative control, so a validator that accepts everything cannot pass this test
    assert list(team_data.iter_errors({"cfpId": "c", "bid": {"actorId": "a", "price": 2}}))
    schedule = allocate(TASKS + (Task("r#n3", "cw.op.cut", 90), Task("r#n4", "cw.op.mix", 20, predecessors=("r#n3",))),
                        [bid("robot:a", "r#n1", 600), bid("robot:b", "r#n2", 30.5), bid("robot:a", "r#n3", 90),
                         bid("robot:b", "r#n3", 80)])
    plan = schedule.to_team_plan()
    assert plan["handoffs"] and plan["leases"] and plan["x-cookwala-ros-unassignable"]
    assert list(team_plan.iter_errors(plan)) == [], plan
    assert list(team_plan.iter_errors({**plan, "makespan": "15 minutes"}))
