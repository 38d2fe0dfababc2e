"""Conversions between Cookwala JSON documents and cookwala_msgs messages.

Typed fields are filled for ROS tools; the full document rides along (`status_json`, `data`) so a
bridge can reproduce it losslessly. Times are RFC 3339 in the documents and builtin_interfaces/
Time (epoch, i.e. ROS time) in messages.
"""

from __future__ import annotations

import json
import math

from builtin_interfaces.msg import Duration, Time
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from cookwala_msgs.msg import Event, ExecutionStatus, Reading, SafetyLimit
from cookwala_ros.core.sensor_trust import parse_time
from cookwala_ros.robot.joint_trajectory import HaltPlan, HoldBuilder, PointData, TrajectoryData

MEDIUM_SENSORS = ("cw.sense.liquid_temp", "cw.sense.oil_temp", "cw.sense.oven_air_temp", "cw.sense.chamber_temp")


def time_msg(text: str | None) -> Time:
    """RFC 3339 -> Time; zero when absent or unreadable."""
    when = parse_time(text) if text else None
    if when is None:
        return Time()
    seconds = when.timestamp()
    sec = math.floor(seconds)
    return Time(sec=int(sec), nanosec=int(round((seconds - sec) * 1e9)) % 1_000_000_000)


def seconds_msg(seconds: float) -> Time:
    sec = math.floor(seconds)
    return Time(sec=int(sec), nanosec=int((seconds - sec) * 1e9) % 1_000_000_000)


def status_msg(status: dict) -> ExecutionStatus:
    msg = ExecutionStatus()
    msg.core = status.get("core", "")
    msg.id = status.get("id", "")
    msg.request = status.get("request", "")
    msg.state = status.get("state", "")
    msg.seq = int(status.get("seq", 0))
    msg.updated_at = time_msg(status.get("updatedAt"))
    step = status.get("step") or {}
    msg.node = step.get("node", "")
    msg.op = step.get("op", "")
    msg.step_started_at = time_msg(step.get("startedAt"))
    msg.progress = float(step.get("progress", 0.0))
    msg.verified_by = step.get("verifiedBy", "")
    msg.readings = [Reading(sensor=r["sensor"], value=float(r["value"]), unit=r.get("unit", ""),
                            stamp=time_msg(r.get("at"))) for r in step.get("readings") or []]
    msg.eta = time_msg(status.get("eta"))
    refusal = status.get("refusal") or {}
    msg.refusal_reason = refusal.get("reason", "")
    msg.refusal_node = refusal.get("node", "")
    msg.refusal_detail = refusal.get("detail", "")[:500]
    human = status.get("humanNeeded") or {}
    msg.human_needed_why = human.get("why", "")[:300]
    msg.human_needed_by = time_msg(human.get("byWhen"))
    msg.status_json = json.dumps(status, separators=(",", ":"))
    return msg


def medium_temp_c(status: dict) -> float:
    """The medium temperature reading of the current step, NaN when there is none."""
    for reading in (status.get("step") or {}).get("readings") or []:
        if reading.get("sensor") in MEDIUM_SENSORS or reading.get("sensor") == "cw.sense.pan_surface_temp":
            return float(reading["value"])
    return math.nan


def target_reached(status: dict, target: dict | None) -> bool:
    """The step's reading of the target's sensor is within the target's tolerance."""
    if not isinstance(target, dict) or not isinstance(target.get("value"), (int, float)):
        return False
    tolerance = target.get("tolerance") if isinstance(target.get("tolerance"), (int, float)) else 0.0
    for reading in (status.get("step") or {}).get("readings") or []:
        if reading.get("sensor") == target.get("sensor", reading.get("sensor")):
            return abs(float(reading["value"]) - float(target["value"])) <= tolerance
    return False


def event_msg(event: dict) -> Event:
    msg = Event()
    msg.specversion = event.get("specversion", "1.0")
    msg.id = event["id"]
    msg.source = event.get("source", "")
    msg.type = event["type"]
    msg.subject = event.get("subject") or ""
    msg.time = event.get("time", "")
    msg.cookwalaseq = int(event.get("cookwalaseq", 0))
    msg.cookwalalatency = event.get("cookwalalatency", "")
    msg.datacontenttype = event.get("datacontenttype", "application/json")
    msg.data = json.dumps(event.get("data", {}), separators=(",", ":"))
    return msg


