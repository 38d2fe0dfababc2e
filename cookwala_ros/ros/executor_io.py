"""The executor's device side over ROS: what it reads (heater, joints, presence, safety status)
and what it commands (heater, arm trajectories). Implements the service's DevicePorts.

A stop somebody asked for (HTTP, the ROS stop service, a goal cancel) is published here at once
and also handed to the Stop service of the safety monitor (`safety_monitor_node` in the device
file), so the monitor latches it, verifies standstill and heat off and keeps the kitchen halted
until a local reset. The call is asynchronous and never waited on; the monitor's own inputs do
not depend on it. The monitor's effective limits (tightened there since start-up) are asked for
with GetSafetyLimits when an execution starts or the limits are read.

Topic names come from the device file. Sensor readings become an engine `Observation`; engine
`Commands` become HeaterCommand and JointTrajectory messages (a named pose is one trajectory
point, timed from the URDF velocity limits at half speed; a halt is every joint held at rest
where the latest joint state puts it, as the JointTrajectoryController accepts: see
`convert.halt_trajectory_msg`).

The engine's `heater_setup` (what the pot holds now) means nothing to a real hob; with the
simulated one it becomes the heater sim node's `medium`, `medium_mass_kg` and `lid` parameters,
set together with one asynchronous SetParametersAtomically call (never waited on in the control tick) when the
executor's `heater_sim_node` parameter names that node. Until the heater state shows the new
contents (or HOLD_MAX_S passes, or the call fails) the readings still describe the old ones, so
the executor holds its control tick meanwhile (`HeaterSimContents.holding()`).
"""

from __future__ import annotations

import json
import math
import threading
import time

from builtin_interfaces.msg import Duration
from rcl_interfaces.srv import SetParametersAtomically
from rclpy.parameter import Parameter
from rclpy.node import Node
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from cookwala_msgs.msg import HeaterCommand, HeaterState, Presence, SafetyStatus
from cookwala_msgs.srv import GetSafetyLimits, Stop
from cookwala_ros.core.run_types import Commands, Observation
from cookwala_ros.ros import qos
from cookwala_ros.robot.joint_trajectory import HoldBuilder
from cookwala_ros.ros.convert import MEDIUM_SENSORS, halt_trajectory_msg

POSE_TOLERANCE_RAD = 0.01
MOVING_RAD_S = 1e-3
REACHABLE_S = 60.0  # CORE §6.6: present, or reachable within one minute
PAN_SENSOR = "cw.sense.pan_surface_temp"
SIM_MASS_RANGE_KG = (0.01, 50.0)  # heater_sim's medium_mass_kg range
LIMITS_TIMEOUT_S = 1.0  # longest wait [s] for the safety monitor's GetSafetyLimits
HOLD_MAX_S = 2.0  # longest wait [s, steady clock] for the sim hob to show new contents


