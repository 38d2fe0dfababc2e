"""safety_monitor: the device-local SafetyLimits enforcer and stop arbiter (CORE §6).

A managed (lifecycle) node in its own process. `configure` loads and checks the device packs
merged with the standard's defaults; `activate` starts watching at once, and the monitor arms
only once the halt publishers are matched by the arm and heater controllers and a heater state
has arrived, so a stop rides on connections that already exist and can be verified; until then
its status says unconfigured and what it waits for (`waiting:heater_state`, ...). No transition
waits for anything. It never imports the executor and never needs the network. With `autostart`
(default) it configures and activates itself; with `autostart:=false` a lifecycle manager drives
it through the standard `<node>/change_state` and `<node>/get_state` services.

Stop path: a callback hands a plain reading to `safety.monitor.Monitor` and, when told to,
publishes the halt (a hold point at the measured joints, then HeaterCommand MODE_OFF) before anything
else. The inputs that only ever stop (the Stop service, estop, smoke, pressure) live on a small
companion node, `<name>_stop_inputs`, spun by its own single-threaded executor in its own thread:
its wait set is small, so a stop is not queued behind the 100 Hz joint states, the
lifecycle and parameter services or a limits request on the main node. One lock serialises the
two executors around the Monitor. Verification and deadlines are measured on the steady clock
(time.monotonic) and its timers run on the steady clock, so a paused or fast /clock never delays
a safety check. Reporting (status, events, diagnostics) comes after the halt and never blocks it.

Names (ros/names.py; relative = in the robot's namespace): the joint states, heater state, arm
and heater command topics the robot's device file names (`device_file`, read by
ros/safety_monitor_device.py with the monitor's own settings), cookwala/heartbeat (liveliness
lease + timer check), /cookwala/presence, cookwala/status (current op), the device file's
e-stop topic (default the kitchen's /cookwala/estop; std_msgs/Bool: true while the button is
held; latched QoS so a monitor that starts late still sees a held button), /cookwala/smoke
(std_msgs/Bool), cookwala/pressure (sensor_msgs/FluidPressure, gauge Pa), services ~/stop,
~/reset, ~/get_safety_limits, ~/tighten_safety_limits.

Guards on its own inputs (README "Stopping"): heat or motion without a live executor heartbeat,
an expected `executor_node` that never beats, stale joint states, re-energising after a verified
halt (a fault), a latch persisted in `state_dir`, and a halt on SIGINT/SIGTERM before exiting.
"""

from __future__ import annotations

import functools
import json
import math
import signal
import sys
import threading
import time
import traceback
import uuid


def _early_signal(signum, _frame) -> None:
    _EARLY_SIGNAL.append(signum)


# A SIGINT/SIGTERM while the heavy imports below run (seconds on a loaded host) ends the process
# quietly in main() instead of a KeyboardInterrupt traceback; the previous handlers come back at
# the end of this module, so importing it elsewhere changes nothing.
_EARLY_SIGNAL: list[int] = []
_PREVIOUS_HANDLERS = ({s: signal.signal(s, _early_signal) for s in (signal.SIGINT, signal.SIGTERM)}
                      if threading.current_thread() is threading.main_thread() else {})

import rclpy  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.executors import SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.service import Service
from sensor_msgs.msg import FluidPressure, JointState
from std_msgs.msg import Bool
from trajectory_msgs.msg import JointTrajectory

from cookwala_msgs.msg import (Event, ExecutionStatus, HeaterCommand, HeaterState, Heartbeat, Presence,
                               SafetyStatus)
