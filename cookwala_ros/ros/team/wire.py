"""Team messages <-> the pure layer's contract-net types (`teaming/types.py`).

Every Team* message carries the full TeamData in `data_json`; that is what the receiving side
reads (the other fields are for `ros2 topic echo` and filters). Readers raise ValueError naming
the problem, so a node logs and ignores a malformed message instead of failing.
"""

from __future__ import annotations

import json

from cookwala_msgs.msg import TeamAward, TeamBid, TeamCfp, TeamDecline
from cookwala_ros.core import json_limits
from cookwala_ros.teaming.types import (
    MESSAGE_REASON, Answer, Award, Bid, CallForProposals, Decline, answers_from_team_data,
)

NAN = float("nan")


def _json(data: dict) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def _data(msg) -> dict:
    """The TeamData of a message; ValueError when it is not a JSON object or disagrees with cfp_id."""
    data = json_limits.loads(msg.data_json)  # JsonInputError is a ValueError
    if not isinstance(data, dict):
        raise ValueError("data_json: must be a JSON object (TeamData)")
    if msg.cfp_id and data.get("cfpId") != msg.cfp_id:
        raise ValueError(f"cfp_id: {msg.cfp_id!r} differs from data_json cfpId {data.get('cfpId')!r}")
    return data


def cfp_msg(cfp: CallForProposals, stamp) -> TeamCfp:
    return TeamCfp(stamp=stamp, cfp_id=cfp.cfp_id, session_id=cfp.session_id or "", from_id=cfp.from_id,
                   tasks=[t.id for t in cfp.tasks], deadline=cfp.deadline or "", data_json=_json(cfp.to_team_data()))


def cfp_from_msg(msg: TeamCfp) -> CallForProposals:
    return CallForProposals.from_team_data(_data(msg))


def bid_msg(bid: Bid, stamp, session_id: str = "") -> TeamBid:
    msg = TeamBid(stamp=stamp, cfp_id=bid.cfp_id, session_id=session_id, from_id=bid.actor_id,
                  data_json=_json(bid.to_team_data()))
    msg.bid.actor_id = bid.actor_id
    msg.bid.can_do = [bid.task_id] if bid.can_do else []
    msg.bid.eta_s = bid.eta_s
    msg.bid.duration_s = bid.duration_s
    # NaN = not known (the message's convention for a mains-powered robot's battery)
    msg.bid.battery_after_pct = NAN if bid.battery_after_pct is None else bid.battery_after_pct
    msg.bid.energy_wh = NAN
    msg.bid.confidence = NAN
    return msg


def decline_msg(decline: Decline, stamp, session_id: str = "") -> TeamDecline:
    detail = f"{decline.reason}: {decline.detail}" if decline.detail else decline.reason
    return TeamDecline(stamp=stamp, cfp_id=decline.cfp_id, session_id=session_id, from_id=decline.actor_id,
                       tasks=[decline.task_id], reason=MESSAGE_REASON[decline.reason], detail=detail,
                       data_json=_json(decline.to_team_data()))


def answer_msg(answer: Answer, stamp, session_id: str = "") -> TeamBid | TeamDecline:
    return bid_msg(answer, stamp, session_id) if isinstance(answer, Bid) else decline_msg(answer, stamp, session_id)


def answers_from_msg(msg: TeamBid | TeamDecline) -> list[Answer]:
    """One Bid or Decline per task the message covers; ValueError when malformed."""
    return answers_from_team_data(_data(msg))


def award_msg(award: Award, stamp, session_id: str = "") -> TeamAward:
    return TeamAward(stamp=stamp, cfp_id=award.cfp_id, session_id=session_id, from_id=award.from_id,
                     actor_id=award.actor_id, tasks=list(award.tasks), data_json=_json(award.to_team_data()))

