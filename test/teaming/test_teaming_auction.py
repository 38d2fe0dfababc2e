"""The auction: one window per cfp, early close, deadline close, ignored answers, awards."""

from __future__ import annotations

import pytest

from cookwala_ros.teaming.auction import AWARDED, CLOSED, COLLECTING, OPEN, Auction
from cookwala_ros.teaming.types import Bid, Decline, Task

from teaming_fixtures import DEADLINE_S, FakeClock, bid, cfp

ROBOTS = ("robot:a", "robot:b")


def two_task_auction(clock: FakeClock, **kwargs) -> Auction:
    return Auction(cfp(Task("r#n1", "cw.op.simmer", 60), Task("r#n2", "cw.op.mix", 30)), clock,
                   roster=ROBOTS, **kwargs)


def test_closes_early_when_every_robot_answered_every_task():
    clock = FakeClock()
    auction = two_task_auction(clock)
    assert auction.state == OPEN
    assert auction.submit(bid("robot:a", "r#n1", 60))
    assert auction.state == COLLECTING
    assert auction.submit(bid("robot:a", "r#n2", 30))
    assert auction.submit(Decline("cfp-1", "robot:b", "r#n1", "missing_op"))
    assert auction.state == COLLECTING  # robot:b has not answered r#n2 yet
    assert auction.submit(bid("robot:b", "r#n2", 20))
    assert auction.state == CLOSED and auction.closed_by == "all_answered"
    assert clock.now < DEADLINE_S
    # the window is shut: a later answer is late, even before the deadline
    assert not auction.submit(bid("robot:b", "r#n1", 10))
    assert [r.reason for r in auction.rejected] == ["late"]


def test_closes_at_the_deadline_of_the_injected_clock():
    clock = FakeClock(DEADLINE_S - 5)
    auction = two_task_auction(clock)
    auction.submit(bid("robot:a", "r#n1", 60))
    clock.now = DEADLINE_S - 0.001
    assert auction.state == COLLECTING
    clock.now = DEADLINE_S
    assert auction.state == CLOSED and auction.closed_by == "deadline"
    assert not auction.submit(bid("robot:a", "r#n2", 30))
    assert auction.rejected[-1].reason == "late" and "deadline" in auction.rejected[-1].detail
    result = auction.close()
    assert auction.state == AWARDED
    assert result.winner_by_task == {"r#n1": "robot:a"}
    assert [u.task_id for u in result.unassignable] == ["r#n2"]
    assert result.unassignable[0].reasons == {"robot:a": "no_answer", "robot:b": "no_answer"}


def test_ignored_answers_are_recorded_with_their_reason_and_never_raise():
    clock = FakeClock()
    auction = two_task_auction(clock)
    first = Bid("cfp-1", "robot:a", "r#n1", True, 0, 60)
    assert auction.submit(first)
    assert not auction.submit(Bid("cfp-1", "robot:a", "r#n1", True, 0, 5))  # duplicate: first wins
    assert not auction.submit(Decline("cfp-1", "robot:a", "r#n1", "busy"))  # a decline after a bid too
    assert not auction.submit(bid("robot:a", "r#n9", 10))  # unknown task
    assert not auction.submit(bid("robot:z", "r#n2", 10))  # not on the roster
    assert not auction.submit(bid("robot:a", "r#n2", 10, cfp_id="cfp-other"))
    assert not auction.submit({"cfpId": "cfp-1", "from": "robot:b", "bid": {"actorId": "robot:b", "etaS": "soon"}})
    assert not auction.submit({"cfpId": "cfp-1", "bid": {"actorId": "robot:b", "canDo": ["r#n2"], "etaS": 0}})
    assert not auction.submit("a bid")
    assert not auction.submit({"cfpId": "cfp-1", "from": "robot:b", "tasks": ["r#n2"], "x-cookwala-ros-reason": "tired"})
    reasons = [r.reason for r in auction.rejected]
    assert reasons == ["duplicate", "duplicate", "unknown_task", "unknown_robot", "wrong_cfp",
                       "malformed", "malformed", "malformed", "malformed"]
    assert "bid/etaS" in auction.rejected[5].detail
    assert "bid/durationS" in auction.rejected[6].detail
    assert "x-cookwala-ros-reason" in auction.rejected[8].detail
    assert auction.bids == [first]
    clock.now = DEADLINE_S + 1
    assert not auction.submit(bid("robot:b", "r#n2", 10))
    assert auction.rejected[-1].reason == "late"