def event_from_msg(msg: Event) -> dict:
    """The CloudEvent a message carries (the inverse of event_msg, for subscribers and tests)."""
    event = {"specversion": msg.specversion, "id": msg.id, "source": msg.source, "type": msg.type,
             "time": msg.time, "datacontenttype": msg.datacontenttype, "data": json.loads(msg.data or "{}")}
    if msg.subject:
        event["subject"] = msg.subject
    if msg.cookwalaseq or msg.type.startswith("cookwala.execution."):
        event["cookwalaseq"] = msg.cookwalaseq
    if msg.cookwalalatency:
        event["cookwalalatency"] = msg.cookwalalatency
    return event


def safety_limit_msgs(pack: dict) -> list[SafetyLimit]:
    """The limits of a SafetyLimits pack as messages (GetSafetyLimits answers)."""
    out = []
    for limit in pack.get("limits") or []:
        scope = limit.get("appliesTo") or {}
        out.append(SafetyLimit(
            id=limit["id"], kind=limit["kind"], applies_to_medium=scope.get("medium", ""),
            applies_to_ops=list(scope.get("ops", [])), applies_to_food_class=scope.get("foodClass", ""),
            has_min="min" in limit, min=float(limit.get("min", 0.0)), has_max="max" in limit,
            max=float(limit.get("max", 0.0)), unit=limit.get("unit", ""), hold_for=limit.get("holdFor", ""),
            action=limit.get("action", ""), message=limit.get("message", "")[:200], source=limit.get("source", "")))
    return out


# ---------------------------------------------------------------- joint trajectories


def _seconds(duration) -> float:
    return duration.sec + duration.nanosec * 1e-9


def duration_msg(seconds: float) -> Duration:
    total = int(round(seconds * 1e9))
    return Duration(sec=total // 1_000_000_000, nanosec=total % 1_000_000_000)


def trajectory_data(msg: JointTrajectory) -> TrajectoryData:
    """A JointTrajectory as plain data for `jtc_problems` (and the arm model)."""
    points = tuple(PointData(_seconds(p.time_from_start), tuple(p.positions), tuple(p.velocities),
                             tuple(p.accelerations), tuple(p.effort)) for p in msg.points)
    return TrajectoryData(tuple(msg.joint_names), points, msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9)


def trajectory_msg(data: TrajectoryData) -> JointTrajectory:
    msg = JointTrajectory(joint_names=list(data.joint_names))
    msg.header.stamp = seconds_msg(data.stamp_s) if data.stamp_s else Time()
    msg.points = [JointTrajectoryPoint(positions=list(p.positions), velocities=list(p.velocities),
                                       accelerations=list(p.accelerations), effort=list(p.effort),
                                       time_from_start=duration_msg(p.time_from_start)) for p in data.points]
    return msg


def halt_trajectory_msg(holder: HaltPlan | HoldBuilder | None, joint_state, now_s: float | None = None,
                        joint_names=(), steady_s: float | None = None) -> JointTrajectory:
    """The arm halt from the latest sensor_msgs/JointState (a hold point, or the fallback without points).

    A caller that re-sends its halt passes its HaltPlan (with now_s), so the re-sends keep the
    rest point of the first one; a HoldBuilder makes a one-off halt.

    A hold the JTC accepts needs every joint's measured position (HoldBuilder.hold). Without them
    (no joint state yet, or one missing a joint) nothing can be held without guessing a position,
    and a guessed position would move the arm: the fallback is the named trajectory without
    points, which ROS 2 JTCs reject (no motion commanded) and ROS 1's joint_trajectory_controller
    read as stop; the caller sees no points and relies on its other stops (goal cancel, the monitor).
    now_s (the caller's ROS time, the clock the arm stamps its states with) lets the hold account
    for how far the arm moved since its state was measured; steady_s (the caller's steady clock)
    times the gaps between a HaltPlan's re-sends.
    """
    if holder is not None and joint_state is not None:
        try:
            names = list(joint_state.name)
            positions = dict(zip(names, map(float, joint_state.position)))
            velocities = dict(zip(names, map(float, joint_state.velocity))) if len(joint_state.velocity) == len(names) else {}
            stamp_s = joint_state.header.stamp.sec + joint_state.header.stamp.nanosec * 1e-9
            age_s = now_s - stamp_s if now_s is not None and stamp_s > 0 else 0.0
            if isinstance(holder, HaltPlan) and now_s is not None:
                return trajectory_msg(holder.halt(positions, velocities, age_s, now_s, steady_s))
            builder = holder.builder if isinstance(holder, HaltPlan) else holder
            return trajectory_msg(builder.hold(positions, velocities, age_s))
        except (ValueError, TypeError):
            pass
    builder = holder.builder if isinstance(holder, HaltPlan) else holder
    names = builder.joint_names if builder is not None else joint_names
    return JointTrajectory(joint_names=list(names))
