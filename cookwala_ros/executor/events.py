"""CloudEvents the executor emits (CORE §7, our schemas/cloudevent.schema.json).

- Execution events: one per status seq, `id` = `<execution>-<seq>` (stable: a redelivery carries
  the same id, so subscribers de-duplicate by id), `cookwalaseq` = the status seq, `subject` =
  the execution. The type comes from the standard's catalog: `cookwala.execution.accepted`,
  `.refused` and `.completed` for those states, `.step` when only the step moved on, and
  `.state_changed` (with `data.state`) for every other state.
- `cookwala.device.heartbeat` every second (id = device + a per-boot counter).
- Incidents (e.g. `cw.incident.untrusted_instruction`) use the extension type
  `x-cookwala.incident.<name>` (the standard's event catalog has no incident type; the safety
  monitor names its own extensions the same way), the incident id riding in `data.incident`.
"""

from __future__ import annotations

import uuid

from cookwala_ros.core.timestamps import rfc3339

OWN_TYPES = {"accepted": "cookwala.execution.accepted", "refused": "cookwala.execution.refused",
             "completed": "cookwala.execution.completed"}
STEP_TYPE = "cookwala.execution.step"
STATE_CHANGED = "cookwala.execution.state_changed"
HEARTBEAT_TYPE = "cookwala.device.heartbeat"
INCIDENT_PREFIX = "x-cookwala.incident."
OUTCOMES = {"completed": "served", "refused": "refused", "failed": "failed", "stopped": "aborted_safe"}


def source_uri(device_id: str) -> str:
    return f"urn:cookwala:device:{device_id}"


def _envelope(event_id: str, source: str, event_type: str, time_s: float, data: dict, **extra) -> dict:
    event = {
        "specversion": "1.0",
        "id": event_id,
        "source": source,
        "type": event_type,
        "time": rfc3339(time_s),
        "datacontenttype": "application/json",
        "data": data,
    }
    event.update({k: v for k, v in extra.items() if v is not None})
    return event


def execution_event(status: dict, *, source: str, time_s: float, previous_state: str | None,
                    recipe: str | None = None, recipe_hash: str | None = None, detail: str | None = None) -> dict:
    """The event announcing `status` (its seq and state)."""
    state = status["state"]
    if state in OWN_TYPES and state != previous_state:
        event_type = OWN_TYPES[state]
    elif state == previous_state:
        event_type = STEP_TYPE
    else:
        event_type = STATE_CHANGED
    data: dict = {"execution": status["id"], "request": status["request"], "state": state, "seq": status["seq"]}
    if previous_state and previous_state != state:
        data["previousState"] = previous_state
    if recipe:
        data["recipe"] = recipe
    if recipe_hash:
        data["recipeHash"] = recipe_hash
    for key in ("step", "refusal", "humanNeeded", "eta"):
        if key in status:
            data[key] = status[key]
    if state in OUTCOMES:
        data["outcome"] = OUTCOMES[state]
    if detail:
        data["detail"] = detail[:500]
    priority = "high" if state in ("stopping", "stopped", "failed", "needs_human") else "normal"
    return _envelope(f"{status['id']}-{status['seq']}", source, event_type, time_s, data,
                     subject=status["id"], cookwalaseq=status["seq"], cookwalapriority=priority,
                     cookwalalatency="interactive")


def heartbeat_event(*, device_id: str, source: str, boot: str, count: int, time_s: float,
                    execution: str | None, state: str | None, health: str = "ok", interval_s: float = 1.0) -> dict:
    data: dict = {"actor": device_id, "health": health, "intervalS": interval_s}
    if execution:
        data["execution"] = execution
        data["state"] = state
    return _envelope(f"{device_id}-hb-{boot}-{count}", source, HEARTBEAT_TYPE, time_s, data,
                     subject=device_id, cookwalaseq=count, cookwalapriority="low", cookwalalatency="background")


def incident_event(incident: str, *, source: str, time_s: float, execution: str | None, detail: str,
                   extra: dict | None = None) -> dict:
    """`incident` is a vocabulary id such as cw.incident.untrusted_instruction."""
    name = incident.rsplit(".", 1)[-1]
    data = {"incident": incident, "detail": detail[:500], **(extra or {})}
    if execution:
        data["execution"] = execution
    return _envelope(f"incident-{uuid.uuid4()}", source, INCIDENT_PREFIX + name, time_s, data,
                     subject=execution, cookwalapriority="high", cookwalalatency="background")