def test_a_bid_as_team_data_counts_like_the_object():
    auction = two_task_auction(FakeClock())
    assert auction.submit(bid("robot:b", "r#n2", 20).to_team_data())
    assert auction.bids == [bid("robot:b", "r#n2", 20)]


def test_a_cfp_whose_deadline_is_past_is_refused():
    with pytest.raises(ValueError, match="deadline.*already past"):
        Auction(cfp(Task("r#n1", "cw.op.mix", 30)), FakeClock(DEADLINE_S), roster=ROBOTS)
    with pytest.raises(ValueError, match="deadline"):
        Auction(cfp(Task("r#n1", "cw.op.mix", 30), deadline="tomorrow"), FakeClock())


def test_seven_tasks_are_awarded_in_one_window():
    tasks = [Task(f"r#n{i}", "cw.op.mix", 10 * i, predecessors=(f"r#n{i - 1}",) if i > 1 else ()) for i in range(1, 8)]
    clock = FakeClock()
    auction = Auction(cfp(*tasks), clock, roster=ROBOTS)
    for t in tasks:
        auction.submit(bid("robot:a", t.id, t.duration_s))
        auction.submit(bid("robot:b", t.id, t.duration_s * 2))
    # one window for all seven: it closed once, when the last of fourteen answers came in
    assert auction.state == CLOSED and auction.closed_by == "all_answered"
    assert len(auction.bids) == 14 and auction.rejected == []
    result = auction.close()
    assert set(result.winner_by_task) == {t.id for t in tasks}
    assert result.unassignable == ()
    assert [(a.actor_id, len(a.tasks)) for a in result.awards] == [("robot:a", 7)]
    assert result.awards[0].tasks == tuple(t.id for t in tasks)
    assert auction.close() is result


def test_a_task_nobody_can_do_is_unassignable_with_every_reason():
    auction = two_task_auction(FakeClock())
    auction.submit(Decline("cfp-1", "robot:a", "r#n1", "missing_equipment", "no hob"))
    auction.submit(Decline("cfp-1", "robot:b", "r#n1", "needs_human_present"))
    auction.submit(bid("robot:a", "r#n2", 30))
    auction.submit(bid("robot:b", "r#n2", 40))
    result = auction.close()
    assert result.winner_by_task == {"r#n2": "robot:a"}
    (lost,) = result.unassignable
    assert lost.task_id == "r#n1"
    assert lost.reasons == {"robot:a": "missing_equipment", "robot:b": "needs_human_present"}
    plan = result.team_plan()
    assert plan["solver"]["status"] == "infeasible"
    assert plan["x-cookwala-ros-unassignable"][0]["reasons"]["robot:b"] == "needs_human_present"
    assert [a.to_team_data() for a in result.awards] == [
        {"cfpId": "cfp-1", "from": "robot:hub", "award": {"actorId": "robot:a", "tasks": ["r#n2"]}}]


def test_without_a_roster_the_window_stays_open_until_the_deadline():
    clock = FakeClock()
    auction = Auction(cfp(Task("r#n1", "cw.op.mix", 30)), clock)
    assert auction.submit(bid("robot:anyone", "r#n1", 30))
    assert auction.state == COLLECTING
    clock.now = DEADLINE_S + 1
    assert auction.state == CLOSED
