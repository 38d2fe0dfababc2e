"""A robot's answer to a call for proposals, from its own Cookwala capabilities document.

A robot should only bid for what its executor would then accept, so each task is judged by the
executor's pre-start check (`core.dryrun.precheck`) on a one-node recipe built from the task:
the op declared and executable, the equipment classes, presence for ops that may not run
unattended (and for tasks marked attended), a sensor-ladder rung to verify it, the device's
SafetyLimits and altitude, and its state now (busy with an execution, or held stopped by its
safety monitor: a `busy` decline naming why). The task's
explicit sensor needs are checked against the same trusted-sensor set the executor uses. The
precheck's refusal reason is mapped onto the decline reasons of `types.DECLINE_REASONS`.
Nothing here remembers anything: the same inputs give the same answers.
"""

from __future__ import annotations

from typing import Any

from cookwala_ros.core import dryrun, vocab
from cookwala_ros.core.request_checks import RequestContext
from cookwala_ros.core.sensor_trust import trusted_sensors
from cookwala_ros.teaming.types import Answer, Bid, CallForProposals, Decline, Task

# dryrun refusal reason -> decline reason
PRECHECK_TO_DECLINE = {
    "missing_capability": "missing_op",
    "missing_equipment": "missing_equipment",
    "needs_human_present": "needs_human_present",
    "missing_sensor_no_fallback": "missing_sensor",
    "busy": "busy",
}
DEFAULT_DURATION_KEY = "defaultDurationS"  # an op record's default duration, where the vocabulary has one


def default_duration_s(op_id: str) -> float | None:
    """The vocabulary's default duration of an op, or None (Core 0.2's operations give none yet)."""
    if not vocab.is_known_op(op_id):
        return None
    value = vocab.op(op_id).get(DEFAULT_DURATION_KEY)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def task_as_recipe(task: Task) -> dict:
    """A one-node recipe the pre-start check can judge: only robots may do the node (a person
    doing it would not be this robot's bid), its equipment classes as recipe equipment, and an
    attended task marked as a node never to leave."""
    equipment = [{"ref": f"eq-{i}", "class": cls} for i, cls in enumerate(task.needs.equipment)]
    node = {"id": task.id, "op": task.op, "assignment": {"allowed": ["robot"]},
            "equipment": [e["ref"] for e in equipment]}
    recipe: dict[str, Any] = {"process": {"nodes": [node]}, "equipment": equipment}
    if task.needs.attended:
        recipe["safety"] = {"abort": {"neverLeave": [task.id]}}
    return recipe


def assess_task(task: Task, capabilities: dict, *, human_present: bool = False, now: Any = None,
                limits: Any = None, altitude_m: float = 0.0, busy: bool = False,
                safety_hold: str | None = None) -> tuple[str | None, str]:
    """(decline reason or None, detail) for one task on this robot; `limits` as for
    `dryrun.precheck` (None: the standard's default pack)."""
    result = dryrun.precheck(task_as_recipe(task), capabilities, limits=limits, human_present=human_present,
                             altitude_m=altitude_m, now=now,
                             request=RequestContext(busy=busy, safety_hold=safety_hold, now=now))
    if not result.accepted:
        reason = PRECHECK_TO_DECLINE.get(result.reason or "", "other")
        return reason, result.detail if reason != "other" else f"{result.reason}: {result.detail}"
    available = trusted_sensors(capabilities, now)
    missing = [s for s in task.needs.sensors if vocab.canonical_sensor(s) not in available]
    if missing:
        return "missing_sensor", f"no trusted {', '.join(missing)}"
    return None, ""


def answer_cfp(cfp: CallForProposals, capabilities: dict, *, actor_id: str | None = None,
               human_present: bool = False, busy: bool | str = False, eta_s: float = 0.0,
               battery_pct: float | None = None, now: Any = None, limits: Any = None, altitude_m: float = 0.0,
               safety_hold: str | None = None) -> list[Answer]:
    """One Bid or Decline per task of `cfp`, in the cfp's order.

    `actor_id` defaults to the document's `actor.id`; `eta_s` is when this robot could start;
    a `busy` robot (a string says with what) or one its safety monitor holds (`safety_hold`, why)
    declines everything, as its executor would refuse it. The duration is the task's own, else
    the op's vocabulary default; with neither the robot declines (`other`) rather than guess.
    """
    if actor_id is None:
        actor = capabilities.get("actor") if isinstance(capabilities, dict) else None
        actor_id = actor.get("id") if isinstance(actor, dict) else None
        if not isinstance(actor_id, str) or not actor_id:
            raise ValueError("actor/id: the capabilities document names no actor; pass actor_id")
    answers: list[Answer] = []
    for task in cfp.tasks:
        reason, detail = assess_task(task, capabilities, human_present=human_present, now=now, limits=limits,
                                     altitude_m=altitude_m, busy=bool(busy), safety_hold=safety_hold)
        if reason == "busy" and isinstance(busy, str) and busy:
            detail = busy
        duration = task.duration_s if task.duration_s is not None else default_duration_s(task.op)
        if reason is None and duration is None:
            reason, detail = "other", f"no duration for {task.op}: the task gives none and the vocabulary has no default"
        if reason is not None:
            answers.append(Decline(cfp.cfp_id, actor_id, task.id, reason, detail))
            continue
        answers.append(Bid(cfp.cfp_id, actor_id, task.id, True, eta_s, duration, None, battery_pct))
    return answers