class DeviceIO:
    """Latest readings plus the command publishers; thread-safe."""

    def __init__(self, node: Node, device, values: dict, group) -> None:
        from cookwala_ros.sim.robot_description import load_arm

        self.node = node
        self._lock = threading.Lock()
        self.presence_stale_s = values["presence_stale_s"]
        self.presence_default = values["presence_default"]
        self.disabled: set[str] = set()
        self.heater_state: HeaterState | None = None
        self.joints: JointState | None = None
        self.presence: tuple[bool, float] | None = None  # (present, steady receipt time)
        self.safety: SafetyStatus | None = None
        section = device.executor
        arm = device.raw.get("arm") or {}
        heater = (device.raw.get("heaters") or [{}])[0]
        self.poses: dict = {}
        self.velocity: dict = {}
        self.arm_hold: HoldBuilder | None = None  # builds the arm halt (robot/joint_trajectory.py)
        if arm:
            from cookwala_ros.device import load_robot_files

            self.poses = load_robot_files(device).poses
            description = load_arm(device.resolve(arm["robot_description"]))
            self.velocity = dict(zip(description.joint_names, map(float, description.max_velocity)))
            self.arm_hold = HoldBuilder.from_arm(description)
        self.heater_sim = HeaterSimContents(node, values.get("heater_sim_node") or "", group)
        self.trajectory_pub = node.create_publisher(JointTrajectory, arm.get("trajectory_topic", "/arm_controller/joint_trajectory"), qos.command())
        self.heater_pub = node.create_publisher(HeaterCommand, heater.get("command_topic", "/heater/command"), qos.command())
        node.create_subscription(HeaterState, heater.get("state_topic", "/heater/state"), self._on_heater, qos.sensor(), callback_group=group)
        node.create_subscription(JointState, arm.get("joint_states_topic", "/joint_states"), self._on_joints, qos.sensor(), callback_group=group)
        node.create_subscription(Presence, section.get("presence_topic") or "/cookwala/presence", self._on_presence, qos.sensor(), callback_group=group)
        node.create_subscription(SafetyStatus, section.get("safety_status_topic") or "/cookwala/safety/status", self._on_safety, qos.latched(), callback_group=group)
        monitor = section.get("safety_monitor_node", "/safety_monitor").rstrip("/")
        self.safety_stop = node.create_client(Stop, f"{monitor}/stop", callback_group=group) if monitor else None
        self.safety_limits_client = (node.create_client(GetSafetyLimits, f"{monitor}/get_safety_limits",
                                                        callback_group=group) if monitor else None)

    # ------------------------------------------------------------------ inputs

    def _on_heater(self, msg: HeaterState) -> None:
        with self._lock:
            self.heater_state = msg
        self.heater_sim.observe(msg)

    def _on_joints(self, msg: JointState) -> None:
        with self._lock:
            self.joints = msg

    def _on_presence(self, msg: Presence) -> None:
        present = bool(msg.person_present) or (math.isfinite(msg.reachable_within_s) and msg.reachable_within_s <= REACHABLE_S)
        with self._lock:
            self.presence = (present, time.monotonic())

    def _on_safety(self, msg: SafetyStatus) -> None:
        with self._lock:
            self.safety = msg

    # ------------------------------------------------------------------ DevicePorts

    def human_present(self) -> bool:
        with self._lock:
            if self.presence is None:
                return self.presence_default
            present, at = self.presence
        return present and time.monotonic() - at <= self.presence_stale_s

    def demoted_sensors(self) -> set[str]:
        out = set(self.disabled)
        with self._lock:
            state = self.heater_state
        if state is not None:
            if not state.medium_sensor_ok:
                out.update(MEDIUM_SENSORS)
            if not state.pan_sensor_ok:
                out.add(PAN_SENSOR)
        return out

    def safety_limits(self) -> dict | None:
        client = self.safety_limits_client
        if client is None or not client.service_is_ready():
            return None
        future = client.call_async(GetSafetyLimits.Request())
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        if not done.wait(LIMITS_TIMEOUT_S) or future.result() is None:
            self.node.get_logger().warning(f"{client.srv_name} did not answer within {LIMITS_TIMEOUT_S:g} s: "
                                           "using the executor's own limits")
            return None
        try:
            return json.loads(future.result().pack_json)
        except ValueError:
            return None

    def halt(self, stop_reason: str | None = None) -> None:
        try:
            self.apply(Commands(heater=("off",), arm_halt=True))
        except Exception as exc:  # noqa: BLE001 - at shutdown the context may be gone; the monitor still cuts heat
            self.node.get_logger().warning(f"halt not published: {exc}")
        if stop_reason is None or self.safety_stop is None:
            return
        if not self.safety_stop.service_is_ready():
            self.node.get_logger().warning(f"no safety monitor on {self.safety_stop.srv_name}: the stop is "
                                           "published by the executor alone")
            return
        self.safety_stop.call_async(Stop.Request(requested_by="executor", reason=stop_reason[:300]))

    def safety_armed(self) -> bool:
        with self._lock:
            return self.safety is None or self.safety.state == SafetyStatus.STATE_ARMED

    def safety_hold(self) -> str | None:
        with self._lock:
            status = self.safety
        if status is None or status.state == SafetyStatus.STATE_ARMED:
            return None  # no safety monitor on this device, or it is armed
        why = f" after {status.last_trigger}" if status.last_trigger else ""
        return (f"the safety monitor is {status.state_label or 'not armed'}{why}; "
                "it re-arms only by a local reset (ResetSafety)")

    # ------------------------------------------------------------------ observation / commands

    def observation(self, now_s: float) -> Observation:
        with self._lock:
            heater, joints = self.heater_state, self.joints
        positions, moving = {}, False
        if joints is not None:
            positions = dict(zip(joints.name, map(float, joints.position)))
            moving = any(abs(v) > MOVING_RAD_S for v in joints.velocity)
        demoted = self.demoted_sensors()
        sensors_ok = {s: s not in demoted for s in (*MEDIUM_SENSORS, PAN_SENSOR)}
        obs = Observation(now_s=now_s, arm_positions=positions, arm_moving=moving,
                          arm_pose=None if moving else self._pose_at(positions),
                          human_present=self.human_present(), safety_armed=self.safety_armed(),
                          sensors_ok=sensors_ok)
        if heater is not None:
            obs.medium_temp_c = heater.medium_temp_c if heater.medium_sensor_ok and math.isfinite(heater.medium_temp_c) else None
            obs.pan_temp_c = heater.pan_surface_temp_c if heater.pan_sensor_ok and math.isfinite(heater.pan_surface_temp_c) else None
            obs.heater_power_w = heater.power_w
            if heater.fault != HeaterState.FAULT_NONE:
                obs.heater_fault = {1: "relay_welded", 2: "sensor_disconnected", 3: "overtemp"}.get(heater.fault, "fault")
        return obs

    def _pose_at(self, positions: dict) -> str | None:
        for name, pose in self.poses.items():
            if all(j in positions and abs(positions[j] - q) < POSE_TOLERANCE_RAD for j, q in pose.items()):
                return name
        return None

    def apply(self, commands: Commands) -> None:
        if commands.heater_setup:
            self.heater_sim.request(commands.heater_setup)
        if commands.heater is not None:
            self._heater(commands.heater)
        if commands.arm_halt:
            with self._lock:
                joints = self.joints
            now_s = self.node.get_clock().now().nanoseconds * 1e-9
            self.trajectory_pub.publish(halt_trajectory_msg(self.arm_hold, joints, now_s))
        elif commands.arm_pose:
            self._move_to(commands.arm_pose)

    def _heater(self, command: tuple) -> None:
        msg = HeaterCommand(stamp=self.node.get_clock().now().to_msg(), source="executor")
        kind = command[0]
        if kind == "power":
            msg.mode, msg.power_w = HeaterCommand.MODE_POWER, float(command[1])
        elif kind == "setpoint":
            msg.mode, msg.setpoint_c = HeaterCommand.MODE_SETPOINT, float(command[1])
        else:
            msg.mode = HeaterCommand.MODE_OFF
        self.heater_pub.publish(msg)

    def _move_to(self, pose: str) -> None:
        target = self.poses.get(pose)
        if target is None:
            self.node.get_logger().error(f"the engine asked for unknown pose {pose!r}")
            return
        with self._lock:
            joints = self.joints
        now = dict(zip(joints.name, joints.position)) if joints is not None else {}
        names = list(target)
        duration = max([0.5] + [abs(target[n] - now.get(n, target[n])) / (0.5 * self.velocity.get(n, 1.0)) for n in names])
        point = JointTrajectoryPoint(positions=[float(target[n]) for n in names],
                                     time_from_start=Duration(sec=int(duration), nanosec=int((duration % 1) * 1e9)))
        self.trajectory_pub.publish(JointTrajectory(joint_names=names, points=[point]))


