"""The executor's device side over ROS: what it reads (heater, joints, presence, safety status)
and what it commands (heater, arm trajectories). Implements the service's DevicePorts.

A stop somebody asked for (HTTP, the ROS stop service, a goal cancel) is published here at once
and also handed to the Stop service of the safety monitor (`safety_monitor_node` in the device
file), so the monitor latches it, verifies standstill and heat off and keeps the kitchen halted
until a local reset. The call is asynchronous and never waited on; the monitor's own inputs do
not depend on it. The monitor's effective limits (tightened there since start-up) are asked for
with GetSafetyLimits when an execution starts or the limits are read.

The executor watches that monitor (ros/monitor_watch.py): with a monitor named, nothing starts
before it has been seen armed, and when it goes silent the executor cuts heat and halts the arm
itself, reports it and refuses new executions until the monitor is armed again.

Nothing re-energises after a stop: every heater and arm command goes out under one lock with a
stop latch. The latch is set by `halt()`, by a safety status that is not armed (or a missing
monitor), by a heater-off from anyone else (the monitor, an operator) seen on the heater command
topic, and when an execution enters `stopping`/`stopped`/`failed`; while it holds, only heater-off
and the arm halt pass. It is released only when a new execution is accepted with no stop in
between (the admission check takes a snapshot, see `safety_hold`) and the monitor is armed. While
the engine wants heat, `keepalive()` (a steady-clock timer) re-sends the heater command so the
hob's dead-man timeout never fires on a slow or paused ROS clock; never after the latch.

A guarded executor sends its heater and arm commands through the monitor's gate
(`<monitor>/gate/...`, ros/safety_gate.py): the monitor forwards them to the controllers only
while armed, so a command computed before the executor heard of a stop never reaches a
controller after the monitor's halt. With the monitor silent or gone the executor's own heat-off
and halt go straight to the controllers (forwarded heat cannot follow them: the gate is dead).

While a live safety monitor guards the kitchen, the arm's halt is the monitor's alone: the
executor asks it to stop (Stop service) or sees it stopped, and plans a halt itself only when
there is no monitor, a silent one, or no Stop service (two halt planners working from joint states
of slightly different ages would move a braked arm back and forth).

Heater and joint states older than `heater_state_timeout_s` / `joint_state_timeout_s` (on the
steady clock, and on the ROS clock too, so a stalled sim /clock is not a dead driver) are not
controlled on: the observation then has no temperatures and a `stale_state`
heater or arm fault, which makes the engine cut heat and stop with an equipment-failure incident.

Topic names come from the device file. Sensor readings become an engine `Observation`; engine
`Commands` become HeaterCommand and JointTrajectory messages (a named pose is one trajectory
point, timed from the URDF velocity limits at half speed; a halt is every joint held at rest
where the latest joint state puts it, as the JointTrajectoryController accepts: see
`convert.halt_trajectory_msg`).

What the hob reports its pot holds (HeaterState `medium`, `medium_mass_kg`; a hob that does not
say leaves `medium` empty) goes into the observation: the engine does not judge readings of a
heat step until the hob shows the contents the step heats (core.pot). The executor never sets
up a simulator: in the simulated kitchen, pot_sim puts in the pot what the running step heats.
"""

from __future__ import annotations

import json
import math
import threading
import time

from builtin_interfaces.msg import Duration
from rclpy.node import Node
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from cookwala_msgs.msg import HeaterCommand, HeaterState, Presence, SafetyStatus
from cookwala_msgs.srv import GetSafetyLimits, Stop
from cookwala_ros.executor.config import LimitsUnknown
from cookwala_ros.core.presence import counts_as_present
from cookwala_ros.core.run_types import Commands, HeatCommand, HeaterFault, HeatMode, Observation
from cookwala_ros.ros import names, qos
from cookwala_ros.robot.joint_trajectory import HaltPlan, HoldBuilder
from cookwala_ros.ros.convert import MEDIUM_SENSORS, halt_trajectory_msg
from cookwala_ros.ros.monitor_watch import MonitorWatch
from cookwala_ros.ros.pending import deliver_waiting

