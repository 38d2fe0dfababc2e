"""The contract net's CloudEvents (issue 11): cfp, bid, decline, award and plan, and the task events
that carry out the awards, valid against the standard's event schema and ours, with stable ids."""

from __future__ import annotations

import pytest

from cookwala_ros.core import schemas
from cookwala_ros.teaming import events
from cookwala_ros.teaming.allocator import allocate
from cookwala_ros.teaming.types import Award, Bid, Decline, Task

from teaming_fixtures import cfp, standard_validator

TASKS = (Task("r#n1", "cw.op.cut", 60), Task("r#n2", "cw.op.saute", 120, predecessors=("r#n1",)))
SOURCE = "urn:cookwala:coordinator:test"


def every_kind() -> list[dict]:
    call = cfp(*TASKS)
    bids = [Bid("cfp-1", "robot:a", "r#n1", True, 5, 60), Bid("cfp-1", "robot:b", "r#n2", True, 0, 120)]
    plan = allocate(TASKS, bids, handoff_s=30).to_team_plan()
    return [events.cfp_event(call, source=SOURCE, time_s=1_800_000_000.0),
            *(events.answer_event(b, source="urn:cookwala:device:a", time_s=1_800_000_001.0, session="session-1")
              for b in bids),
            events.answer_event(Decline("cfp-1", "robot:c", "r#n2", "missing_op"), source="urn:cookwala:device:c",
                                time_s=1_800_000_001.5),
            events.award_event(Award("cfp-1", "robot:a", ("r#n1",), "robot:hub"), source=SOURCE, time_s=1_800_000_002.0),
            events.plan_event(call, plan, source=SOURCE, time_s=1_800_000_002.0)]


def test_each_kind_has_its_type_subject_and_a_stable_id():
    made = every_kind()
    assert [e["type"] for e in made] == ["cookwala.team.cfp", "cookwala.team.bid", "cookwala.team.bid",
                                         "cookwala.team.decline", "cookwala.team.award", "cookwala.team.plan"]
    assert {e["subject"] for e in made} == {"cfp-1"}
    assert len({e["id"] for e in made}) == len(made)
    assert [e["id"] for e in every_kind()] == [e["id"] for e in made]  # the same message, the same id
    assert made[0]["time"] == "2027-01-15T08:00:00.000Z" and made[0]["cookwalasession"] == "session-1"
    assert made[-1]["data"][events.PLAN_KEY]["makespan"] == "PT3M35S"


def test_every_event_is_valid_for_our_schemas():
    for event in every_kind():
        assert schemas.validate(event, "CloudEvent") == [], event["type"]


def test_every_event_is_valid_for_the_standard(spec_dir):
    validator = standard_validator(spec_dir, "event.schema.json")
    for event in every_kind():
        assert list(validator.iter_errors(event)) == [], event
    broken = dict(every_kind()[4], data={"cfpId": "cfp-1", "award": {"actorId": "robot:a", "winner": True}})
    assert list(validator.iter_errors(broken))  # a negative control: the validator reads the data


# ------------------------------------------------------------------ task events (carrying out awards)

def every_task_kind() -> list[dict]:
    at = dict(cfp_id="cfp-1", source=SOURCE, session="session-1")
    return [events.task_event("assigned", "r#n1", "robot:a", time_s=1_800_000_002.0, **at),
            events.task_event("started", "r#n1", "robot:a", time_s=1_800_000_003.0, **at),
            events.task_event("completed", "r#n1", "robot:a", time_s=1_800_000_063.0, **at),
            events.task_event("failed", "r#n2", "robot:b", time_s=1_800_000_070.0, detail="robot:b lost: offline",
                              **at),
            events.task_event("reassigned", "r#n2", "robot:c", time_s=1_800_000_071.0, detail="robot:b lost: offline",
                              previous_actor="robot:b", **at)]


def test_each_task_kind_has_its_type_state_subject_and_a_stable_id():
    made = every_task_kind()
    assert [e["type"] for e in made] == ["cookwala.task.assigned", "cookwala.task.started", "cookwala.task.completed",
                                         "cookwala.task.failed", "cookwala.task.reassigned"]
    assert [e["data"]["state"] for e in made] == ["scheduled", "working", "completed", "failed", "scheduled"]
    assert [e["subject"] for e in made] == ["r#n1", "r#n1", "r#n1", "r#n2", "r#n2"]
    assert [e["id"] for e in made] == ["cfp-1:task.assigned:r#n1", "cfp-1:task.started:r#n1",
                                       "cfp-1:task.completed:r#n1", "cfp-1:task.failed:r#n2",
                                       "cfp-1:task.reassigned:r#n2:robot:c"]
    assert [e["id"] for e in every_task_kind()] == [e["id"] for e in made]
    other_robot = events.task_event("reassigned", "r#n2", "robot:d", cfp_id="cfp-1", source=SOURCE, time_s=0.0)
    assert other_robot["id"] not in {e["id"] for e in made}  # a second move of the same task is a new message
    first = made[0]["data"]
    assert first["assignee"] == {"kind": "robot", "id": "robot:a"} and first[events.CFP_KEY] == "cfp-1"
    assert (first["recipeId"], first["nodeId"]) == ("r", "n1") and "reason" not in first
    assert made[3]["data"]["reason"] == "robot:b lost: offline"
    assert made[4]["data"][events.PREVIOUS_ACTOR_KEY] == "robot:b" and made[4]["data"]["assignee"]["id"] == "robot:c"
    assert made[0]["cookwalasession"] == "session-1"