from cookwala_msgs.srv import GetSafetyLimits, ResetSafety, Stop, TightenSafetyLimits
from cookwala_ros.ros import names, qos, realtime
from cookwala_ros.ros.convert import halt_trajectory_msg, safety_limit_msgs
from cookwala_ros.ros.endpoints import LeanEndpoints, QosDoctor
from cookwala_ros.ros.node_main import EXIT_CANNOT_START
from cookwala_ros.ros.params import ParameterError, declare_parameters
from cookwala_ros.ros.pending import deliver_waiting
from cookwala_ros.ros.safety_monitor_device import apply_device_file
from cookwala_ros.ros.safety_monitor_latch import LatchPersistence
from cookwala_ros.ros.safety_monitor_lifecycle import MonitorLifecycle
from cookwala_ros.ros.safety_monitor_params import PARAMETERS, SPECS, stop_input_args  # noqa: F401 (PARAMETERS re-exported)
from cookwala_ros.ros.spinner import Spinner
from cookwala_ros.ros.safety_gate import CommandGate
from cookwala_ros.ros.safety_report import diagnostics, status_msg
from cookwala_ros.robot.joint_trajectory import HaltPlan, HoldBuilder
from cookwala_ros.core.timestamps import rfc3339
from cookwala_ros.safety import incidents
from cookwala_ros.safety import latch as latch_file
from cookwala_ros.safety.device_rules import JointLimit
from cookwala_ros.robot.kinematics import ToolKinematics
from cookwala_ros.safety.monitor import HeaterReading, Monitor, MonitorConfig, food_class_of
from cookwala_ros.safety.packs import PackError, load_effective_pack
from cookwala_ros.safety.rules import PresenceReading

# FollowJointTrajectory goals are cancelled too, where the controller offers the action: its
# cancel service is action_msgs' CancelGoal, whatever the action type (no control_msgs needed).
from action_msgs.srv import CancelGoal


def _fail_safe(callback):
    """An exception in an input callback must not kill the monitor: log it, stop (latched, the
    gate closed) and halt."""

    @functools.wraps(callback)
    def guarded(self, *args):
        try:
            with self.lock:
                return callback(self, *args)
        except Exception as exc:  # noqa: BLE001 - the process must keep running and commanding
            self.get_logger().error(f"{callback.__name__} failed: {exc!r}; stopping to be safe")
            with self.lock:
                for step in (lambda: self.monitor is not None and self.monitor.on_internal_error(
                                 f"the monitor's {callback.__name__} failed: {exc!r}"[:300], time.monotonic()),
                             self._halt, self._report):
                    try:  # each on its own: a failing report must not keep the halt from going out
                        step()
                    except Exception:  # noqa: BLE001
                        pass
            return args[-1] if len(args) == 2 else None  # a service callback returns its response

    return guarded


