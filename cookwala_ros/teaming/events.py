"""The contract net as CloudEvents (REASONING §5.4): `cookwala.team.cfp`, `.bid`, `.decline`,
`.award` and `.plan`, each carrying TeamData (event.schema.json#/$defs/TeamData), and the awards
carried out as `cookwala.task.assigned`, `.started`, `.completed`, `.failed` and `.reassigned`,
each carrying TaskData (event.schema.json#/$defs/TaskData). Where a task's predecessor ran on
another robot, `cookwala.handoff.proposed` goes out when its goal is sent and `.completed` (or
`.refused`) when its executor takes it (or does not), each carrying the standard's Handoff
(session.schema.json#/$defs/Handoff; `requiresAck` false: the accepted goal is the take-over).

Ids are stable per message (cfp id + kind + actor or task), so a subscriber that hears one twice
keeps one; `cookwalasession` carries the cfp's session. The plan event names the cfp and its
coordinator and carries the standard's TeamPlan in `x-cookwala-ros-plan` (TeamData has no plan
field). TaskData has no cfp field either: a task event names its cfp in `x-cookwala-ros-cfpId`.
"""

from __future__ import annotations

from cookwala_ros.core import vocab
from cookwala_ros.core.timestamps import rfc3339
from cookwala_ros.teaming.types import Award, Bid, CallForProposals, Decline

PREFIX = "cookwala.team."
PLAN_KEY = "x-cookwala-ros-plan"
REPLAN_REASON_KEY = "x-cookwala-ros-replanReason"  # TeamReplan.reason: actor_lost
LOST_ACTOR_KEY = "x-cookwala-ros-lostActor"
TASK_PREFIX = "cookwala.task."
CFP_KEY = "x-cookwala-ros-cfpId"
PREVIOUS_ACTOR_KEY = "x-cookwala-ros-previousActor"
HANDOFF_PREFIX = "cookwala.handoff."
HANDOFF_STATES = ("proposed", "completed", "refused")  # of Handoff.state: the ones a coordinator can tell
FOR_TASK_KEY = "x-cookwala-ros-forTask"  # the task that takes the item over (Handoff has no such field)

# Our task event kinds -> the standard's TaskState (session.schema.json#/$defs/TaskState, the
# A2A states plus scheduled/blocked): an awarded task not yet running is `scheduled`.
TASK_STATES = {"assigned": "scheduled", "started": "working", "completed": "completed", "failed": "failed",
               "reassigned": "scheduled"}
# Actor kinds of common.schema.json#/$defs/Actor; an id's `kind:` prefix names one (robot:neo-1).
ACTOR_KINDS = ("human", "robot", "appliance", "agent", "hub", "service", "sensor")


def _envelope(event_type: str, subject: str, data: dict, *, event_id: str, source: str, time_s: float,
              session: str | None) -> dict:
    event = {"specversion": "1.0", "id": event_id, "source": source, "type": event_type, "time": rfc3339(time_s),
             "datacontenttype": "application/json", "subject": subject, "data": data,
             "cookwalapriority": "normal", "cookwalalatency": "interactive"}
    if session:
        event["cookwalasession"] = session
    return event


def team_event(kind: str, data: dict, *, event_id: str, source: str, time_s: float,
               session: str | None = None) -> dict:
    return _envelope(PREFIX + kind, data["cfpId"], data, event_id=event_id, source=source, time_s=time_s,
                     session=session)


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


def replan_event(cfp: CallForProposals, tasks: list[str], lost_actor: str, *, source: str, time_s: float,
                 seq: int = 1) -> dict:
    """cookwala.team.replan: `tasks` go back to the planner because `lost_actor` was lost."""
    data = {"cfpId": cfp.cfp_id, "from": cfp.from_id, "tasks": list(tasks), REPLAN_REASON_KEY: "actor_lost",
            LOST_ACTOR_KEY: lost_actor}
    if cfp.session_id:
        data["sessionId"] = cfp.session_id
    return team_event("replan", data, event_id=f"{cfp.cfp_id}:replan:{seq}", source=source, time_s=time_s,
                      session=cfp.session_id)


def plan_event(cfp: CallForProposals, plan: dict, *, source: str, time_s: float) -> dict:
    data = {"cfpId": cfp.cfp_id, "from": cfp.from_id, "tasks": [t.id for t in cfp.tasks], PLAN_KEY: plan}
    if cfp.session_id:
        data["sessionId"] = cfp.session_id
    return team_event("plan", data, event_id=f"{cfp.cfp_id}:plan", source=source, time_s=time_s,
                      session=cfp.session_id)


def actor_ref(actor_id: str) -> dict:
    """The standard's Actor for an id; the kind is the id's prefix when it names one, else robot."""
    prefix = actor_id.split(":", 1)[0]
    return {"kind": prefix if prefix in ACTOR_KINDS else "robot", "id": actor_id}


def task_event(kind: str, task_id: str, actor_id: str, *, cfp_id: str, source: str, time_s: float,
               session: str | None = None, detail: str | None = None, previous_actor: str | None = None) -> dict:
    """cookwala.task.<kind> for one awarded task on `actor_id` (for reassigned: its new robot, and
    `previous_actor` the one it left). `detail` becomes TaskData.reason; a task id of the form
    `recipeId#nodeId` also gives the recipe and node ids. Subject: the task id."""
    if kind not in TASK_STATES:
        raise ValueError(f"kind: {kind!r} is not one of {', '.join(TASK_STATES)}")
    data: dict = {"taskId": task_id, "state": TASK_STATES[kind], "assignee": actor_ref(actor_id), CFP_KEY: cfp_id}
    recipe_id, hash_, node_id = task_id.partition("#")
    if hash_ and recipe_id and node_id and "#" not in node_id:
        data["recipeId"], data["nodeId"] = recipe_id, node_id
    if detail:
        data["reason"] = detail
    if previous_actor:
        data[PREVIOUS_ACTOR_KEY] = previous_actor
    event_id = f"{cfp_id}:task.{kind}:{task_id}" + (f":{actor_id}" if kind == "reassigned" else "")
    return _envelope(TASK_PREFIX + kind, task_id, data, event_id=event_id, source=source, time_s=time_s,
                     session=session)


def handoff_event(state: str, item: str, from_actor: str, to_actor: str, *, for_task: str, item_op: str, cfp_id: str,
                  source: str, time_s: float, session: str | None = None, detail: str | None = None) -> dict:
    """cookwala.handoff.<state>: what task `item` made on `from_actor` goes to `to_actor` for
    `for_task`. What a heating op made is handed over hot (`hazards: ["hot_vessel"]`)."""
    if state not in HANDOFF_STATES:
        raise ValueError(f"state: {state!r} is not one of {', '.join(HANDOFF_STATES)}")
    data: dict = {"id": f"{cfp_id}:handoff:{item}:{for_task}", "from": actor_ref(from_actor), "to": actor_ref(to_actor),
                  "item": item, "state": state, "requiresAck": False, FOR_TASK_KEY: for_task, CFP_KEY: cfp_id}
    if vocab.is_known_op(item_op) and "heat" in vocab.op(item_op).get("families", ()):
        data["hazards"] = ["hot_vessel"]
    if detail:
        data["x-cookwala-ros-reason"] = detail
    return _envelope(HANDOFF_PREFIX + state, item, data, event_id=f"{data['id']}:{state}", source=source,
                     time_s=time_s, session=session)