def test_a_task_event_without_a_recipe_form_id_names_no_node_and_an_unknown_kind_is_refused():
    plain = events.task_event("started", "chop", "human:primary", cfp_id="cfp-2", source=SOURCE, time_s=0.0)
    assert "nodeId" not in plain["data"] and "recipeId" not in plain["data"]
    assert plain["data"]["assignee"] == {"kind": "human", "id": "human:primary"}
    assert events.actor_ref("neo-1") == {"kind": "robot", "id": "neo-1"}
    with pytest.raises(ValueError, match="kind"):
        events.task_event("progressed", "chop", "robot:a", cfp_id="cfp-2", source=SOURCE, time_s=0.0)


def test_every_task_event_is_valid_for_our_schemas_and_the_standard(spec_dir):
    validator = standard_validator(spec_dir, "event.schema.json")
    for event in every_task_kind():
        assert schemas.validate(event, "CloudEvent") == [], event["type"]
        assert list(validator.iter_errors(event)) == [], event
    broken = dict(every_task_kind()[1], data={"taskId": "r#n1", "state": "running"})
    assert list(validator.iter_errors(broken))  # a negative control: "running" is not a TaskState
    assert schemas.validate(broken, "CloudEvent") != []


def test_a_replan_names_the_tasks_and_the_lost_robot_and_is_a_valid_event(spec_dir):
    call = cfp(*TASKS)
    event = events.replan_event(call, ["r#n2"], "robot:b", source=SOURCE, time_s=1_800_000_003.0, seq=2)
    assert event["type"] == "cookwala.team.replan" and event["subject"] == "cfp-1"
    assert event["id"] == "cfp-1:replan:2" and event["cookwalasession"] == "session-1"
    assert event["data"]["tasks"] == ["r#n2"] and event["data"][events.LOST_ACTOR_KEY] == "robot:b"
    assert event["data"][events.REPLAN_REASON_KEY] == "actor_lost"
    assert schemas.validate(event, "CloudEvent") == []
    standard_validator(spec_dir, "event.schema.json").validate(event)


# ------------------------------------------------------------------ hand-offs between robots

def every_handoff_state() -> list[dict]:
    at = dict(for_task="r#n3", cfp_id="cfp-1", source=SOURCE, session="session-1")
    return [events.handoff_event("proposed", "r#n2", "robot:b", "robot:a", item_op="cw.op.simmer", time_s=1.0, **at),
            events.handoff_event("completed", "r#n2", "robot:b", "robot:a", item_op="cw.op.simmer", time_s=2.0, **at),
            events.handoff_event("refused", "r#n1", "robot:c", "robot:a", item_op="cw.op.cut", time_s=3.0,
                                 detail="/a/execute_node rejected the goal", **at)]


def test_a_handoff_names_both_robots_the_item_and_its_hazard_with_a_stable_id():
    made = every_handoff_state()
    assert [e["type"] for e in made] == ["cookwala.handoff.proposed", "cookwala.handoff.completed",
                                         "cookwala.handoff.refused"]
    assert [e["data"]["state"] for e in made] == ["proposed", "completed", "refused"]
    assert made[0]["data"]["from"] == {"kind": "robot", "id": "robot:b"} and made[0]["data"]["to"]["id"] == "robot:a"
    assert made[0]["subject"] == made[0]["data"]["item"] == "r#n2" and made[0]["data"][events.FOR_TASK_KEY] == "r#n3"
    assert made[0]["data"]["hazards"] == ["hot_vessel"] and "hazards" not in made[2]["data"]  # simmered, not cut
    assert made[0]["data"]["id"] == made[1]["data"]["id"] != made[0]["id"] != made[1]["id"]
    assert [e["id"] for e in every_handoff_state()] == [e["id"] for e in made]
    assert made[2]["data"]["x-cookwala-ros-reason"] == "/a/execute_node rejected the goal"
    with pytest.raises(ValueError, match="state"):
        events.handoff_event("acked", "r#n2", "robot:b", "robot:a", for_task="r#n3", item_op="cw.op.simmer",
                             cfp_id="cfp-1", source=SOURCE, time_s=0.0)


def test_every_handoff_event_is_valid_for_our_schemas_and_the_standard(spec_dir):
    validator = standard_validator(spec_dir, "event.schema.json")
    handoff = standard_validator(spec_dir, "session.schema.json#/$defs/Handoff")
    for event in every_handoff_state():
        assert schemas.validate(event, "CloudEvent") == [], event["type"]
        assert list(validator.iter_errors(event)) == [], event
        assert list(handoff.iter_errors(event["data"])) == [], event["data"]
    assert list(handoff.iter_errors(dict(every_handoff_state()[0]["data"], state="dropped")))  # a negative control
