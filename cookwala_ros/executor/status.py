"""ExecutionStatus and ExecutionLog documents as the service stores and serves them, and the
StopRequests the node makes itself: one place for the wire documents and their Core version."""

from __future__ import annotations

from cookwala_ros import CORE_VERSION
from cookwala_ros.executor.events import rfc3339

REASON_KEY = "x-cookwala-ros-reason"  # why an execution failed or stopped (the Core status has no field)
STOP_REASON_MAX = 300  # StopRequest.reason maxLength in the standard's schema


def stop_request(execution_id: str, requested_by: str, reason: str = "") -> dict:
    """A StopRequest of this node's own (a recall, a fault it found, a ROS stop, a goal cancel)."""
    doc = {"core": CORE_VERSION, "kind": "StopRequest", "execution": execution_id, "requestedBy": requested_by}
    if reason:
        doc["reason"] = reason[:STOP_REASON_MAX]
    return doc


def new_status(execution_id: str, request_id: str, state: str, seq: int, now_s: float,
               refusal: dict | None = None) -> dict:
    status = {"core": CORE_VERSION, "kind": "ExecutionStatus", "id": execution_id, "request": request_id,
              "state": state, "seq": seq, "updatedAt": rfc3339(now_s)}
    if refusal:
        status["refusal"] = refusal
    return status


def step_of(engine_status: dict, started_at_s: float | None, now_s: float) -> dict | None:
    """The Core Step of an engine `status()` dict, or None when no node is running."""
    node = engine_status.get("node")
    if not node:
        return None
    step: dict = {"node": node}
    if engine_status.get("op"):
        step["op"] = engine_status["op"]
    if isinstance(engine_status.get("startedAt"), str):
        step["startedAt"] = engine_status["startedAt"]
    elif started_at_s is not None:
        step["startedAt"] = rfc3339(started_at_s)
    progress = engine_status.get("progress")
    if isinstance(progress, (int, float)):
        step["progress"] = round(min(1.0, max(0.0, float(progress))), 4)
    if engine_status.get("verifiedBy"):
        step["verifiedBy"] = engine_status["verifiedBy"]
    readings = []
    for reading in engine_status.get("readings") or []:
        if isinstance(reading, dict) and isinstance(reading.get("value"), (int, float)) and reading.get("sensor"):
            readings.append({"sensor": reading["sensor"], "value": round(float(reading["value"]), 3),
                             "unit": reading.get("unit", "degC"), "at": rfc3339(now_s)})
    if readings:
        step["readings"] = readings
    return step


def running_status(base: dict, state: str, seq: int, now_s: float, engine_status: dict,
                   step_started_s: float | None) -> dict:
    status = new_status(base["id"], base["request"], state, seq, now_s)
    step = step_of(engine_status, step_started_s, now_s)
    if step:
        status["step"] = step
    eta_s = engine_status.get("eta_s")
    if isinstance(eta_s, (int, float)) and eta_s >= 0:
        status["eta"] = rfc3339(now_s + eta_s)
    why = engine_status.get("humanNeeded")
    if state == "needs_human" and why:
        status["humanNeeded"] = {"why": str(why)[:300]}
    return status


def minimal_log(execution_id: str, request: dict, device: dict, started_s: float, outcome: str,
                ended_s: float | None = None) -> dict:
    """The log of an execution that ran no step (refused) or whose engine log is missing."""
    log = {"core": CORE_VERSION, "kind": "ExecutionLog", "id": execution_id,
           "recipe": request.get("recipe", "unknown"),
           "recipeHash": request.get("recipeHash", "sha256:" + "0" * 64),
           "device": dict(device), "startedAt": rfc3339(started_s), "outcome": outcome, "steps": [],
           "safetyEvents": [], "consent": {"dataset": "none"}, "privacy": {"personalData": "none"}}
    if isinstance(request.get("servings"), (int, float)):
        log["servings"] = request["servings"]
    if ended_s is not None:
        log["endedAt"] = rfc3339(ended_s)
    return log
