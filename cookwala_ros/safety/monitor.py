"""The safety monitor's logic without ROS: readings in, "publish the halt now" out.

The ROS node converts messages to the plain readings below and calls one `on_*` method per
input. Each returns True when the halt (the arm held at rest + heater off) must be published at once;
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
from cookwala_ros.safety.arbiter import ARMED, UNCONFIGURED, Arbiter
from cookwala_ros.safety.device_rules import ExecutorPresence, JointLimit, RelayWatch
from cookwala_ros.safety.latch import LATCHED_BEFORE_RESTART
from cookwala_ros.safety.packs import PackError, check_pack
from cookwala_ros.safety.plausibility import SensorPlausibility
from cookwala_ros.safety.rules import Finding, PresenceReading
from cookwala_ros.safety.tighten import TightenResult, tighten
from cookwala_ros.safety.trackers import trackers_for

OFFLINE = "offline"  # Heartbeat.state of a sender's last heartbeat before a clean exit
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
    joint_state_timeout_s: float = 0.5  # older joint states -> dead arm driver -> stop
    executor_node: str = ""  # fully qualified name of the expected executor node ("" = none)
    executor_start_grace_s: float = 5.0  # in the graph this long without a heartbeat -> trigger
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
    # The hob obeys the monitor's own OFF (HeaterState.commanded_by); None: the hob does not say
    halt_obeyed: bool | None = None


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
        self._unguarded_fired = False
        self._joints_rx: float | None = None
        self._moving = False
        self.executor_presence = (ExecutorPresence(self.config.executor_node, self.config.executor_start_grace_s)
                                  if self.config.executor_node else None)
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

    def tighten(self, offered: object) -> TightenResult:
        """Apply an offered pack if it only tightens (see safety.tighten); reports either way.

        The offer is checked against the SafetyLimits schema and the vocabulary first, and the
        result again before it is applied; ValueError (naming the JSON pointer) leaves the pack as
        it was.
        """
        check_pack(offered, "offered pack")
        result = tighten(self.pack, offered)
        if result.accepted and result.tightened_ids:
            try:
                check_pack(result.effective, "tightened pack")
            except PackError as exc:
                raise PackError(f"the tightened pack would not be enforceable: {exc}") from None
            self.set_pack(result.effective)
        return result

    # -- lifecycle ------------------------------------------------------------------------
    def activate(self, now: float, latched_reason: str | None = None) -> bool:
        """Armed (True: halt now, a condition holds); `latched_reason`: a stop persisted by a
        monitor before this one, so it comes up stopped until a local reset."""
        self._active_since = now
        halt = self.arbiter.activate(now)
        if latched_reason is not None:
            halt = self._fire(LATCHED_BEFORE_RESTART, latched_reason, now) or halt
        return halt

    def deactivate(self) -> None:
        self.arbiter.deactivate()

    @property
    def heater_seen(self) -> bool:
        return self._heater_rx is not None

    @property
    def joints_seen(self) -> bool:
        return self._joints_rx is not None

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
    def on_internal_error(self, detail: str, now: float) -> bool:
        """One of the monitor's own callbacks failed: stop, latched, like any trigger. A halt
        without a stop left the monitor armed and its gate forwarding heat again (issue 16, item 5).
        Only the first failure while armed makes an episode; later ones only halt again."""
        if self.arbiter.state != ARMED:
            return True
        return self._fire("monitor_error", detail, now)

    def on_stop_request(self, requested_by: str, reason: str, now: float) -> bool:
        return self._fire("stop_request", f"Stop requested by {requested_by or 'someone'}: {reason or 'no reason given'}", now)

    def on_estop(self, pressed: bool, now: float) -> bool:
        finding = [Finding("estop", "stop_all", "local stop button pressed")] if pressed else []
        return self._apply("estop", finding, now)

    def on_heater(self, reading: HeaterReading, now: float) -> bool:
        self._heater_rx = now
        # 0 W counts as heat off once the hob says it was commanded off: a 0 W state from before the
        # halt (a regulating executor at 0 W) is no verification, and heat that a command still in
        # flight brings back would then look like power after the stop
        delivered = reading.power_w > self.config.heat_off_power_w
        # A hob that names whom it obeys verifies the stop only once it obeys the monitor's OFF: a
        # 0 W state under the executor's own regulation OFF, with an executor ON still in flight
        # behind it, verified a stop early and made the ON that followed look like heat coming
        # back (a monitor fault the wire did not show; stop trials, 1 of 50)
        # (it is still 0 W for a reset: the executor's own OFFs pass the gate while stopped)
        self.arbiter.observe_heat(reading.commanded_off and not delivered, now, delivered,
                                  verifies=reading.halt_obeyed is not False)
        temps = {reading.medium: reading.medium_temp_c, "pan_surface": reading.pan_surface_temp_c}
        self._temps = temps
        self._heating = reading.power_w > self.config.heat_off_power_w
        halt = self._apply("heater", rules.max_temp_findings(self.limits, temps, self.op, self._heating), now)
        halt = self._apply("stale", [], now) or halt
        halt = self._check_reenergised(now) or halt
        if self.plausibility is not None:
            found = self.plausibility.update(reading.stamp_s, reading.power_w, reading.medium, reading.medium_mass_kg,
                                             reading.medium_temp_c, reading.pan_surface_temp_c, self.limits, self.op)
            halt = self._apply("plausibility", found, now) or halt
        relay = self.relay.update(reading.commanded_off, reading.power_w, reading.reported_welded, now)
        return self._apply("relay", relay, now) or halt

    def on_joints(self, names: Sequence[str], positions: Sequence[float], velocities: Sequence[float], now: float) -> bool:
        self._joints_rx = now
        self._moving = device_rules.max_abs(velocities) >= self.config.standstill_velocity
        self.arbiter.observe_motion(not self._moving, now)
        cfg = self.config
        findings = device_rules.joint_findings(names, positions, velocities, self.joint_limits,
                                               cfg.position_margin, cfg.velocity_tolerance)
        halt = self._apply("joints", findings, now)
        halt = self._apply("stale_joints", [], now) or halt
        halt = self._check_reenergised(now) or halt
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

    def on_heartbeat(self, now: float, sender: str = "", state: str = "") -> None:
        if state == OFFLINE:
            # A clean goodbye (the executor halted what it ran, then said so): its liveliness
            # ending next is no loss. Heat or motion without a heartbeat still stops the kitchen
            # (`unguarded_findings`), so a goodbye cannot hide a running hob.
            self._hb_seen, self._hb_rx, self._hb_lost, self._liveliness_lost = False, None, False, False
            return
        self._hb_seen, self._hb_rx, self._hb_lost, self._liveliness_lost = True, now, False, False
        self._unguarded_fired = False
        if self.executor_presence is not None:
            self.executor_presence.heartbeat(sender)

    def heartbeat_label(self, now: float) -> str:
        """The executor's heartbeat as heard now: "live", "lapsed" (heard before, not within the
        lease, or its liveliness lost) or "none" (never, or it said goodbye)."""
        if not self._hb_seen or self._hb_rx is None:
            return "none"
        if self._liveliness_lost or now - self._hb_rx > self.config.heartbeat_lease_s:
            return "lapsed"
        return "live"

    def on_executor_graph(self, present: bool, now: float) -> bool:
        """Whether the expected executor node is in the ROS graph now (checked at ~2 Hz)."""
        if self.executor_presence is None:
            return False
        found = self.executor_presence.update(present, now)
        if not found or self.arbiter.state == UNCONFIGURED:
            return False
        return self._fire(found[0].trigger, found[0].detail, now)

    @property
    def plant_active(self) -> str:
        """What on the plant needs a guarding executor: "heat", "motion", both or ""."""
        return " and ".join(what for what, on in (("heat", self._heating), ("motion", self._moving)) if on)

    def _check_reenergised(self, now: float) -> bool:
        """Heat or motion after a verified halt and before a reset: a fault (the halt keeps going)."""
        found = [Finding(trigger, "fault", detail) for trigger, detail in self.arbiter.reenergised().items()]
        return self._apply("reenergised", found, now)

    def halted_since(self, t0: float) -> bool:
        """Heater state and joint states received after `t0` both say 0 W and standstill."""
        return (self._heater_rx is not None and self._heater_rx > t0 and not self._heating
                and self._joints_rx is not None and self._joints_rx > t0 and not self._moving)

    def on_liveliness(self, alive: bool, now: float) -> bool:
        self._liveliness_lost = not alive
        return self._check_heartbeat(now)

    def _check_heartbeat(self, now: float) -> bool:
        """Heartbeat loss is a momentary trigger: it fires once per loss, so a kitchen whose
        executor is gone for good can still be reset locally."""
        cfg = self.config
        halt = False
        found = device_rules.heartbeat_findings(self._hb_seen, self._hb_rx, now, cfg.heartbeat_lease_s, self._liveliness_lost)
        if found and not self._hb_lost:
            self._hb_lost = True
            self._unguarded_fired = bool(self.plant_active)  # the same loss: one report
            halt = self._fire(found[0].trigger, found[0].detail, now)
        # heat or motion with no live heartbeat, including none ever: fires once per such spell
        active = self.plant_active
        if not active:
            self._unguarded_fired = False
        elif not self._unguarded_fired and self.arbiter.state != UNCONFIGURED:
            found = device_rules.unguarded_findings(active, self._hb_rx, self._active_since, now,
                                                    cfg.heartbeat_lease_s, self._liveliness_lost)
            if found:
                self._unguarded_fired = True
                halt = self._fire(found[0].trigger, found[0].detail, now) or halt
        return halt

    def tick(self, now: float) -> bool:
        """Periodic checks (heartbeat, stale heater state, presence, deadlines).

        Returns True when a trigger fired now and the halt must be published at once.
        """
        halt = self._check_heartbeat(now)
        if self.arbiter.state != "unconfigured":
            stale = device_rules.stale_findings("heater_state", self._heater_rx, self._active_since, now,
                                                self.config.heater_state_timeout_s)
            halt = self._apply("stale", stale, now) or halt
            stale = device_rules.stale_findings("joint_states", self._joints_rx, self._active_since, now,
                                                self.config.joint_state_timeout_s, action="stop_all")
            halt = self._apply("stale_joints", stale, now) or halt
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
        if ok:
            self._unguarded_fired = False  # verified idle: the next heat or motion is a new spell
        if ok and was != ARMED:
            self.outbox.append(Report("reset", message, "cleared"))
        return ok, message
