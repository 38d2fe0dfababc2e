"""The contract net's CloudEvents (issue 11): cfp, bid, decline, award and plan, valid against the
standard's event schema and ours, with stable ids."""

from __future__ import annotations

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
