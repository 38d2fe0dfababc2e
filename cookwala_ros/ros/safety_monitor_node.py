"""safety_monitor: the device-local SafetyLimits enforcer and stop arbiter (CORE §6).

A managed (lifecycle) node in its own process. `configure` loads and checks the device packs
merged with the standard's defaults; `activate` succeeds only once the halt publishers are
matched by the arm and heater controllers (and a heater state has arrived), so a stop rides on
connections that already exist and can be verified. It never imports the executor and never
needs the network. With `autostart` (default) it configures and activates itself.

Stop path: a callback hands a plain reading to `safety.monitor.Monitor` and, when told to,
publishes the pre-built halt (empty JointTrajectory, then HeaterCommand MODE_OFF) before anything
else. The inputs that only ever stop (the Stop service, estop, smoke, pressure) live on a small
companion node, `<name>_stop_inputs`, spun by its own single-threaded executor in its own thread:
its wait set is small, so a stop is not queued behind the 100 Hz joint states, the
lifecycle and parameter services or a limits request on the main node. One lock serialises the
two executors around the Monitor. Verification and deadlines are measured on the steady clock
(time.monotonic) and its timers run on the steady clock, so a paused or fast /clock never delays
a safety check. Reporting (status, events, diagnostics) comes after the halt and never blocks it.

Inputs: /joint_states, /heater/state, /cookwala/heartbeat (liveliness lease + timer check),
/cookwala/presence, /cookwala/status (current op), /cookwala/estop (std_msgs/Bool: true while
the button is held; latched QoS so a monitor that starts late still sees a held button),
/cookwala/smoke (std_msgs/Bool), /cookwala/pressure (sensor_msgs/FluidPressure, gauge Pa),
services ~/stop, ~/reset, ~/get_safety_limits, ~/tighten_safety_limits.
"""

from __future__ import annotations

import datetime
import functools
import json
import math
import sys
import threading
import time
import traceback
import uuid

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.clock import Clock, ClockType
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.service import Service
from sensor_msgs.msg import FluidPressure, JointState
from std_msgs.msg import Bool
from trajectory_msgs.msg import JointTrajectory

from cookwala_msgs.msg import (Event, ExecutionStatus, HeaterCommand, HeaterState, Heartbeat, Presence,
                               SafetyStatus)
from cookwala_msgs.srv import GetSafetyLimits, ResetSafety, Stop, TightenSafetyLimits
from cookwala_ros.ros import qos
from cookwala_ros.ros.convert import safety_limit_msgs
from cookwala_ros.ros.node_main import freeze_startup_objects
from cookwala_ros.ros.safety_report import diagnostics, status_msg
from cookwala_ros.safety import incidents
from cookwala_ros.safety.device_rules import JointLimit
from cookwala_ros.safety.kinematics import ToolKinematics
from cookwala_ros.safety.monitor import HeaterReading, Monitor, MonitorConfig, food_class_of
from cookwala_ros.safety.packs import PackError, load_effective_pack
from cookwala_ros.safety.rules import PresenceReading

try:  # cancel FollowJointTrajectory goals too, where the controller offers the action
    import control_msgs.action  # noqa: F401
    from action_msgs.srv import CancelGoal
except ImportError:
    CancelGoal = None

# name -> (default, description); types follow the defaults
PARAMETERS = {
    "device_id": ("sim-kitchen", "Device id used in events and diagnostics."),
    "device_packs": (["package://config/safety/device-pack.json"],
                     "SafetyLimits pack files (JSON/YAML) merged with the standard's defaults, stricter wins."),
    "urdf_path": ("", "Robot description for joint limits and the workspace check; empty = packaged arm."),
    "activation_timeout_s": (10.0, "How long activate waits for the arm and heater controllers to match."),
    "autostart": (True, "Configure and activate at start-up (retrying activation) instead of waiting for a manager."),
    "activation_retry_s": (2.0, "Pause between autostart activation attempts."),
    "standstill_velocity": (0.01, "All |joint velocity| below this [rad/s] is standstill."),
    "heat_off_power_w": (1.0, "Heater power at or below this [W] is heat off."),
    "heat_deadline_s": (1.0, "Heat must be off this long after a trigger (<= 1 s, CORE §6.2)."),
    "heater_state_timeout_s": (0.5, "Heater state older than this cuts heat."),
    "heartbeat_lease_s": (0.3, "Executor heartbeat liveliness lease."),
    "presence_stale_s": (5.0, "Presence readings older than this count as nobody present."),
    "position_margin": (0.02, "Joint position tolerance beyond the URDF limits [rad]."),
    "velocity_tolerance": (1.05, "Factor on the URDF velocity limits before a joint counts as too fast."),
    "workspace_min": ([-0.6, -0.9, 0.91], "Tool workspace box lower corner, URDF root frame [m]."),
    "workspace_max": ([1.1, 0.9, 2.1], "Tool workspace box upper corner, URDF root frame [m]."),
    "check_period_s": (0.05, "Period of the heartbeat/staleness/deadline check."),
    "recommand_period_s": (0.1, "While stopped or in fault the halt is re-sent this often."),
    "status_period_s": (0.5, "SafetyStatus is published on every change and at this period."),
}


