"""The contract net as CloudEvents (REASONING §5.4): `cookwala.team.cfp`, `.bid`, `.decline`,
`.award` and `.plan`, each carrying TeamData (event.schema.json#/$defs/TeamData).

Ids are stable per message (cfp id + kind + actor), so a subscriber that hears one twice keeps
one; `cookwalasession` carries the cfp's session. The plan event names the cfp and its coordinator
and carries the standard's TeamPlan in `x-cookwala-ros-plan` (TeamData has no plan field).
"""

from __future__ import annotations

from cookwala_ros.core.timestamps import rfc3339
from cookwala_ros.teaming.types import Award, Bid, CallForProposals, Decline

PREFIX = "cookwala.team."
PLAN_KEY = "x-cookwala-ros-plan"


def team_event(kind: str, data: dict, *, event_id: str, source: str, time_s: float,
               session: str | None = None) -> dict:
    event = {"specversion": "1.0", "id": event_id, "source": source, "type": PREFIX + kind, "time": rfc3339(time_s),
             "datacontenttype": "application/json", "subject": data["cfpId"], "data": data,
             "cookwalapriority": "normal", "cookwalalatency": "interactive"}
    if session:
        event["cookwalasession"] = session
    return event


def cfp_event(cfp: CallForProposals, *, source: str, time_s: float) -> dict:
    return team_event("cfp", cfp.to_team_data(), event_id=f"{cfp.cfp_id}:cfp", source=source, time_s=time_s,
                      session=cfp.session_id)


def answer_event(answer: Bid | Decline, *, source: str, time_s: float, session: str | None = None) -> dict:
    kind = "bid" if isinstance(answer, Bid) and answer.can_do else "decline"
    return team_event(kind, answer.to_team_data(), event_id=f"{answer.cfp_id}:{kind}:{answer.actor_id}:{answer.task_id}",
                      source=source, time_s=time_s, session=session)


def award_event(award: Award, *, source: str, time_s: float, session: str | None = None) -> dict:
    return team_event("award", award.to_team_data(), event_id=f"{award.cfp_id}:award:{award.actor_id}",
                      source=source, time_s=time_s, session=session)


def plan_event(cfp: CallForProposals, plan: dict, *, source: str, time_s: float) -> dict:
    data = {"cfpId": cfp.cfp_id, "from": cfp.from_id, "tasks": [t.id for t in cfp.tasks], PLAN_KEY: plan}
    if cfp.session_id:
        data["sessionId"] = cfp.session_id
    return team_event("plan", data, event_id=f"{cfp.cfp_id}:plan", source=source, time_s=time_s,
                      session=cfp.session_id)
