"""The bidder declines with the executor's own reasons and bids for what it can do."""

from __future__ import annotations

import pytest

from cookwala_ros.teaming.bidder import answer_cfp
from cookwala_ros.teaming.types import Bid, Decline, Task, TaskNeeds

from teaming_fixtures import capabilities, cfp

HOB_ROBOT = capabilities("robot:cooker", ["cw.op.simmer", "cw.op.saute", "cw.op.mix"],
                         sensors=["cw.sense.liquid_temp"], heat=["cw.eq.heat.hob"])


def one(task: Task, caps: dict = HOB_ROBOT, **kwargs) -> Bid | Decline:
    (answer,) = answer_cfp(cfp(task), caps, **kwargs)
    return answer


def test_bids_for_a_task_it_can_do_with_the_tasks_duration():
    answer = one(Task("r#n1", "cw.op.simmer", 600, needs=TaskNeeds(equipment=("cw.eq.heat.hob",))), eta_s=15)
    assert answer == Bid("cfp-1", "robot:cooker", "r#n1", True, 15, 600, 615)


@pytest.mark.parametrize("task, reason", [
    (Task("r#n1", "cw.op.cut", 60), "missing_op"),
    (Task("r#n1", "cw.op.simmer", 60, needs=TaskNeeds(sensors=("cw.sense.core_temp",))), "missing_sensor"),
    (Task("r#n1", "cw.op.simmer", 60, needs=TaskNeeds(equipment=("cw.eq.heat.oven",))), "missing_equipment"),
    (Task("r#n1", "cw.op.saute", 60), "needs_human_present"),  # the op may not run unattended
    (Task("r#n1", "cw.op.mix", 60, needs=TaskNeeds(attended=True)), "needs_human_present"),
    (Task("r#n1", "cw.op.mix"), "other"),  # no duration, and the vocabulary gives no default
])
def test_declines_with_a_named_reason(task, reason):
    answer = one(task)
    assert isinstance(answer, Decline)
    assert (answer.reason, answer.task_id, answer.actor_id) == (reason, "r#n1", "robot:cooker")
    assert answer.detail


def test_a_person_present_lifts_only_the_presence_declines():
    assert isinstance(one(Task("r#n1", "cw.op.saute", 60), human_present=True), Bid)
    assert isinstance(one(Task("r#n1", "cw.op.mix", 60, needs=TaskNeeds(attended=True)), human_present=True), Bid)
    # a person present does not make the robot able to cut: it does not bid for the person's work
    assert one(Task("r#n1", "cw.op.cut", 60), human_present=True).reason == "missing_op"


def test_a_sensor_ladder_without_a_rung_is_missing_sensor():
    # deep frying is verified by the oil thermometer only: no model, time or person rung
    task = Task("r#n1", "cw.op.deep_fry", 300)
    no_thermometer = capabilities("robot:fryer", ["cw.op.deep_fry"])
    assert one(task, no_thermometer, human_present=True).reason == "missing_sensor"
    with_thermometer = capabilities("robot:fryer", ["cw.op.deep_fry"], sensors=["cw.sense.oil_temp"])
    assert isinstance(one(task, with_thermometer, human_present=True), Bid)


def test_a_busy_robot_declines_everything():
    answers = answer_cfp(cfp(Task("r#n1", "cw.op.mix", 5), Task("r#n2", "cw.op.simmer", 5)), HOB_ROBOT, busy=True)
    assert [(a.task_id, a.reason) for a in answers] == [("r#n1", "busy"), ("r#n2", "busy")]


def test_the_projects_shipped_robot_answers_a_mixed_call():
    from cookwala_ros.capabilities import capabilities_document
    from cookwala_ros.device import load_device_config

    caps = capabilities_document(load_device_config())
    answers = answer_cfp(cfp(
        Task("r#boil", "cw.op.boil", 300, needs=TaskNeeds(equipment=("cw.eq.heat.hob",))),
        Task("r#cut", "cw.op.cut", 60),
        Task("r#bake", "cw.op.simmer", 60, needs=TaskNeeds(equipment=("cw.eq.heat.oven",))),
    ), caps)
    assert [type(a).__name__ for a in answers] == ["Bid", "Decline", "Decline"]
    assert answers[0].actor_id == caps["actor"]["id"]
    assert [a.reason for a in answers[1:]] == ["missing_op", "missing_equipment"]


def test_a_document_without_an_actor_needs_an_actor_id():
    caps = {"capabilities": {"ops": [{"op": "cw.op.mix"}]}}
    with pytest.raises(ValueError, match="actor/id"):
        answer_cfp(cfp(Task("r#n1", "cw.op.mix", 5)), caps)
    assert isinstance(answer_cfp(cfp(Task("r#n1", "cw.op.mix", 5)), caps, actor_id="robot:x")[0], Bid)