class HeaterSimContents:
    """Sends the engine's heater set-up to the simulated hob's parameters, asynchronously.

    Without a node name it does nothing (a real heater). The newest set-up wins: one still
    waiting for the service, or sent while an earlier call is in flight, goes out from `pump()`
    (called every control tick) once the service is there and the earlier call has answered.
    `holding()` is true from a set-up until a HeaterState shows it (bounded by HOLD_MAX_S).
    """

    def __init__(self, node: Node, sim_node: str, group) -> None:
        self.node = node
        self.sim_node = sim_node.rstrip("/")
        self._client = node.create_client(SetParametersAtomically, f"{self.sim_node}/set_parameters_atomically", callback_group=group) \
            if self.sim_node else None
        self._lock = threading.Lock()
        self._pending: dict | None = None
        self._in_flight = False
        self._warned_unavailable = False
        self._awaited: dict | None = None  # the set-up the heater state must show
        self._awaited_since = 0.0
        self.applied: list[dict] = []  # set-ups the sim accepted, in order (diagnostics, tests)

    def request(self, setup: dict) -> None:
        if self._client is None:
            return
        setup = dict(setup, mass_kg=min(max(float(setup.get("mass_kg", 1.0)), SIM_MASS_RANGE_KG[0]), SIM_MASS_RANGE_KG[1]))
        with self._lock:
            self._pending = setup
            self._awaited, self._awaited_since = setup, time.monotonic()
        self.pump()

    def holding(self) -> bool:
        """Whether the heater readings may still describe the pot's previous contents."""
        with self._lock:
            if self._awaited is None:
                return False
            if time.monotonic() - self._awaited_since <= HOLD_MAX_S:
                return True
            setup, self._awaited = self._awaited, None
        self.node.get_logger().warning(f"{self.sim_node} did not show the pot set-up {setup} within {HOLD_MAX_S:g} s; "
                                       "going on with its readings")
        return False

    def observe(self, state: HeaterState) -> None:
        """A heater state arrived: stop holding once it shows the awaited contents."""
        with self._lock:
            setup = self._awaited
            if setup is None or state.medium != setup["medium"]:
                return
            if setup["medium"] != "pan_surface" and abs(state.medium_mass_kg - setup["mass_kg"]) > 1e-3 * max(1.0, setup["mass_kg"]):
                return
            self._awaited = None

    def pump(self) -> None:
        """Send the pending set-up if the service is up and no call is in flight; never blocks."""
        if self._client is None:
            return
        with self._lock:
            if self._pending is None or self._in_flight:
                return
            if not self._client.service_is_ready():
                if not self._warned_unavailable:
                    self.node.get_logger().warning(f"{self._client.srv_name} is not available yet; "
                                                   "the pot set-up waits for it")
                    self._warned_unavailable = True
                return
            setup, self._pending, self._in_flight = self._pending, None, True
        request = SetParametersAtomically.Request()
        request.parameters = [Parameter("medium", value=str(setup["medium"])).to_parameter_msg(),
                              Parameter("medium_mass_kg", value=setup["mass_kg"]).to_parameter_msg(),
                              Parameter("lid", value=bool(setup.get("lid"))).to_parameter_msg()]
        future = self._client.call_async(request)
        future.add_done_callback(lambda done: self._on_response(done, setup))

    def _on_response(self, future, setup: dict) -> None:
        with self._lock:
            self._in_flight = False
        try:
            result = future.result().result
            problem = None if result.successful else f"refused by {self.sim_node}: {result.reason}"
        except Exception as exc:  # noqa: BLE001 - a failed call is logged, cooking goes on (sensors tell the truth)
            problem = f"not applied to {self.sim_node}: {exc}"
        if problem:
            with self._lock:
                if self._awaited is setup:
                    self._awaited = None  # it will not show: stop holding
            self.node.get_logger().error(f"pot set-up {setup} {problem}")
        else:
            self.applied.append(setup)
            self.node.get_logger().info(f"pot set-up applied to {self.sim_node}: {setup}")
        self.pump()  # a newer set-up may have arrived meanwhile
