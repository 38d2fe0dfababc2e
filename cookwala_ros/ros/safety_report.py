"""What the safety monitor reports, as messages: SafetyStatus and its /diagnostics entry.

Built from the pure Monitor after the halt has gone out; nothing here is on the stop path.
"""

from __future__ import annotations

import math

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

from cookwala_msgs.msg import SafetyStatus
from cookwala_ros.safety.monitor import Monitor

STATE_CODES = {"unconfigured": SafetyStatus.STATE_UNCONFIGURED, "armed": SafetyStatus.STATE_ARMED,
               "stopped": SafetyStatus.STATE_STOPPED, "fault": SafetyStatus.STATE_FAULT}
DIAG_LEVELS = {"unconfigured": DiagnosticStatus.STALE, "armed": DiagnosticStatus.OK,
               "stopped": DiagnosticStatus.WARN, "fault": DiagnosticStatus.ERROR}


def _triggers(monitor: Monitor, waiting: list[str] | None) -> list[str]:
    """The stop's triggers; while active but not yet armed (unconfigured), what arming waits for
    too (`waiting:heater_state`, ...)."""
    return monitor.arbiter.active_triggers + (list(waiting or []) if monitor.state == "unconfigured" else [])


def status_msg(monitor: Monitor, stamp: Time, trigger_at: Time | None, waiting: list[str] | None = None,
               heartbeat: str = "") -> SafetyStatus:
    """The latched /cookwala/safety/status; `trigger_at` is the ROS time of the last trigger,
    `heartbeat` the executor's heartbeat as heard now (Monitor.heartbeat_label)."""
    arbiter = monitor.arbiter
    ep = arbiter.episode
    msg = SafetyStatus(stamp=stamp, state=STATE_CODES[arbiter.state], state_label=arbiter.state,
                       active_limit_ids=[limit["id"] for limit in monitor.limits],
                       limits_pack_id=monitor.pack["id"], active_triggers=_triggers(monitor, waiting),
                       executor_heartbeat=heartbeat)
    msg.last_halt_command_latency_s = msg.last_standstill_latency_s = msg.last_heat_off_latency_s = math.nan
    if ep is not None:
        msg.last_trigger, msg.last_trigger_detail = ep.trigger, ep.detail
        if arbiter.fault_reasons:
            msg.last_trigger_detail = f"{ep.detail}; fault: {'; '.join(arbiter.fault_reasons)}"
        if trigger_at is not None:
            msg.last_trigger_at = trigger_at
        msg.last_halt_command_latency_s = ep.halt_latency_s
        msg.last_standstill_latency_s = ep.standstill_latency_s
        msg.last_heat_off_latency_s = ep.heat_off_latency_s
    return msg


def diagnostics(monitor: Monitor, stamp: Time, device_id: str, waiting: list[str] | None = None,
                heartbeat: str = "") -> DiagnosticArray:
    arbiter = monitor.arbiter
    ep = arbiter.episode
    triggers = _triggers(monitor, waiting)
    values = {"state": arbiter.state, "active_triggers": ",".join(triggers), "executor_heartbeat": heartbeat,
              "pack": monitor.pack["id"], "fault": "; ".join(arbiter.fault_reasons),
              "motion_deadline_s": f"{arbiter.motion_deadline_s:g}", "heat_deadline_s": f"{arbiter.heat_deadline_s:g}"}
    if ep is not None:
        values.update(last_trigger=ep.trigger, halt_latency_s=f"{ep.halt_latency_s:.4f}",
                      standstill_latency_s=f"{ep.standstill_latency_s:.4f}",
                      heat_off_latency_s=f"{ep.heat_off_latency_s:.4f}")
    status = DiagnosticStatus(level=DIAG_LEVELS[arbiter.state], name="cookwala safety monitor",
                              message=arbiter.state + (f": {', '.join(triggers)}" if triggers else ""),
                              hardware_id=device_id, values=[KeyValue(key=k, value=v) for k, v in values.items()])
    array = DiagnosticArray(status=[status])
    array.header.stamp = stamp
    return array