SOURCE = "executor"  # HeaterCommand.source of the executor's own commands
UNGUARDED = "none"  # safety_monitor_node parameter value: run without a monitor whatever the device file says
POSE_TOLERANCE_RAD = 0.01
MOVING_RAD_S = 1e-3
HEATER_FAULTS = {HeaterState.FAULT_RELAY_WELDED: HeaterFault.RELAY_WELDED,
                 HeaterState.FAULT_SENSOR_DISCONNECTED: HeaterFault.SENSOR_DISCONNECTED,
                 HeaterState.FAULT_OVERTEMP: HeaterFault.OVERTEMP}
PAN_SENSOR = "cw.sense.pan_surface_temp"
LIMITS_TIMEOUT_S = 1.0  # longest wait [s] for the safety monitor's GetSafetyLimits
STARTUP_GRACE_S = 15.0  # a driver never heard from counts as silent this long after the executor started [s]
MONITOR_STOP_WAIT_S = 0.5  # after asking the monitor to stop, its halt is awaited this long [s, steady]


class DeviceIO:
    """Latest readings plus the command publishers; thread-safe."""

    def __init__(self, node: Node, device, values: dict, group, guard_group=None) -> None:
        from cookwala_ros.robot.description import load_arm

        self.node = node
        self._lock = threading.Lock()
        self._cmd_lock = threading.RLock()  # every command publish, the latch and the keep-alive
        self._latch: str | None = None  # why commands other than heat-off/halt are held back
        self.halts_left_to_monitor = 0  # arm halts the live safety monitor made instead (see _monitor_halts_arm)
        self._stop_asked_at = -math.inf  # steady time of the last Stop asked of the monitor
        self._latch_seq = 0  # counts latch events (a new execution releases only with none since its check)
        self._admit_seq = 0
        self._monitor_lost: str | None = None  # the monitor went missing since the last release (sticky)
        self._keepalive: HeaterCommand | None = None  # the heat-on command in force, re-sent by keepalive()
        self.keepalive_timer = None  # the node's steady timer that calls keepalive(): it runs only while heat is on
        self._heater_sent_at = 0.0
        self.dropped = 0  # commands held back by the latch (diagnostics, tests)
        self._started = self._last_check = time.monotonic()
        self.heater_state_timeout_s = values["heater_state_timeout_s"]
        self.joint_state_timeout_s = values["joint_state_timeout_s"]
        self._heater_at: tuple[float, float] | None = None  # receipt times (steady, ROS)
        self._joints_at: tuple[float, float] | None = None
        self._motion_until_ns = 0  # lock-step: until then [sim ns] the arm may be moving on our trajectories
        self._first_ros: float | None = None  # ROS time of the first observation
        self.on_reading = None  # called after each heater or joint state (the lock-step tick waits for them)
        self.presence_stale_s = values["presence_stale_s"]
        self.presence_default = values["presence_default"]
        self.disabled: set[str] = set()
        self.heater_state: HeaterState | None = None
        self.joints: JointState | None = None
        self.presence: tuple[bool, float] | None = None  # (present, steady receipt time)
        self.safety: SafetyStatus | None = None
        self._armed_since_ns: int | None = None  # the monitor's stamp of its latest turn to armed
        self._armed_latest_ns: int | None = None  # its stamp on the latest status that said armed
        section = device.executor
        arm = device.raw.get("arm") or {}
        heater = (device.raw.get("heaters") or [{}])[0]
        self.has_arm, self.has_heater = bool(arm), bool(device.raw.get("heaters"))
        self.poses: dict = {}
        self.velocity: dict = {}
        self.arm_hold: HaltPlan | None = None  # plans the arm halt and keeps its rest point (robot/joint_trajectory.py)
        if arm:
            from cookwala_ros.device import load_robot_files

            self.poses = load_robot_files(device).poses
            description = load_arm(device.resolve(arm["robot_description"]))
            self.velocity = dict(zip(description.joint_names, map(float, description.max_velocity)))
            self.arm_hold = HaltPlan(HoldBuilder.from_arm(description))
        override = values.get("safety_monitor_node") or ""
        monitor = ("" if override == UNGUARDED
                   else override or section.get("safety_monitor_node", names.SAFETY_MONITOR_NODE)).rstrip("/")
        monitor = names.qualify(node.get_namespace(), monitor) if monitor else ""  # relative: in our namespace
        self.watch = MonitorWatch(monitor, values["safety_status_timeout_s"])
        topics = device.names  # relative names resolve in the executor's (the robot's) namespace
        self.trajectory_pub = node.create_publisher(JointTrajectory, topics.arm_trajectory, qos.command())
        self.heater_pub = node.create_publisher(HeaterCommand, topics.heater_command, qos.command())
        # guarded: through the monitor's gate, forwarded while it is armed (see the module doc)
        self.gate_heater_pub = (node.create_publisher(HeaterCommand, names.service_of(monitor, names.GATE_HEATER_COMMAND),
                                                      qos.command()) if monitor else None)
        self.gate_trajectory_pub = (node.create_publisher(JointTrajectory, names.service_of(monitor, names.GATE_ARM_TRAJECTORY),
                                                          qos.command()) if monitor else None)
        self.heater_state_topic = topics.heater_state
        self.joint_states_topic = topics.joint_states
        node.create_subscription(HeaterState, topics.heater_state, self._on_heater, qos.sensor(), callback_group=group)
        node.create_subscription(JointState, topics.joint_states, self._on_joints, qos.sensor(), callback_group=group)
        node.create_subscription(Presence, names.PRESENCE, self._on_presence, qos.sensor(), callback_group=group)
        guard_group = guard_group or group
        self._safety_sub = node.create_subscription(SafetyStatus, names.SAFETY_STATUS, self._on_safety, qos.latched(),
                                                    callback_group=guard_group)
        node.create_subscription(HeaterCommand, topics.heater_command, self._on_heater_command,
                                 qos.command(), callback_group=group)
        self.safety_stop = (node.create_client(Stop, names.service_of(monitor, names.MONITOR_STOP), callback_group=group)
                            if monitor else None)
        self.safety_limits_client = (node.create_client(GetSafetyLimits, names.service_of(monitor, names.MONITOR_GET_LIMITS),
                                                        callback_group=group) if monitor else None)

    # ------------------------------------------------------------------ inputs

    def _on_heater(self, msg: HeaterState) -> None:
        with self._lock:
            self.heater_state, self._heater_at = msg, (time.monotonic(), self._ros_now())
        if self.on_reading is not None:
            self.on_reading()

    def _on_joints(self, msg: JointState) -> None:
        with self._lock:
            self.joints, self._joints_at = msg, (time.monotonic(), self._ros_now())
        if self.on_reading is not None:
            self.on_reading()

    def readings_at(self, t_ns: int) -> bool:
        """Lock-step: the plant's state of sim time t has arrived (every driver the device has).

        An arm at rest is stepped without publishing (arm_sim): its state stays current from the
        rest it reported after the end of the last motion we commanded until we command another."""
        with self._lock:
            heater, joints, motion_until = self.heater_state, self.joints, self._motion_until_ns
        if self.has_heater and (heater is None or _stamp_ns(heater.stamp) < t_ns):
            return False
        if not self.has_arm:
            return True
        if joints is None:
            return False
        stamp = _stamp_ns(joints.header.stamp)
        return stamp >= t_ns or (stamp >= motion_until and not any(joints.velocity))

    def _ros_now(self) -> float:
        return self.node.get_clock().now().nanoseconds / 1e9

    def _age(self, received: tuple[float, float] | None, steady: float, now_s: float) -> tuple[float, float]:
        """(steady age, ROS-time age) of a reading; never received = since start, less the time a
        driver started with the executor may take to come up (STARTUP_GRACE_S): until its first
        reading nothing is controlled on it anyway (no temperature, no arm pose)."""
        if received is None:
            grace = STARTUP_GRACE_S
            return (steady - self._started - grace,
                    now_s - (self._first_ros if self._first_ros is not None else now_s) - grace)
        return steady - received[0], now_s - received[1]

    def _on_presence(self, msg: Presence) -> None:
        present = counts_as_present(msg.person_present, msg.reachable_within_s)  # freshness: human_present()
        with self._lock:
            self.presence = (present, time.monotonic())

    def _on_safety(self, msg: SafetyStatus) -> None:
        armed = msg.state == SafetyStatus.STATE_ARMED
        with self._lock:  # first: a stopped monitor owns the arm's halt (_monitor_halts_arm)
            was_armed = self.safety is not None and self.safety.state == SafetyStatus.STATE_ARMED
            self.safety = msg
            if not armed:
                self._armed_since_ns = self._armed_latest_ns = None
            else:
                if not was_armed:
                    self._armed_since_ns = _stamp_ns(msg.stamp) or None
                self._armed_latest_ns = _stamp_ns(msg.stamp) or None
        if not armed:  # before anything else: no tick computed from now on reaches the wire
            self.latch(f"the safety monitor is {msg.state_label or 'not armed'}"
                       + (f" after {msg.last_trigger}" if msg.last_trigger else ""), halt="new")
        with self._lock:
            self.watch.on_status(armed, msg.state_label, msg.last_trigger, time.monotonic())

    def _on_heater_command(self, msg: HeaterCommand) -> None:
        """Somebody else (the monitor, an operator) cut the heat: the executor must not turn it back on.

        Except a cut the monitor sent before its latest reset: delivered late (another topic than its
        status, so in any order with it), it would stop the execution the reset was for. Its stamp
        and the status's come from the monitor's one clock, and the monitor cuts heat only while not
        armed: a cut stamped at or before its turn to armed, or before any later status that still
        says armed, is an old one. (The status is latched keep-last-1: a slow executor may never see
        the stopped one between two armed ones, so the turn alone is not enough.) A fresh cut still
        latches at once."""
        if msg.mode != HeaterCommand.MODE_OFF or msg.source == SOURCE:
            return
        if msg.source == names.MONITOR_HEAT_SOURCE:
            with self._lock:
                armed_since, armed_latest = self._armed_since_ns, self._armed_latest_ns
            stamp = _stamp_ns(msg.stamp)
            if stamp > 0 and ((armed_since is not None and stamp <= armed_since)
                              or (armed_latest is not None and stamp < armed_latest)):
                self.node.get_logger().debug("ignored a heat cut the monitor sent before its reset")
                return
        self.latch(f"heat cut by {msg.source or 'another node'} on {self.heater_pub.topic_name}", halt="never")

    # ------------------------------------------------------------------ the stop latch

    def latch(self, reason: str, halt: str = "always") -> bool:
        """Hold back every heat and motion command from now on; publish the halt `always`, when the
        latch is `new`, or `never` (somebody else just did). True when the latch is new."""
        with self._cmd_lock:
            new = self._latch is None
            if new:
                self._latch = reason
            self._latch_seq += 1
            self._hold_keepalive(None)
            if halt == "always" or (halt == "new" and new):
                self._publish_halt()
        return new

    def latched(self) -> str | None:
        with self._cmd_lock:
            return self._latch

    def admit(self) -> bool:
        """A new execution was accepted: release the latch unless a stop came after its admission
        check or the monitor does not allow cooking. True when the latch is now clear."""
        with self._cmd_lock:
            if self._latch is not None and self._latch_seq == self._admit_seq and self.safety_hold_now() is None:
                self.node.get_logger().info(f"stop latch released for a new execution (was: {self._latch})")
                self._latch = self._monitor_lost = None
            elif self._latch is not None:
                self.node.get_logger().warning(f"stop latch kept for the new execution: {self._latch}")
            return self._latch is None

    def check_monitor(self, period_s: float) -> str | None:
        """Steady-clock check every `period_s`: when the guarding monitor has just gone missing, cut
        heat and halt (latched) and return why; None otherwise. After a stall of this process (the
        check itself came late) the statuses queued meanwhile are read first: judged next time."""
        # the status shares the check's callback group, and rclpy runs a wait's ready timers first: on
        # a busy host this timer would always win and the status never arrive (see ros/pending.py)
        deliver_waiting(self._safety_sub, self._on_safety)
        now = time.monotonic()
        stalled = now - self._last_check > 3 * period_s
        self._last_check = now
        if stalled:
            return None
        with self._lock:
            why = self.watch.check(now)
        if why is not None:
            with self._cmd_lock:
                self._monitor_lost = why  # the running execution stops on it even if a status comes back
            self.latch(why)
        return why

    def heat_on(self) -> bool:
        """A heat-on command is in force (the keep-alive re-sends it)."""
        return self._keepalive is not None

    def _hold_keepalive(self, msg: HeaterCommand | None) -> None:
        """The heat-on command to keep alive, or None (caller holds _cmd_lock). The keep-alive timer
        runs only while there is one: an idle executor does not wake 20 times a second for nothing.
        A timer started here is taken into the executor's next wait (at the latest after its next
        heartbeat, 0.1 s), well inside the hob's 0.5 s dead-man timeout that the command just reset."""
        was_on = self._keepalive is not None
        self._keepalive = msg
        timer = self.keepalive_timer
        if timer is not None and was_on != (msg is not None):
            if msg is None:
                timer.cancel()
            else:
                timer.reset()

    def keepalive(self, min_gap_s: float = 0.0, hung: bool = False) -> None:
        """Re-send the heat-on command in force (steady clock) unless one went out within
        `min_gap_s`, the latch holds or the control tick hangs."""
        with self._cmd_lock:
            msg = self._keepalive
            if msg is None or self._latch is not None or hung:
                return
            if time.monotonic() - self._heater_sent_at < min_gap_s:
                return
            msg.stamp = self.node.get_clock().now().to_msg()
            self._send_heater(msg, energising=True)
            self._heater_sent_at = time.monotonic()

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
        """The guarding monitor's pack; None when unguarded. Raises LimitsUnknown when the monitor
        does not answer, or answers something that is not a pack (never our own limits instead)."""
        client = self.safety_limits_client
        if client is None:
            return None
        if not client.service_is_ready():
            raise LimitsUnknown(f"the safety monitor's {client.srv_name} is not available")
        future = client.call_async(GetSafetyLimits.Request())
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        if not done.wait(LIMITS_TIMEOUT_S) or future.result() is None:
            self.node.get_logger().warning(f"{client.srv_name} did not answer within {LIMITS_TIMEOUT_S:g} s")
            raise LimitsUnknown(f"the safety monitor's {client.srv_name} did not answer within {LIMITS_TIMEOUT_S:g} s")
        try:
            pack = json.loads(future.result().pack_json)
        except ValueError:
            pack = None
        if not isinstance(pack, dict) or not isinstance(pack.get("limits"), list):
            raise LimitsUnknown(f"the safety monitor's {client.srv_name} answered no SafetyLimits pack")
        return pack

    def halt(self, stop_reason: str | None = None) -> None:
        if stop_reason is not None and self.safety_stop is not None and self.safety_stop.service_is_ready():
            self._stop_asked_at = time.monotonic()  # the monitor's halt is on its way (see _monitor_halts_arm)
        try:
            self.latch(stop_reason or "the executor halted")
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
            return self.watch.may_cook(time.monotonic())

    def safety_hold_now(self) -> str | None:
        """Why the monitor does not allow cooking now, or None."""
        with self._lock:
            return self.watch.hold(time.monotonic())

    def start_hold(self) -> str | None:
        """Why no execution may start now: the monitor does not allow it, or a driver this device
        has was never heard (its first step would find no temperature or no arm pose), or the
        guarding monitor's limits service is not there yet (every start asks it)."""
        with self._lock:
            why = self.watch.hold(time.monotonic()) or self._driver_unheard()
        client = self.safety_limits_client
        if why is None and client is not None and not client.service_is_ready():
            why = (f"the safety monitor's {client.srv_name} is not available yet: its limits are asked "
                   "before anything cooks")
        return why

    def _driver_unheard(self) -> str | None:
        if self.has_heater and self._heater_at is None:
            return (f"no heater state on {self.heater_state_topic} yet: the heater driver must be running "
                    "before anything cooks")
        if self.has_arm and self._joints_at is None:
            return (f"no joint states on {self.joint_states_topic} yet: the arm driver must be running "
                    "before anything cooks")
        return None

    def safety_hold(self) -> str | None:
        """Why no execution may start (busy); called by the admission check of every start, so it
        also takes the latch snapshot `admit()` compares with."""
        with self._cmd_lock:
            self._admit_seq = self._latch_seq
        return self.start_hold()

    # ------------------------------------------------------------------ observation / commands

    def observation(self, now_s: float) -> Observation:
        steady = time.monotonic()
        with self._lock:
            if self._first_ros is None:
                self._first_ros = now_s
            heater, joints = self.heater_state, self.joints
            heater_age, heater_ros_age = self._age(self._heater_at, steady, now_s)
            joints_age, joints_ros_age = self._age(self._joints_at, steady, now_s)
            safety_fault = self._monitor_lost or self.watch.missing(steady)
            armed = self.watch.may_cook(steady) and self._monitor_lost is None
        faults: dict = {}
        # stale = silent that long on the steady clock while the ROS clock went on as long too: a
        # stalled /clock (sim time) holds the plant's publishers, not just this tick
        heater_stale = self.has_heater and min(heater_age, heater_ros_age) > self.heater_state_timeout_s
        joints_stale = self.has_arm and min(joints_age, joints_ros_age) > self.joint_state_timeout_s
        if heater_stale:
            heater = None
            faults["heater"] = (f"no heater state on {self.heater_state_topic} for {heater_age:.2f} s "
                                f"(heater_state_timeout_s {self.heater_state_timeout_s:g} s): the heater driver is silent")
        if joints_stale:
            joints = None
            faults["arm"] = (f"no joint states on {self.joint_states_topic} for {joints_age:.2f} s "
                             f"(joint_state_timeout_s {self.joint_state_timeout_s:g} s): the arm driver is silent")
        positions, moving = {}, False
        if joints is not None:
            positions = dict(zip(joints.name, map(float, joints.position)))
            moving = any(abs(v) > MOVING_RAD_S for v in joints.velocity)
        demoted = self.demoted_sensors()
        sensors_ok = {s: s not in demoted for s in (*MEDIUM_SENSORS, PAN_SENSOR)}
        obs = Observation(now_s=now_s, arm_positions=positions, arm_moving=moving,
                          arm_pose=None if moving else self._pose_at(positions),
                          human_present=self.human_present(), safety_armed=armed, safety_fault=safety_fault,
                          sensors_ok=sensors_ok, fault_details=faults,
                          heater_fault=HeaterFault.STALE_STATE if heater_stale else None,
                          arm_fault="stale_state" if joints_stale else None)
        if heater_stale:
            obs.medium_temp_c = obs.pan_temp_c = obs.heater_power_w = None  # no reading, not the last one
        if heater is not None:
            obs.medium_temp_c = heater.medium_temp_c if heater.medium_sensor_ok and math.isfinite(heater.medium_temp_c) else None
            obs.pan_temp_c = heater.pan_surface_temp_c if heater.pan_sensor_ok and math.isfinite(heater.pan_surface_temp_c) else None
            obs.heater_power_w = heater.power_w
            if heater.medium:  # the hob says what its pot holds
                obs.pot_medium, obs.pot_mass_kg = heater.medium, float(heater.medium_mass_kg)
            if heater.fault != HeaterState.FAULT_NONE:
                obs.heater_fault = HEATER_FAULTS.get(heater.fault, HeaterFault.OTHER)
        return obs

    def _pose_at(self, positions: dict) -> str | None:
        for name, pose in self.poses.items():
            if all(j in positions and abs(positions[j] - q) < POSE_TOLERANCE_RAD for j, q in pose.items()):
                return name
        return None

    def _publish_halt(self) -> None:
        """Heat off and the arm halted (caller holds _cmd_lock); always allowed."""
        self.apply(Commands(heater=HeatCommand.off(), arm_halt=True))

    def apply(self, commands: Commands) -> None:
        """Publish the engine's commands; under the stop latch only heat-off and the halt pass."""
        with self._cmd_lock:
            if commands.heater is not None:
                self._heater(commands.heater)
            if commands.arm_halt:
                if self._monitor_halts_arm():
                    self.halts_left_to_monitor += 1
                else:
                    with self._lock:
                        joints = self.joints
                    now_s = self.node.get_clock().now().nanoseconds * 1e-9
                    self._send_trajectory(halt_trajectory_msg(self.arm_hold, joints, now_s, steady_s=time.monotonic()), energising=False)
            elif commands.arm_pose:
                if self._latch is None:
                    self._move_to(commands.arm_pose)
                else:
                    self.dropped += 1

    def _monitor_halts_arm(self) -> bool:
        """While a live safety monitor guards the kitchen, the arm's halt is its alone.

        Two halt planners, each holding the arm where its own (slightly older or newer) joint
        state put it, would move a braked arm back and forth. The executor still stops moving
        it (the latch drops its motion commands), cuts heat, and asks the monitor to stop (the
        Stop service); it plans a halt itself only with no monitor, a silent one, or one whose
        Stop service is not there."""
        if not self.watch.guarded or self.safety_stop is None or not self.safety_stop.service_is_ready():
            return False
        now = time.monotonic()
        with self._lock:
            alive = self.watch.missing(now) is None and not self.watch.lost
            holding = self.safety is not None and self.safety.state in (SafetyStatus.STATE_STOPPED,
                                                                         SafetyStatus.STATE_FAULT)
        # the monitor has the stop (it is stopped), or was just asked for it: never plan a second halt
        return alive and (holding or now - self._stop_asked_at < MONITOR_STOP_WAIT_S)

    def _heater(self, command: HeatCommand) -> None:
        msg = HeaterCommand(stamp=self.node.get_clock().now().to_msg(), source=SOURCE)
        if command.mode is HeatMode.POWER:
            msg.mode, msg.power_w = HeaterCommand.MODE_POWER, command.value
        elif command.mode is HeatMode.SETPOINT:
            msg.mode, msg.setpoint_c = HeaterCommand.MODE_SETPOINT, command.value
        else:
            msg.mode = HeaterCommand.MODE_OFF
        if msg.mode != HeaterCommand.MODE_OFF and self._latch is not None:
            self.dropped += 1
            return
        on = msg.mode == HeaterCommand.MODE_SETPOINT or (msg.mode == HeaterCommand.MODE_POWER and msg.power_w > 0.0)
        self._send_heater(msg, energising=msg.mode != HeaterCommand.MODE_OFF)
        self._heater_sent_at = time.monotonic()
        self._hold_keepalive(msg if on else None)

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
        self._send_trajectory(JointTrajectory(joint_names=names, points=[point]), energising=True)

    def _gate_alive(self) -> bool:
        """The guarding monitor is there to forward (its status is fresh)."""
        with self._lock:
            return self.watch.missing(time.monotonic()) is None and not self.watch.lost

    def _send_heater(self, msg: HeaterCommand, energising: bool) -> None:
        """Heat through the gate only (with the monitor gone it ends there: the hob's dead-man cuts);
        heat-off through the gate while the monitor forwards (in order after the heat it forwarded),
        else straight to the hob."""
        if self.gate_heater_pub is not None and (energising or self._gate_alive()):
            self.gate_heater_pub.publish(msg)
        else:
            self.heater_pub.publish(msg)

    def _send_trajectory(self, msg: JointTrajectory, energising: bool) -> None:
        if msg.points:  # a rest reported before its end (plus a margin for its delivery) is not current
            last = msg.points[-1].time_from_start
            until = self.node.get_clock().now().nanoseconds + last.sec * 1_000_000_000 + last.nanosec + MOTION_MARGIN_NS
            with self._lock:
                self._motion_until_ns = max(self._motion_until_ns, until)
        if self.gate_trajectory_pub is not None and (energising or self._gate_alive()):
            self.gate_trajectory_pub.publish(msg)
        else:
            self.trajectory_pub.publish(msg)


MOTION_MARGIN_NS = 1_000_000_000  # a trajectory may start this much [sim ns] after it was sent


def _stamp_ns(stamp) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec
