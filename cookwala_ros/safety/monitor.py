"""The safety monitor's logic without ROS: readings in, "publish the halt now" out.

The ROS node converts messages to the plain readings below and calls one `on_*` method per
input. Each returns True when the halt (empty trajectory + heater off) must be published at once;
the node does that first and reports afterwards from `outbox`. Rules that only report
(alert, ask_human) never stop: they go to the outbox as advisories. Times are steady-clock
seconds passed in, so the whole monitor runs in unit tests without a clock.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

from cookwala_ros.safety import device_rules, rules
from cookwala_ros.safety.arbiter import ARMED, Arbiter
from cookwala_ros.safety.device_rules import JointLimit, RelayWatch
from cookwala_ros.safety.plausibility import SensorPlausibility
from cookwala_ros.safety.rules import Finding, PresenceReading
from cookwala_ros.safety.tighten import TightenResult, tighten
from cookwala_ros.safety.trackers import trackers_for

# ExecutionStatus states in which a step is running on the device
STEP_STATES = frozenset({"preparing", "running", "paused", "needs_human", "stopping"})


def food_class_of(status_json: str, depth: int = 3) -> str | None:
    """The first `foodClass` named in an ExecutionStatus document (a few levels deep), if any."""
    try:
        doc = json.loads(status_json) if status_json else None
    except ValueError:
        return None
    level = [doc]
    for _ in range(depth + 1):
        for node in level:
            if isinstance(node, dict) and isinstance(node.get("foodClass"), str):
                return node["foodClass"]
        level = [child for node in level if isinstance(node, (dict, list))
                 for child in (node.values() if isinstance(node, dict) else node)]
    return None


@dataclass
class MonitorConfig:
    standstill_velocity: float = 0.01  # all |v| below this [rad/s] counts as standstill
    heat_off_power_w: float = 1.0  # at or below this [W] counts as heat off
    heat_deadline_s: float = 1.0  # CORE §6.2: heat cut within 1 s
    heater_state_timeout_s: float = 0.5  # older heater state -> cut heat
    heartbeat_lease_s: float = 0.3  # project decision 9
    presence_stale_s: float = 5.0
    position_margin: float = 0.02  # [rad] beyond the URDF limits before it counts
    velocity_tolerance: float = 1.05  # factor on the URDF velocity limits
    workspace_min: tuple[float, float, float] = (-0.6, -0.9, 0.91)  # tool box in the URDF root frame [m]
    workspace_max: tuple[float, float, float] = (1.1, 0.9, 2.1)
    workspace_period_s: float = 0.05  # forward kinematics at most this often
    sensor_plausibility: bool = True  # check the heater's thermometers against power and each other
    max_heater_power_w: float = 2000.0  # the hob's highest power (the plausibility bound's pan lead)


@dataclass(frozen=True)
class HeaterReading:
    power_w: float
    commanded_off: bool
    medium: str
    medium_temp_c: float  # NaN when the sensor is not ok
    pan_surface_temp_c: float  # NaN when the sensor is not ok
    reported_welded: bool = False
    medium_mass_kg: float = math.nan  # NaN: unknown (no energy check)
    stamp_s: float = math.nan  # the state's stamp on the hob's clock [s]; NaN: no energy check


@dataclass
class Report:
    """Something to publish on /cookwala/events after the halt went out."""

    trigger: str
    detail: str
    action: str
    limit_id: str = ""
    extra: dict = field(default_factory=dict)


class Monitor:
    def __init__(self, pack: dict, config: MonitorConfig | None = None,
                 joint_limits: dict[str, JointLimit] | None = None,
                 tool_position: Callable[[Sequence[str], Sequence[float]], Sequence[float]] | None = None,
                 unattended_of: Callable[[str], bool | None] = lambda op: None):
        self.config = config or MonitorConfig()
        self.arbiter = Arbiter(heat_deadline_s=self.config.heat_deadline_s)
        self.joint_limits = joint_limits or {}
        self.tool_position = tool_position
        self.unattended_of = unattended_of
        self.relay = RelayWatch(self.config.heat_deadline_s, self.config.heat_off_power_w)
        self.plausibility = (SensorPlausibility(max_power_w=self.config.max_heater_power_w)
                             if self.config.sensor_plausibility else None)
        self.outbox: list[Report] = []
        self.op: str | None = None
        self.presence: PresenceReading | None = None
        self._advisories: dict[str, dict[str, Finding]] = {}
        self._heater_rx: float | None = None
        self._active_since = 0.0
        self._hb_seen = False
        self._hb_rx: float | None = None
        self._hb_lost = False
        self._liveliness_lost = False
        self._last_fk = -math.inf
        self._temps: dict[str, float] = {}
        self._heating = False
        self._pressure: float | None = None
        self.set_pack(pack)

    # -- limits ---------------------------------------------------------------------------
    def set_pack(self, pack: dict) -> None:
        self.pack = pack
        self.limits = list(pack["limits"])
        self.kind_of = {limit["id"]: limit["kind"] for limit in self.limits}
        self.trackers = trackers_for(self.limits)
        self.arbiter.motion_deadline_s = rules.stop_deadline_s(self.limits)

    def tighten(self, offered: dict) -> TightenResult:
        """Apply an offered pack if it only tightens (see safety.tighten); reports either way."""
        result = tighten(self.pack, offered)
        if result.accepted:
            if result.tightened_ids:
                self.set_pack(result.effective)
        return result

    # -- lifecycle ------------------------------------------------------------------------
    def activate(self, now: float) -> bool:
        self._active_since = now
        return self.arbiter.activate(now)

    def deactivate(self) -> None:
        self.arbiter.deactivate()

    @property
    def heater_seen(self) -> bool:
        return self._heater_rx is not None

    @property
    def state(self) -> str:
        return self.arbiter.state

    # -- applying findings ----------------------------------------------------------------
    def _apply(self, group: str, findings: list[Finding], now: float) -> bool:
        stopping = {f.trigger: f for f in findings if f.stops and f.action != "fault"}
        faults = {f.trigger: f for f in findings if f.action == "fault"}
        advisory = {f.trigger: f for f in findings if not f.stops}
        before = set(self.arbiter.active_triggers)
        halt = self.arbiter.set_conditions(group, {t: f.detail for t, f in stopping.items()}, now)
        halt = self.arbiter.set_conditions(group + "/fault", {t: f.detail for t, f in faults.items()}, now, fault=True) or halt
        for finding in (*stopping.values(), *faults.values()):
            if finding.trigger not in before:
                self.outbox.append(Report(finding.trigger, finding.detail, finding.action, finding.limit_id))
        old = self._advisories.get(group, {})
        for trigger, finding in advisory.items():
            if trigger not in old:
                self.outbox.append(Report(trigger, finding.detail, finding.action, finding.limit_id))
        self._advisories[group] = advisory
        return halt

    def _fire(self, trigger: str, detail: str, now: float) -> bool:
        self.outbox.append(Report(trigger, detail, "stop_all"))
        return self.arbiter.fire(trigger, detail, now)

    # -- inputs ---------------------------------------------------------------------------
    def on_stop_request(self, requested_by: str, reason: str, now: float) -> bool:
        return self._fire("stop_request", f"Stop requested by {requested_by or 'someone'}: {reason or 'no reason given'}", now)

    def on_estop(self, pressed: bool, now: float) -> bool:
        finding = [Finding("estop", "stop_all", "local stop button pressed")] if pressed else []
        return self._apply("estop", finding, now)

    def on_heater(self, reading: HeaterReading, now: float) -> bool:
        self._heater_rx = now
        self.arbiter.observe_heat(reading.power_w <= self.config.heat_off_power_w, now)
        temps = {reading.medium: reading.medium_temp_c, "pan_surface": reading.pan_surface_temp_c}
        self._temps = temps
        self._heating = reading.power_w > self.config.heat_off_power_w
        halt = self._apply("heater", rules.max_temp_findings(self.limits, temps, self.op, self._heating), now)
        halt = self._apply("stale", [], now) or halt
        if self.plausibility is not None:
            found = self.plausibility.update(reading.stamp_s, reading.power_w, reading.medium, reading.medium_mass_kg,
                                             reading.medium_temp_c, reading.pan_surface_temp_c, self.limits, self.op)
            halt = self._apply("plausibility", found, now) or halt
        relay = self.relay.update(reading.commanded_off, reading.power_w, reading.reported_welded, now)
        return self._apply("relay", relay, now) or halt

    def on_joints(self, names: Sequence[str], positions: Sequence[float], velocities: Sequence[float], now: float) -> bool:
        self.arbiter.observe_motion(device_rules.max_abs(velocities) < self.config.standstill_velocity, now)
        cfg = self.config
        findings = device_rules.joint_findings(names, positions, velocities, self.joint_limits,
                                               cfg.position_margin, cfg.velocity_tolerance)
        halt = self._apply("joints", findings, now)
        if self.tool_position is not None and now - self._last_fk >= cfg.workspace_period_s and len(positions) == len(names):
            self._last_fk = now
            xyz = self.tool_position(names, positions)
            halt = self._apply("workspace", device_rules.workspace_findings(xyz, cfg.workspace_min, cfg.workspace_max), now) or halt
        return halt

    def on_presence(self, reading: PresenceReading, now: float) -> bool:
        self.presence = reading
        return self._check_presence(now)

    def _check_presence(self, now: float) -> bool:
        unattended = self.unattended_of(self.op) if self.op else None
        findings = rules.presence_findings(self.limits, self.op, unattended, self.presence, now, self.config.presence_stale_s)
        return self._apply("presence", findings, now)

    def on_execution(self, state: str, op: str, readings: dict[str, float], food_class: str | None,
                     ros_time_s: float, now: float) -> bool:
        """The executor's status: current op (None between steps) and its latest readings."""
        self.op = op if (op and state in STEP_STATES) else None
        core = readings.get("cw.sense.core_temp")
        findings = rules.min_core_temp_findings(self.limits, food_class, core, self.op or op or None, state == "completed")
        food_temp = core if core is not None else readings.get("cw.sense.product_temp")
        if food_temp is not None:
            findings += [f for f in (t.update(ros_time_s, food_temp, self.op) for t in self.trackers) if f]
        halt = self._apply("execution", findings, now)
        halt = self._apply("heater", rules.max_temp_findings(self.limits, self._temps, self.op, self._heating), now) or halt
        halt = self._apply("pressure", rules.pressure_findings(self.limits, self._pressure, self.op), now) or halt
        return self._check_presence(now) or halt

    def on_pressure(self, kpa: float, now: float) -> bool:
        self._pressure = kpa
        return self._apply("pressure", rules.pressure_findings(self.limits, kpa, self.op), now)

    def on_smoke(self, detected: bool, now: float) -> bool:
        return self._apply("smoke", rules.smoke_findings(self.limits, detected), now)

    def on_heartbeat(self, now: float) -> None:
        self._hb_seen, self._hb_rx, self._hb_lost, self._liveliness_lost = True, now, False, False

    def on_liveliness(self, alive: bool, now: float) -> bool:
        self._liveliness_lost = not alive
        return self._check_heartbeat(now)

    def _check_heartbeat(self, now: float) -> bool:
        """Heartbeat loss is a momentary trigger: it fires once per loss, so a kitchen whose
        executor is gone for good can still be reset locally."""
        cfg = self.config
        found = device_rules.heartbeat_findings(self._hb_seen, self._hb_rx, now, cfg.heartbeat_lease_s, self._liveliness_lost)
        if not found or self._hb_lost:
            return False
        self._hb_lost = True
        return self._fire(found[0].trigger, found[0].detail, now)

    def tick(self, now: float) -> bool:
        """Periodic checks (heartbeat, stale heater state, presence, deadlines).

        Returns True when a trigger fired now and the halt must be published at once.
        """
        halt = self._check_heartbeat(now)
        if self.arbiter.state != "unconfigured":
            stale = device_rules.stale_findings("heater_state", self._heater_rx, self._active_since, now,
                                                self.config.heater_state_timeout_s)
            halt = self._apply("stale", stale, now) or halt
            halt = self._check_presence(now) or halt
        faults_before = len(self.arbiter.fault_reasons)
        self.arbiter.tick(now)
        for reason in self.arbiter.fault_reasons[faults_before:]:
            self.outbox.append(Report("deadline", reason, "fault"))
        return halt

    @property
    def keep_commanding(self) -> bool:
        """Not armed: the halt is re-sent periodically (and forever in fault)."""
        return self.arbiter.state in ("stopped", "fault")

    def reset(self, now: float) -> tuple[bool, str]:
        was = self.arbiter.state
        ok, message = self.arbiter.reset(now)
        if ok and was != ARMED:
            self.outbox.append(Report("reset", message, "cleared"))
        return ok, message