class SafetyMonitorNode(LatchPersistence, MonitorLifecycle, LeanEndpoints, LifecycleNode):
    _watched: list = []  # (subscription, callback) of the inputs whose silence is a trigger
    _reported_heartbeat = ""  # the executor heartbeat label of the last status published

    def __init__(self, argv: list[str] | None = None, **kwargs) -> None:
        """Raises ParameterError (one line naming the parameter) for a bad parameter."""
        super().__init__(names.SAFETY_MONITOR_NODE, **kwargs)
        self.device, self.names = apply_device_file(self, SPECS)  # the device file's values as defaults
        declare_parameters(self, SPECS)
        self.monitor: Monitor | None = None
        self.config_error = ""
        self.closing = False  # set on the way out: start-up loops give up
        self.lock = threading.RLock()  # the Monitor is used from both executors' threads
        # The stop-only inputs, on a node without parameter services or rosout of its own. No
        # global arguments: a `__node:=` remap must not rename it too and `use_sim_time` must not
        # give it a /clock subscription; the command line's topic remaps are passed on explicitly.
        self.stop_inputs = rclpy.create_node(f"{self.get_name()}_stop_inputs", namespace=self.get_namespace(),
                                             context=self.context, start_parameter_services=False,
                                             enable_rosout=False, use_global_arguments=False,
                                             cli_args=stop_input_args(sys.argv if argv is None else argv))
        self._latched: latch_file.Latch | None = None  # found on disk at configure
        self._persisted_key = None
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
        """Cross-parameter checks; each value was checked on its own when it was declared."""
        lo, hi = [float(v) for v in self._p("workspace_min")], [float(v) for v in self._p("workspace_max")]
        if not all(a < b for a, b in zip(lo, hi)):
            raise ValueError("parameters workspace_min/workspace_max must be 3 numbers each with min < max")
        return MonitorConfig(
            standstill_velocity=self._p("standstill_velocity"), heat_off_power_w=self._p("heat_off_power_w"),
            heat_deadline_s=self._p("heat_deadline_s"), heater_state_timeout_s=self._p("heater_state_timeout_s"),
            heartbeat_lease_s=self._p("heartbeat_lease_s"), presence_stale_s=self._p("presence_stale_s"),
            position_margin=self._p("position_margin"), velocity_tolerance=self._p("velocity_tolerance"),
            workspace_min=tuple(lo), workspace_max=tuple(hi), joint_state_timeout_s=self._p("joint_state_timeout_s"),
            executor_node=self._executor_fqn(), executor_start_grace_s=self._p("executor_start_grace_s"))

    def _executor_fqn(self) -> str:
        """The expected executor's fully qualified name (a relative name is in our namespace)."""
        name = self._p("executor_node")
        return names.qualify(self.get_namespace(), name) if name else ""

    def _load_pack(self) -> dict:
        from cookwala_ros.resources import share_path

        paths = [share_path(*p[len("package://"):].split("/")) if p.startswith("package://") else p
                 for p in self._p("device_packs") if p]
        return load_effective_pack(paths, pack_id=f"{self._p('device_id')}-effective")

    def _load_arm(self):
        from cookwala_ros.robot.description import default_arm, load_arm

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
        from cookwala_ros.robot.description import default_arm, load_arm

        # the halt holds the arm where /joint_states last put it, braking within its acceleration limits
        arm = load_arm(self._p("urdf_path")) if self._p("urdf_path") else default_arm()
        self._halt_hold = HaltPlan(HoldBuilder.from_arm(arm))  # re-sent halts keep the first one's rest point
        self._halt_joints = None  # latest JointState
        self._halt_traj = halt_trajectory_msg(self._halt_hold, None)  # the fallback without joint states: see _halt
        self._halt_heat = HeaterCommand(mode=HeaterCommand.MODE_OFF, source=names.MONITOR_HEAT_SOURCE)
        self._create_entities()
        self.get_logger().info(f"configured: pack {pack['id']} ({len(pack['limits'])} limits), "
                               f"motion deadline {self.monitor.arbiter.motion_deadline_s:g} s, "
                               f"heat deadline {config.heat_deadline_s:g} s")
        self._report(force=True)
        return TransitionCallbackReturn.SUCCESS

    def _create_entities(self) -> None:
        topics = self.names  # the device file's (relative = in the robot's namespace)
        self._traj_pub = self.create_publisher(JointTrajectory, topics.arm_trajectory, qos.command())
        self._heat_pub = self.create_publisher(HeaterCommand, topics.heater_command, qos.command())
        self._status_pub = self.create_publisher(SafetyStatus, names.SAFETY_STATUS, qos.latched())
        self._event_pub = self.create_publisher(Event, names.EVENTS, qos.events())
        self._diag_pub = self.create_publisher(DiagnosticArray, names.DIAGNOSTICS, qos.sensor())
        self._cancel = self.create_client(CancelGoal, f"{topics.arm_follow_joint_trajectory}/_action/cancel_goal")
        lease = self._p("heartbeat_lease_s")
        s = self.stop_inputs
        self._stop_entities = [
            s.create_subscription(Bool, topics.estop, self._on_estop, qos.latched()),
            s.create_subscription(Bool, names.SMOKE, self._on_smoke, qos.sensor()),
            s.create_subscription(FluidPressure, names.PRESSURE, self._on_pressure, qos.sensor()),
            s.create_service(Stop, names.service_of(self.get_fully_qualified_name(), names.MONITOR_STOP), self._on_stop),
        ]
        # the inputs whose silence is a trigger: delivered before each check (ros/pending.py)
        self._joints_sub = self.create_subscription(JointState, topics.joint_states, self._on_joints, qos.sensor())
        self._watched = [
            (self.create_subscription(HeaterState, topics.heater_state, self._on_heater, qos.sensor()), self._on_heater),
            (self._joints_sub, self._on_joints),
            (self.create_subscription(Heartbeat, names.HEARTBEAT, self._on_heartbeat, qos.heartbeat(lease),
                                      event_callbacks=SubscriptionEventCallbacks(liveliness=self._on_liveliness)),
             self._on_heartbeat),
        ]
        self._entities = [
            self._traj_pub, self._heat_pub, self._status_pub, self._event_pub, self._diag_pub,
            *(sub for sub, _ in self._watched),
            self.create_subscription(Presence, names.PRESENCE, self._on_presence, qos.sensor()),
            # volatile on purpose: matches the executor whether it publishes latched or not
            self.create_subscription(ExecutionStatus, names.EXECUTION_STATUS, self._on_execution, qos.sensor()),
            self.create_service(ResetSafety, f"~/{names.MONITOR_RESET}", self._on_reset),
            self.create_service(GetSafetyLimits, f"~/{names.MONITOR_GET_LIMITS}", self._on_get_limits),
            self.create_service(TightenSafetyLimits, f"~/{names.MONITOR_TIGHTEN}", self._on_tighten),
        ]
        if self._cancel is not None:
            self._entities.append(self._cancel)
        self._gate = CommandGate(self, self._heat_pub, self._traj_pub, self._gate_open)
        self._entities += self._gate.entities

    def _gate_open(self) -> bool:
        """Heat and motion from the executor pass only while armed (see ros/safety_gate.py)."""
        return self.monitor is not None and self.monitor.state == "armed"

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
        self._watched = []
        self._joints_sub = None

    # -- the stop path --------------------------------------------------------------------
    def _halt(self) -> None:
        """Publish the halt: the arm's hold point (see convert.halt_trajectory_msg), then heater off.

        Before any joint state the monitor cannot know where to hold, and a guessed position would
        move the arm: it sends the named trajectory without points (rejected by a ROS 2 JTC, so no
        motion is commanded) and relies on the goal cancel and on the missing joint states being a
        fault of their own.
        """
        try:
            if getattr(self, "_joints_sub", None) is not None:
                deliver_waiting(self._joints_sub, self._take_joints)
        except Exception:  # noqa: BLE001 - the halt goes out with what it has
            pass
        try:
            now = self.get_clock().now()
            self._halt_heat.stamp = now.to_msg()  # the executor tells this cut from one sent before a reset
            now_s = now.nanoseconds * 1e-9
            trajectory = halt_trajectory_msg(self._halt_hold, self._halt_joints, now_s, steady_s=time.monotonic())
        except Exception:  # noqa: BLE001 - never let building it keep the halt from going out
            trajectory = self._halt_traj
        self._traj_pub.publish(trajectory)
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
            stamp_s=msg.stamp.sec + msg.stamp.nanosec * 1e-9,
            halt_obeyed=(msg.commanded_by == names.MONITOR_HEAT_SOURCE) if msg.commanded_by else None)
        self._after(self.monitor.on_heater(reading, time.monotonic()))

    @_fail_safe
    def _on_joints(self, msg: JointState) -> None:
        self._halt_joints = msg
        self._after(self.monitor.on_joints(msg.name, msg.position, msg.velocity, time.monotonic()))

    def _take_joints(self, msg: JointState) -> None:
        """A joint state taken while the halt is built (the halt goes out next, whatever it finds).

        The halt is planned from the newest joint state. A monitor a few milliseconds behind its
        queue plans from one the arm has left: on a simulated arm 20 times faster than real time,
        5 ms behind is 0.1 s of motion, and the rest point lay 0.06-0.09 rad beyond where braking
        brought the arm (stop trials, 2 of 50)."""
        self._halt_joints = msg
        self.monitor.on_joints(msg.name, msg.position, msg.velocity, time.monotonic())

    @_fail_safe
    def _on_heartbeat(self, msg: Heartbeat) -> None:
        self.monitor.on_heartbeat(time.monotonic(), msg.node_name, msg.state)

    @_fail_safe
    def _on_graph(self) -> None:
        """Is the expected executor in the ROS graph? (Cheap: the local graph cache.)"""
        expected = self._executor_fqn()
        present = any(("/" if ns == "/" else ns + "/") + name == expected
                      for name, ns in self.get_node_names_and_namespaces())
        self._after(self.monitor.on_executor_graph(present, time.monotonic()))

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
        if self._arming:
            self._arm_when_ready()
            return
        for subscription, callback in self._watched:  # what arrived counts, however late we woke
            deliver_waiting(subscription, callback)
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
        if ok and self.monitor.state == "armed":
            self._clear_latch()
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
        except (ValueError, TypeError, RecursionError) as exc:  # JSON, schema, vocabulary: the pack stays as it was
            response.accepted, response.message = False, f"refused, not a valid SafetyLimits pack: {exc}"
            response.pack_json = json.dumps(self.monitor.pack, ensure_ascii=False)
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
            now = time.monotonic()
            heartbeat = monitor.heartbeat_label(now)
            if force or monitor.arbiter.changes != self._reported_changes or heartbeat != self._reported_heartbeat:
                self._reported_changes, self._reported_heartbeat = monitor.arbiter.changes, heartbeat
                self._status_pub.publish(status_msg(monitor, self.get_clock().now().to_msg(), self._trigger_ros_time,
                                                    self._waiting, heartbeat))
                self._persist_latch()
            if force and now - self._last_diag >= 1.0:
                self._last_diag = now
                self._diag_pub.publish(diagnostics(monitor, self.get_clock().now().to_msg(), self._p("device_id"),
                                                   self._waiting, heartbeat))
        except Exception as exc:  # reporting must never break the stop path
            self.get_logger().error(f"reporting failed: {exc!r}")

    # -- incidents as events ---------------------------------------------------------------
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
                                      time=rfc3339(time.time()), seq=self._event_seq, subject=device)
        self._event_pub.publish(Event(
            specversion="1.0", id=event["id"], source=event["source"], type=event["type"], subject=device,
            time=event["time"], cookwalaseq=self._event_seq, cookwalalatency="local_safety",
            datacontenttype="application/json", data=incidents.data_text(event)))

