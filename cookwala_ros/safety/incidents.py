"""What the monitor reports for each trigger: a CloudEvent type and a `cw.incident.*` id.

Event types come from the standard's event catalog (cookwala.safety.*, cookwala.device.fault)
so any hub can route them; the incident id (vocabulary `cw.incident.*`) rides in the event data
as `incident`, ready for an anonymous IncidentReport. Tighten requests use extension types.
Events report what the device already did (cookwalalatency local_safety); nothing depends on
them arriving.
"""

from __future__ import annotations

import json
import math

# trigger prefix (before ':') or limit kind -> (event type, incident id or None)
_BY_TRIGGER = {
    "estop": ("cookwala.safety.estop", None),
    "stop_request": ("cookwala.safety.estop", None),
    "monitor_error": ("cookwala.device.fault", "cw.incident.equipment_failure"),
    "heartbeat_lost": ("cookwala.device.fault", "cw.incident.equipment_failure"),
    "stale": ("cookwala.device.fault", "cw.incident.sensor_failure"),
    "unverifiable": ("cookwala.device.fault", "cw.incident.sensor_failure"),
    "sensor_implausible": ("cookwala.device.fault", "cw.incident.sensor_failure"),
    "heater_fault": ("cookwala.device.fault", "cw.incident.actuator_failure"),
    "reenergised": ("cookwala.device.fault", "cw.incident.actuator_failure"),
    "latched_before_restart": ("cookwala.safety.estop", None),
    "deadline": ("cookwala.device.fault", "cw.incident.actuator_failure"),
    "joint_position": ("cookwala.safety.limit_fired", "cw.incident.actuator_failure"),
    "joint_velocity": ("cookwala.safety.limit_fired", "cw.incident.actuator_failure"),
    "workspace": ("cookwala.safety.limit_fired", "cw.incident.actuator_failure"),
}
_BY_KIND = {
    "max_temp": ("cookwala.safety.overtemp", "cw.incident.overheat"),
    "pressure": ("cookwala.safety.limit_fired", "cw.incident.overheat"),
    "smoke_or_fire": ("cookwala.safety.fire", "cw.incident.burnt_smell"),
    "min_core_temp": ("cookwala.safety.limit_fired", "cw.incident.undercooked"),
    "time_temp": ("cookwala.safety.limit_fired", "cw.incident.time_temp_abuse"),
    "unattended": ("cookwala.safety.unattended_heat", None),
}
TIGHTEN_REFUSED = ("x-cookwala.safety.limits_refused", "cw.incident.untrusted_instruction")
TIGHTENED = ("x-cookwala.safety.limits_tightened", None)
CLEARED = ("cookwala.safety.cleared", None)
FAULT = ("cookwala.device.fault", "cw.incident.actuator_failure")


def classify(trigger: str, limit_kind: str | None = None) -> tuple[str, str | None]:
    """(event type, incident id) for a trigger such as `limit:oil.max_temp` or `estop`."""
    prefix = trigger.split(":", 1)[0]
    if prefix == "limit" and limit_kind in _BY_KIND:
        return _BY_KIND[limit_kind]
    return _BY_TRIGGER.get(prefix, ("cookwala.safety.limit_fired", None))


def cloud_event(kind: tuple[str, str | None], data: dict, *, event_id: str, source: str, time: str,
                seq: int, subject: str = "") -> dict:
    """A CloudEvents 1.0 document for /cookwala/events; `data` gets the incident id added."""
    event_type, incident = kind
    body = dict(data)
    if incident:
        body["incident"] = incident
    event = {
        "specversion": "1.0",
        "id": event_id,
        "source": source,
        "type": event_type,
        "time": time,
        "datacontenttype": "application/json",
        "cookwalaseq": seq,
        "cookwalalatency": "local_safety",
        "data": body,
    }
    if subject:
        event["subject"] = subject
    return event


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN: an unmeasured latency is null
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def data_text(event: dict) -> str:
    """The event data as the JSON string Event.msg carries (NaN -> null, sorted keys)."""
    return json.dumps(_finite(event["data"]), sort_keys=True, separators=(",", ":"))