def _fail_safe(callback):
    """An exception in an input callback must not kill the monitor: log it and halt."""

    @functools.wraps(callback)
    def guarded(self, *args):
        try:
            with self.lock:
                return callback(self, *args)
        except Exception as exc:  # noqa: BLE001 - the process must keep running and commanding
            self.get_logger().error(f"{callback.__name__} failed: {exc!r}; halting to be safe")
            try:
                with self.lock:
                    self._halt()
            except Exception:  # noqa: BLE001
                pass
            return args[-1] if len(args) == 2 else None  # a service callback returns its response

    return guarded


def _rfc3339_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class SafetyMonitorNode(LifecycleNode):
    def __init__(self, **kwargs) -> None:
        super().__init__("safety_monitor", **kwargs)
        for name, (default, description) in PARAMETERS.items():
            self.declare_parameter(name, default, ParameterDescriptor(description=description))
        self.monitor: Monitor | None = None
        self.config_error = ""
        self.lock = threading.RLock()  # the Monitor is used from both executors' threads
        # the stop-only inputs, on a node without parameter services or rosout of its own
        self.stop_inputs = rclpy.create_node(f"{self.get_name()}_stop_inputs", namespace=self.get_namespace(),
                                             context=self.context, start_parameter_services=False,
                                             enable_rosout=False)
        self._entities: list = []
        self._timers: list = []
        self._reported_changes = -1
        self._episode = None
        self._trigger_ros_time = None
        self._last_recommand = 0.0
        self._last_diag = 0.0
        self._event_seq = 0

    # -- configuration --------------------------------------------------------------------
    def _p(self, name):
        return self.get_parameter(name).value

    def _read_config(self) -> MonitorConfig:
        positive = ("activation_timeout_s", "activation_retry_s", "standstill_velocity", "heat_deadline_s",
                    "heater_state_timeout_s", "heartbeat_lease_s", "presence_stale_s", "velocity_tolerance",
                    "check_period_s", "recommand_period_s", "status_period_s")
        for name in positive:
            value = self._p(name)
            if not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"parameter {name} must be a positive number, got {value!r}")
        if self._p("heat_deadline_s") > 1.0:
            raise ValueError("parameter heat_deadline_s must be <= 1.0 s (CORE §6.2 cuts heat within 1 s)")
        lo, hi = list(self._p("workspace_min")), list(self._p("workspace_max"))
        if len(lo) != 3 or len(hi) != 3 or not all(a < b for a, b in zip(lo, hi)):
            raise ValueError("parameters workspace_min/workspace_max must be 3 numbers each with min < max")
        return MonitorConfig(
            standstill_velocity=self._p("standstill_velocity"), heat_off_power_w=self._p("heat_off_power_w"),
            heat_deadline_s=self._p("heat_deadline_s"), heater_state_timeout_s=self._p("heater_state_timeout_s"),
            heartbeat_lease_s=self._p("heartbeat_lease_s"), presence_stale_s=self._p("presence_stale_s"),
            position_margin=self._p("position_margin"), velocity_tolerance=self._p("velocity_tolerance"),
            workspace_min=tuple(lo), workspace_max=tuple(hi))

    def _load_pack(self) -> dict:
        from cookwala_ros.resources import share_path

        paths = [share_path(*p[len("package://"):].split("/")) if p.startswith("package://") else p
                 for p in self._p("device_packs") if p]
        return load_effective_pack(paths, pack_id=f"{self._p('device_id')}-effective")

    def _load_arm(self):
        from cookwala_ros.sim.robot_description import default_arm, load_arm

        arm = load_arm(self._p("urdf_path")) if self._p("urdf_path") else default_arm()
        limits = {j.name: JointLimit(j.lower, j.upper, j.max_velocity) for j in arm.joints}
        names = list(arm.joint_names)

        kinematics = ToolKinematics(arm.chain)

        def tool_position(joint_names, positions):
            return kinematics.position(dict(zip(joint_names, positions)))

        return names, limits, tool_position

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        try:
            return self._configure()
        except Exception as exc:  # rclpy swallows transition exceptions silently: say what broke
            self.config_error = f"{type(exc).__name__}: {exc}"
            self.get_logger().error(f"configure failed: {traceback.format_exc()}")
            return TransitionCallbackReturn.FAILURE

    def _configure(self) -> TransitionCallbackReturn:
        try:
            config = self._read_config()
            pack = self._load_pack()
            joint_names, joint_limits, tool_position = self._load_arm()
        except (ValueError, PackError, OSError) as exc:
            self.config_error = str(exc)
            self.get_logger().error(f"configure failed: {exc}")
            return TransitionCallbackReturn.FAILURE
        from cookwala_ros.core import vocab

        def unattended_of(op):
            env = vocab.envelope(op) if vocab.is_known_op(op) else None
            return None if env is None else env.get("unattended")

        self.monitor = Monitor(pack, config, joint_limits, tool_position, unattended_of)
        self._halt_traj = JointTrajectory(joint_names=joint_names)  # no points: stop and hold
        self._halt_heat = HeaterCommand(mode=HeaterCommand.MODE_OFF, source="safety_monitor")
        self._create_entities()
        self.get_logger().info(f"configured: pack {pack['id']} ({len(pack['limits'])} limits), "
                               f"motion deadline {self.monitor.arbiter.motion_deadline_s:g} s, "
                               f"heat deadline {config.heat_deadline_s:g} s")
        self._report(force=True)
        return TransitionCallbackReturn.SUCCESS

    def _create_entities(self) -> None:
        self._traj_pub = self.create_publisher(JointTrajectory, "/arm_controller/joint_trajectory", qos.command())
        self._heat_pub = self.create_publisher(HeaterCommand, "/heater/command", qos.command())
        self._status_pub = self.create_publisher(SafetyStatus, "/cookwala/safety/status", qos.latched())
        self._event_pub = self.create_publisher(Event, "/cookwala/events", qos.events())
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", qos.sensor())
        self._cancel = (self.create_client(CancelGoal, "/arm_controller/follow_joint_trajectory/_action/cancel_goal")
                        if CancelGoal else None)
        lease = self._p("heartbeat_lease_s")
        s = self.stop_inputs
        self._stop_entities = [
            s.create_subscription(Bool, "/cookwala/estop", self._on_estop, qos.latched()),
            s.create_subscription(Bool, "/cookwala/smoke", self._on_smoke, qos.sensor()),
            s.create_subscription(FluidPressure, "/cookwala/pressure", self._on_pressure, qos.sensor()),
            s.create_service(Stop, f"{self.get_fully_qualified_name()}/stop", self._on_stop),
        ]
        self._entities = [
            self._traj_pub, self._heat_pub, self._status_pub, self._event_pub, self._diag_pub,
            self.create_subscription(HeaterState, "/heater/state", self._on_heater, qos.sensor()),
            self.create_subscription(JointState, "/joint_states", self._on_joints, qos.sensor()),
            self.create_subscription(Heartbeat, "/cookwala/heartbeat", self._on_heartbeat, qos.heartbeat(lease),
                                     event_callbacks=SubscriptionEventCallbacks(liveliness=self._on_liveliness)),
            self.create_subscription(Presence, "/cookwala/presence", self._on_presence, qos.sensor()),
            # volatile on purpose: matches the executor whether it publishes latched or not
            self.create_subscription(ExecutionStatus, "/cookwala/status", self._on_execution, qos.sensor()),
            self.create_service(ResetSafety, "~/reset", self._on_reset),
            self.create_service(GetSafetyLimits, "~/get_safety_limits", self._on_get_limits),
            self.create_service(TightenSafetyLimits, "~/tighten_safety_limits", self._on_tighten),
        ]
        if self._cancel is not None:
            self._entities.append(self._cancel)

    def _destroy_entities(self) -> None:
        for entity in getattr(self, "_stop_entities", []):
            (self.stop_inputs.destroy_service if isinstance(entity, Service)
             else self.stop_inputs.destroy_subscription)(entity)
        self._stop_entities = []
        for timer in self._timers:
            self.destroy_timer(timer)
        self._timers = []
        for entity in self._entities:
            for destroy in (self.destroy_publisher, self.destroy_subscription, self.destroy_service, self.destroy_client):
                try:
                    if destroy(entity):
                        break
                except Exception:  # wrong kind for this destroy_*; try the next
                    continue
        self._entities = []

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        try:
            return self._activate()
        except Exception:  # noqa: BLE001
            self.get_logger().error(f"activate failed: {traceback.format_exc()}")
            return TransitionCallbackReturn.FAILURE

    def _activate(self) -> TransitionCallbackReturn:
        deadline = time.monotonic() + self._p("activation_timeout_s")

        def missing():
            out = [f"no controller subscribed to {topic}" for topic, pub in (
                ("/arm_controller/joint_trajectory", self._traj_pub), ("/heater/command", self._heat_pub))
                if not pub.get_subscription_count()]
            return out + ([] if self.monitor.heater_seen else ["no /heater/state received"])

        while missing() and time.monotonic() < deadline:
            time.sleep(0.02)
        if missing():
            self.get_logger().error(
                f"activate failed: {' and '.join(missing())} within {self._p('activation_timeout_s'):g} s "
                "(activation_timeout_s); a stop must ride on connections that already exist and be "
                "verifiable, so the monitor stays inactive")
            return TransitionCallbackReturn.FAILURE
        with self.lock:
            if self.monitor.activate(time.monotonic()):
                self._halt()
        steady = Clock(clock_type=ClockType.STEADY_TIME)  # safety timing never follows /clock
        self._timers = [self.create_timer(self._p("check_period_s"), self._on_check, clock=steady),
                        self.create_timer(self._p("status_period_s"), self._on_status_timer, clock=steady)]
        self.get_logger().info(f"active: {self.monitor.state}")
        self._report(force=True)
        freeze_startup_objects()  # the pack, the arm model and the entities are here to stay
        return TransitionCallbackReturn.SUCCESS

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        for timer in self._timers:
            self.destroy_timer(timer)
        self._timers = []
        with self.lock:
            self.monitor.deactivate()
            self._halt()  # nothing watches the kitchen any more: leave it halted
            self._report(force=True)
        return TransitionCallbackReturn.SUCCESS

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._destroy_entities()
        self.monitor = None
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._destroy_entities()
        return TransitionCallbackReturn.SUCCESS

    # -- the stop path --------------------------------------------------------------------
    def _halt(self) -> None:
        """Publish the halt: empty trajectory (stop and hold), then heater off. Nothing else first."""
        self._traj_pub.publish(self._halt_traj)
        self._heat_pub.publish(self._halt_heat)
        self.monitor.arbiter.halt_sent(time.monotonic())
        if self._cancel is not None and self._cancel.service_is_ready():
            self._cancel.call_async(CancelGoal.Request())  # zero goal id and stamp: cancel every goal

    def _after(self, halt: bool) -> None:
        if halt:
            self._halt()
        self._report()

    @_fail_safe
    def _on_estop(self, msg: Bool) -> None:
        self._after(self.monitor.on_estop(bool(msg.data), time.monotonic()))

    @_fail_safe
    def _on_stop(self, request, response):
        halt = self.monitor.on_stop_request(request.requested_by, request.reason, time.monotonic())
        if halt or self.monitor.state == "unconfigured":  # a stop is never refused, even inactive
            self._halt()
        self._report()
        response.accepted = True
        response.state = self.monitor.state
        response.message = f"halt commanded; monitor {self.monitor.state}"
        return response

    @_fail_safe
    def _on_heater(self, msg: HeaterState) -> None:
        nan = math.nan
        reading = HeaterReading(
            power_w=msg.power_w, commanded_off=msg.commanded_mode == HeaterCommand.MODE_OFF, medium=msg.medium,
            medium_temp_c=msg.medium_temp_c if msg.medium_sensor_ok else nan,
            pan_surface_temp_c=msg.pan_surface_temp_c if msg.pan_sensor_ok else nan,
            reported_welded=msg.fault == HeaterState.FAULT_RELAY_WELDED, medium_mass_kg=msg.medium_mass_kg,
            stamp_s=msg.stamp.sec + msg.stamp.nanosec * 1e-9)
        self._after(self.monitor.on_heater(reading, time.monotonic()))

    @_fail_safe
    def _on_joints(self, msg: JointState) -> None:
        self._after(self.monitor.on_joints(msg.name, msg.position, msg.velocity, time.monotonic()))

    @_fail_safe
    def _on_heartbeat(self, msg: Heartbeat) -> None:
        self.monitor.on_heartbeat(time.monotonic())

    @_fail_safe
    def _on_liveliness(self, info) -> None:
        self._after(self.monitor.on_liveliness(info.alive_count > 0, time.monotonic()))

    @_fail_safe
    def _on_presence(self, msg: Presence) -> None:
        now = time.monotonic()
        self._after(self.monitor.on_presence(PresenceReading(msg.person_present, msg.reachable_within_s, now), now))

    @_fail_safe
    def _on_execution(self, msg: ExecutionStatus) -> None:
        readings = {r.sensor: r.value for r in msg.readings}
        food_class = food_class_of(msg.status_json)
        ros_s = self.get_clock().now().nanoseconds * 1e-9
        self._after(self.monitor.on_execution(msg.state, msg.op, readings, food_class, ros_s, time.monotonic()))

    @_fail_safe
    def _on_smoke(self, msg: Bool) -> None:
        self._after(self.monitor.on_smoke(bool(msg.data), time.monotonic()))

    @_fail_safe
    def _on_pressure(self, msg: FluidPressure) -> None:
        self._after(self.monitor.on_pressure(msg.fluid_pressure / 1000.0, time.monotonic()))

    @_fail_safe
    def _on_check(self) -> None:
        now = time.monotonic()
        halt = self.monitor.tick(now)
        if halt or (self.monitor.keep_commanding and now - self._last_recommand >= self._p("recommand_period_s")):
            self._last_recommand = now
            self._halt()
        self._report()

    @_fail_safe
    def _on_reset(self, request, response):
        ok, message = self.monitor.reset(time.monotonic())
        response.accepted = ok
        response.state = self.monitor.state
        response.active_triggers = self.monitor.arbiter.active_triggers
        response.message = message
        text = f"reset by {request.requested_by or 'someone'}: {message}"
        if ok:
            self.get_logger().info(text)
        else:
            self.get_logger().warning(text)
        self._report()
        return response

    # -- limits services ------------------------------------------------------------------
    @_fail_safe
    def _on_get_limits(self, request, response):
        pack = self.monitor.pack
        response.pack_id = pack["id"]
        response.limits = safety_limit_msgs(pack)
        response.pack_json = json.dumps(pack, ensure_ascii=False)
        return response

    @_fail_safe
    def _on_tighten(self, request, response):
        who = request.requested_by or "someone"
        try:
            result = self.monitor.tighten(json.loads(request.pack_json))
        except ValueError as exc:
            response.accepted, response.message = False, f"not a SafetyLimits pack: {exc}"
            self.get_logger().warning(f"tighten request by {who} refused: {response.message}")
            self._event(incidents.TIGHTEN_REFUSED, {"requestedBy": who, "detail": response.message})
            return response
        response.accepted = result.accepted
        response.tightened_ids, response.refused_ids = result.tightened_ids, result.refused_ids
        response.pack_json = json.dumps(self.monitor.pack, ensure_ascii=False)
        reasons = {k: v for k, v in result.reasons.items() if k in (result.refused_ids or result.tightened_ids)}
        if result.accepted:
            response.message = (f"tightened {', '.join(result.tightened_ids)}" if result.tightened_ids
                                else "nothing stricter than the effective limits")
            self.get_logger().info(f"tighten request by {who}: {response.message}")
            if result.tightened_ids:
                self._event(incidents.TIGHTENED, {"requestedBy": who, "tightenedIds": result.tightened_ids,
                                                  "reasons": reasons})
                self._report(force=True)
        else:
            response.message = "refused: would loosen or remove " + "; ".join(
                f"{i} ({', '.join(reasons.get(i, []))})" for i in result.refused_ids)
            self.get_logger().warning(f"tighten request by {who} {response.message}")
            self._event(incidents.TIGHTEN_REFUSED, {"requestedBy": who, "refusedIds": result.refused_ids,
                                                    "reasons": reasons})
        return response

    # -- reporting ------------------------------------------------------------------------
    @_fail_safe
    def _on_status_timer(self) -> None:
        self._report(force=True)

    def _report(self, force: bool = False) -> None:
        """Status on change (and when forced), events from the monitor's outbox, diagnostics."""
        monitor = self.monitor
        if monitor is None:
            return
        try:
            episode = monitor.arbiter.episode
            if episode is not None and episode is not self._episode:
                self._episode = episode
                self._trigger_ros_time = self.get_clock().now().to_msg()
            while monitor.outbox:
                item = monitor.outbox.pop(0)
                self._incident(item)
            if force or monitor.arbiter.changes != self._reported_changes:
                self._reported_changes = monitor.arbiter.changes
                self._status_pub.publish(status_msg(monitor, self.get_clock().now().to_msg(), self._trigger_ros_time))
            now = time.monotonic()
            if force and now - self._last_diag >= 1.0:
                self._last_diag = now
                self._diag_pub.publish(diagnostics(monitor, self.get_clock().now().to_msg(), self._p("device_id")))
        except Exception as exc:  # reporting must never break the stop path
            self.get_logger().error(f"reporting failed: {exc!r}")

    def _incident(self, item) -> None:
        if item.action == "cleared":
            kind = incidents.CLEARED
        elif item.action == "fault":
            kind = incidents.classify(item.trigger) if item.trigger != "deadline" else incidents.FAULT
            self.get_logger().error(f"FAULT: {item.trigger}: {item.detail}; commanding off until a local reset")
        else:
            kind = incidents.classify(item.trigger, self.monitor.kind_of.get(item.limit_id))
            self.get_logger().warning(f"trigger {item.trigger}: {item.detail} ({item.action})")
        ep = self.monitor.arbiter.episode
        data = {"trigger": item.trigger, "detail": item.detail, "action": item.action, "state": self.monitor.state,
                "activeTriggers": self.monitor.arbiter.active_triggers}
        if item.limit_id:
            data["limitId"] = item.limit_id
        if ep is not None:
            data["haltLatencyS"] = ep.halt_latency_s
        self._event(kind, data)

    def _event(self, kind, data: dict) -> None:
        self._event_seq += 1
        device = self._p("device_id")
        event = incidents.cloud_event(kind, data, event_id=str(uuid.uuid4()), source=f"urn:cookwala:device:{device}",
                                      time=_rfc3339_now(), seq=self._event_seq, subject=device)
        self._event_pub.publish(Event(
            specversion="1.0", id=event["id"], source=event["source"], type=event["type"], subject=device,
            time=event["time"], cookwalaseq=self._event_seq, cookwalalatency="local_safety",
            datacontenttype="application/json", data=incidents.data_text(event)))

    # -- start-up -------------------------------------------------------------------------
    def autostart(self) -> None:
        """Configure, then activate until the controllers are there (the node stays inactive meanwhile)."""
        if self.trigger_configure() != TransitionCallbackReturn.SUCCESS:
            self.get_logger().fatal(f"cannot configure: {self.config_error}")
            rclpy.try_shutdown()
            return
        while rclpy.ok() and self.trigger_activate() != TransitionCallbackReturn.SUCCESS:
            time.sleep(self._p("activation_retry_s"))


def main(args: list[str] | None = None) -> int:
    # A callback waiting for the GIL held by the other executor's thread gets it within 1 ms
    # instead of the default 5 ms.
    sys.setswitchinterval(0.001)
    rclpy.init(args=args)
    node = SafetyMonitorNode()
    executor = SingleThreadedExecutor()  # one thread: the Python executor's overhead, once
    executor.add_node(node)
    stop_executor = SingleThreadedExecutor()
    stop_executor.add_node(node.stop_inputs)
    threading.Thread(target=_spin_quietly, args=(stop_executor,), name="stop_inputs", daemon=True).start()
    if node.get_parameter("autostart").value:
        threading.Thread(target=node.autostart, name="autostart", daemon=True).start()
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        stop_executor.shutdown()
        executor.shutdown()
        node.stop_inputs.destroy_node()
        node.destroy_node()
        rclpy.try_shutdown()
    return 1 if node.config_error else 0


def _spin_quietly(executor) -> None:
    """Spin until shutdown; the context going away under Ctrl-C is a clean end, not a fault."""
    try:
        executor.spin()
    except Exception:  # noqa: BLE001
        if rclpy.ok():
            raise


if __name__ == "__main__":
    sys.exit(main())