def main(args: list[str] | None = None) -> int:
    """Spin both nodes in their own threads; the main thread only waits for a signal, so a
    SIGINT/SIGTERM can still publish the halt (the context is alive) before teardown."""
    # A callback waiting for the GIL held by the other executor's thread gets it within 1 ms
    # instead of the default 5 ms.
    sys.setswitchinterval(0.001)
    if _EARLY_SIGNAL:  # stopped while starting: nothing was configured, nothing to halt
        return 0
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    argv = sys.argv if args is None else args
    rclpy.init(args=argv, signal_handler_options=SignalHandlerOptions.NO)
    try:
        node = SafetyMonitorNode(argv=argv)
    except ParameterError as exc:
        print(f"safety_monitor: cannot start: {exc}", file=sys.stderr)
        rclpy.try_shutdown()
        return EXIT_CANNOT_START
    # first, so that the spin threads inherit it; the middleware's threads exist already and are included
    node.get_logger().info(f"scheduling: {realtime.claim(node.get_parameter('realtime_priority').value)}")
    QosDoctor(node)  # in the main spinner; the stop inputs keep rclpy's own handlers (three subscriptions)
    spinners = [Spinner(node, "main"), Spinner(node.stop_inputs, "stop_inputs")]
    starter = None
    if node.get_parameter("autostart").value:
        starter = threading.Thread(target=node.autostart, name="autostart", daemon=True)
        starter.start()
    while not stop.wait(0.1):
        if (starter is not None and not starter.is_alive() and node.config_error) or not all(
                s.thread.is_alive() for s in spinners):
            break
    node.closing = True
    if stop.is_set():
        try:
            node.get_logger().info(f"shutting down: {node.halt_on_exit()}")
        except Exception as exc:  # noqa: BLE001 - leaving anyway; the actuators' dead-man timers remain
            print(f"safety_monitor: exit halt failed: {exc!r}", file=sys.stderr)
    # Teardown order: stop both spin loops and join their threads (nothing waits on a wait set
    # any more), then the executors, then the nodes, then the context.
    for spinner in spinners:
        spinner.request_stop()
    for spinner in spinners:
        spinner.join()
    if starter is not None:
        starter.join(timeout=2.0)
    node.stop_inputs.destroy_node()
    node.destroy_node()
    rclpy.try_shutdown()
    return 1 if node.config_error else 0


for _signum, _handler in _PREVIOUS_HANDLERS.items():
    signal.signal(_signum, _handler)


if __name__ == "__main__":
    sys.exit(main())
