"""An observer of the running kitchen, from outside, for the fault tests of issue 16.

`KitchenWatch` is an rclpy node in its own context, spun in its own thread, that records what
is on the wire with a steady-clock time (time.monotonic): for the heat (commands and the hob's
state) and the arm (trajectories and joint states) the time it was sent (its DDS source
timestamp, so the order on the wire counts, not when this observer got round to it: a
trajectory forwarded just before a stop and received after the hob's 0 W came before the stop);
for the status and the events the time it arrived: every
HeaterCommand and JointTrajectory (with the publishing node, found from the publisher's gid, and
the command's `source` field where it has one), /heater/state, the fastest joint in
/joint_states, the monitor's /cookwala/safety/status and /cookwala/events. It also plays the
kitchen's stop inputs (the e-stop button, the monitor's Stop service, a person leaving, the smoke
detector) and the local reset panel, so a test can fire a stop and judge the trace afterwards.

Topic names: the controller topics come from the project's constants (cookwala_ros.ros.sim_demo);
the project has no table for the cookwala topics yet, so their literals live here and nowhere
else in test/faults.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import math
import threading
import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from trajectory_msgs.msg import JointTrajectory

from cookwala_msgs.msg import Event, HeaterCommand, HeaterState, Presence, SafetyStatus
from cookwala_msgs.srv import ResetSafety, Stop
from cookwala_ros.ros import qos
from cookwala_ros.ros.sim_demo import (HEATER_COMMAND_TOPIC, HEATER_STATE_TOPIC, JOINT_STATES_TOPIC,
                                       TRAJECTORY_TOPIC)
from ros_helpers import sent_at

SAFETY_STATUS_TOPIC = "/cookwala/safety/status"
EVENTS_TOPIC = "/cookwala/events"
ESTOP_TOPIC = "/cookwala/estop"
SMOKE_TOPIC = "/cookwala/smoke"
PRESENCE_TOPIC = "/cookwala/presence"
MONITOR_NODE = "/safety_monitor"

HEAT_OFF_W = 1.0  # the monitor's heat_off_power_w: a heater state at or below this is 0 W
STILL_RAD_S = 0.01  # the monitor's standstill_velocity
HOLD_TOLERANCE_RAD = 0.05  # a point at rest this close to where braking brings the arm = halt, not motion
RECENT_S = 0.1  # "where the arm is": its joint states over this long [s, steady clock; a loaded host delays a halt]
MAX_EXTRAPOLATION_S = 0.1  # a halt may extrapolate a joint state this old [s, arm clock] (robot/joint_trajectory)
JUDGE_AFTER_S = 0.2  # a trajectory is judged again this long after it arrived, by the states published before it


def hold_deviation(msg: JointTrajectory, recent: list[tuple[dict[str, float], dict[str, float]]]) -> float:
    """How far [rad] a trajectory's end lies from anywhere the arm could brake to; 0.0 for a halt.

    A halt is an empty trajectory (the stack's halt before issue 16), or joint names plus one
    point at rest (no non-zero velocity) that the arm reaches by braking along its current
    motion: for a joint at q moving at v, constant deceleration to rest over the point's
    time_from_start T ends at q + v*T/2 (q itself when the arm stands still). `recent` are the
    (positions, velocities) of the last few tens of milliseconds, and a halt built from a
    measurement up to MAX_EXTRAPOLATION_S old may extrapolate it by that much: both are allowed
    for. A stale motion command points at a pose instead and lies far from that.
    """
    if not msg.points:
        return 0.0
    if len(msg.points) > 1 or any(abs(v) > 1e-9 for v in msg.points[0].velocities):
        return math.inf
    point = msg.points[0]
    horizon = point.time_from_start.sec + point.time_from_start.nanosec * 1e-9

    def distance(positions: dict[str, float], velocities: dict[str, float]) -> float:
        worst = 0.0
        for name, target in zip(msg.joint_names, point.positions):
            if name not in positions:
                return math.inf
            q, v = positions[name], velocities.get(name, 0.0)
            ends = (q + v * horizon / 2, q + v * (horizon / 2 + MAX_EXTRAPOLATION_S))
            worst = max(worst, max(0.0, min(ends) - target, target - max(ends)))
        return worst

    return min((distance(p, v) for p, v in recent), default=math.inf)


def deviation_when_sent(msg: JointTrajectory, published: list, sent: float) -> float | None:
    """hold_deviation against the arm's states published in the RECENT_S before `sent` (both on
    the senders' clocks, DDS source times), or None when none of them is at hand."""
    before = [state for at, state in published if sent - RECENT_S <= at <= sent]
    return hold_deviation(msg, before) if before else None


@dataclasses.dataclass(frozen=True)
class HeatCmd:
    t: float
    mode: int
    power_w: float
    setpoint_c: float
    source: str  # the message's own `source` field
    node: str  # the publishing node, from the graph

    @property
    def energising(self) -> bool:
        """Asks for heat: power above 0 W, or a setpoint to hold."""
        if self.mode == HeaterCommand.MODE_POWER:
            return self.power_w > 0.0
        return self.mode == HeaterCommand.MODE_SETPOINT

    def describe(self) -> str:
        what = {0: "off", 1: f"{self.power_w:.0f} W", 2: f"setpoint {self.setpoint_c:.0f} degC"}.get(self.mode, "?")
        return f"HeaterCommand {what} from {self.node} (source={self.source or '-'})"


@dataclasses.dataclass(frozen=True)
class TrajCmd:
    t: float
    points: int
    deviation_rad: float  # 0 for a halt
    node: str
    horizon_s: float = 0.0  # time_from_start of the last point [s, arm clock]

    @property
    def is_halt(self) -> bool:
        return self.deviation_rad <= HOLD_TOLERANCE_RAD

    def describe(self) -> str:
        kind = "halt" if self.is_halt else f"motion ({self.deviation_rad:.2f} rad away)"
        return f"JointTrajectory {kind}, {self.points} point(s) over {self.horizon_s:.2f} s, from {self.node}"


@dataclasses.dataclass(frozen=True)
class Sample:
    """One reading: heater power [W] or fastest joint [rad/s]."""
    t: float
    value: float


@dataclasses.dataclass(frozen=True)
class SafetySample:
    t: float
    label: str
    last_trigger: str
    active_triggers: tuple[str, ...]
    heat_off_latency_s: float
    standstill_latency_s: float


class KitchenWatch:
    """Records the kitchen's wire traffic on the steady clock and plays its stop inputs."""

    def __init__(self, name: str = "kitchen_watch", monitor: str = MONITOR_NODE):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = node = rclpy.create_node(name, context=self.context)
        self._lock = threading.Lock()
        self.heat_cmds: list[HeatCmd] = []
        self.trajectories: list[TrajCmd] = []
        self.heater: list[Sample] = []
        self.joints: list[Sample] = []
        self.safety: list[SafetySample] = []
        self.events: list[tuple[float, str, dict]] = []
        self._recent: collections.deque = collections.deque(maxlen=200)  # (t, (positions, velocities) by joint name)
        # the arm's joint states by when the arm published them (DDS source time): a trajectory is
        # judged against the states published before it was sent, which this observer may receive
        # only later (it lags under load, and 5 ms of lag is 0.1 s of motion on a 20x sim)
        self._published: collections.deque = collections.deque(maxlen=20000)
        self._unjudged: list[tuple[JointTrajectory, float, float, TrajCmd]] = []  # (msg, sent, received, record)
        self.status: SafetyStatus | None = None
        self._publishers: dict[tuple[str, bytes], str] = {}
        node.create_subscription(HeaterCommand, HEATER_COMMAND_TOPIC, self._on_heat_cmd, qos.command(100))
        node.create_subscription(JointTrajectory, TRAJECTORY_TOPIC, self._on_trajectory, qos.command(100))
        node.create_subscription(HeaterState, HEATER_STATE_TOPIC, self._on_heater, qos.sensor(50))
        node.create_subscription(JointState, JOINT_STATES_TOPIC, self._on_joints, qos.sensor(50))
        node.create_timer(JUDGE_AFTER_S / 4, self._judge_trajectories)
        node.create_subscription(SafetyStatus, SAFETY_STATUS_TOPIC, self._on_safety, qos.latched())
        node.create_subscription(Event, EVENTS_TOPIC, self._on_event, qos.events())
        self._estop = node.create_publisher(Bool, ESTOP_TOPIC, qos.latched())  # what the monitor subscribes with
        self._smoke = node.create_publisher(Bool, SMOKE_TOPIC, qos.sensor())
        self._presence = node.create_publisher(Presence, PRESENCE_TOPIC, qos.sensor())
        self._stop = node.create_client(Stop, f"{monitor}/stop")
        self._reset = node.create_client(ResetSafety, f"{monitor}/reset")
        self._executor = SingleThreadedExecutor(context=self.context)
        self._executor.add_node(node)
        self._thread = threading.Thread(target=self._spin, name=name, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            self._executor.spin()
        except Exception:  # noqa: BLE001 - the context is shut down under it at close()
            pass

    # -- recording ----------------------------------------------------------------------------
    def _publisher(self, topic: str, info) -> str:
        """The node that published a message, from its gid; "?" when the graph does not know it yet."""
        gid = (info or {}).get("publisher_gid") or {}
        key = (topic, bytes(gid.get("data", b""))[:16])
        name = self._publishers.get(key)
        if name is None:
            for endpoint in self.node.get_publishers_info_by_topic(topic):
                if "_UNKNOWN_" not in endpoint.node_name:  # discovery of the participant not complete yet
                    self._publishers[(topic, bytes(endpoint.endpoint_gid)[:16])] = (
                        f"{endpoint.node_namespace.rstrip('/')}/{endpoint.node_name}")
            name = self._publishers.get(key, "?")
        return name

    def _on_heat_cmd(self, msg: HeaterCommand, info) -> None:
        t = sent_at(info)
        cmd = HeatCmd(t, msg.mode, msg.power_w, msg.setpoint_c, msg.source, self._publisher(HEATER_COMMAND_TOPIC, info))
        with self._lock:
            self.heat_cmds.append(cmd)

    def _on_trajectory(self, msg: JointTrajectory, info) -> None:
        received, sent = time.monotonic(), sent_at(info)
        with self._lock:
            recent = [p for at, p in self._recent if at >= received - RECENT_S] or [p for _, p in list(self._recent)[-1:]]
        deviation = hold_deviation(msg, recent)
        end = msg.points[-1].time_from_start if msg.points else None
        # on the wire when it was sent: a command the gate forwarded just before the stop but that
        # reached this observer after the hob's 0 W is not a command after the stop
        cmd = TrajCmd(sent, len(msg.points), deviation, self._publisher(TRAJECTORY_TOPIC, info),
                      end.sec + end.nanosec * 1e-9 if end else 0.0)
        with self._lock:
            self.trajectories.append(cmd)
            if msg.points:
                self._unjudged.append((msg, sent, received, cmd))

    def _judge_trajectories(self) -> None:
        """JUDGE_AFTER_S after each trajectory arrived: its deviation from the arm's states published
        in the RECENT_S before it was sent (what its sender could have planned from)."""
        now = time.monotonic()
        with self._lock:
            due = [u for u in self._unjudged if now - u[2] >= JUDGE_AFTER_S]
            self._unjudged = [u for u in self._unjudged if now - u[2] < JUDGE_AFTER_S]
            published = list(self._published)
        for msg, sent, _received, judged in due:
            deviation = deviation_when_sent(msg, published, sent)
            if deviation is None:
                continue  # nothing published in that window reached us: the receipt-time verdict stands
            with self._lock:  # found by identity: forget_before() may have shifted the list
                for i, cmd in enumerate(self.trajectories):
                    if cmd is judged:
                        self.trajectories[i] = dataclasses.replace(cmd, deviation_rad=deviation)
                        break

    def _on_heater(self, msg: HeaterState, info) -> None:
        t = sent_at(info)
        with self._lock:
            self.heater.append(Sample(t, float(msg.power_w)))

    def _on_joints(self, msg: JointState, info) -> None:
        received, sent = time.monotonic(), sent_at(info)
        fastest = max((abs(v) for v in msg.velocity), default=0.0)
        state = (dict(zip(msg.name, msg.position)), dict(zip(msg.name, msg.velocity)))
        with self._lock:
            self.joints.append(Sample(sent, fastest))  # when the arm published it, like every record
            self._recent.append((received, state))
            self._published.append((sent, state))

    def _on_safety(self, msg: SafetyStatus) -> None:
        t = time.monotonic()
        sample = SafetySample(t, msg.state_label, msg.last_trigger, tuple(msg.active_triggers),
                              msg.last_heat_off_latency_s, msg.last_standstill_latency_s)
        with self._lock:
            self.status = msg
            self.safety.append(sample)

    def _on_event(self, msg: Event) -> None:
        t = time.monotonic()
        try:
            data = json.loads(msg.data or "{}")
        except ValueError:
            data = {"raw": msg.data}
        with self._lock:
            self.events.append((t, msg.type, data))

    def forget_before(self, t: float) -> None:
        """Drop what arrived before `t` (keeps a long run's memory flat)."""
        with self._lock:
            for name in ("heat_cmds", "trajectories", "heater", "joints", "safety"):
                setattr(self, name, [r for r in getattr(self, name) if r.t >= t])
            self.events = [e for e in self.events if e[0] >= t]

    def snapshot(self) -> dict[str, list]:
        with self._lock:
            return {name: list(getattr(self, name)) for name in
                    ("heat_cmds", "trajectories", "heater", "joints", "safety", "events")}

    # -- waiting --------------------------------------------------------------------------------
    @staticmethod
    def wait_for(predicate, timeout_s: float, what: str, poll_s: float = 0.005):
        deadline = time.monotonic() + timeout_s
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {what} within {timeout_s:g} s")
            time.sleep(poll_s)

    def safety_label(self) -> str:
        status = self.status
        return status.state_label if status is not None else ""

    def wait_safety(self, label: str, timeout_s: float = 10.0) -> SafetyStatus:
        self.wait_for(lambda: self.safety_label() == label, timeout_s, f"safety status {label!r} "
                      f"(last {self.safety_label() or 'none'})")
        return self.status

    def cooking_since(self, t: float, min_power_w: float, min_speed: float) -> bool:
        """Since `t`, the hob reported at least `min_power_w` and a joint moved at `min_speed`."""
        with self._lock:
            hot = any(s.t >= t and s.value >= min_power_w for s in reversed(self.heater[-50:]))
            moving = any(s.t >= t and s.value >= min_speed for s in reversed(self.joints[-50:]))
        return hot and moving

    def describe_since(self, t: float) -> str:
        """What the hob and the arm did since `t` (steady clock): why a cook did not get going."""
        now = time.monotonic()
        with self._lock:
            heater = [s for s in self.heater if s.t >= t]
            joints = [s for s in self.joints if s.t >= t]
            cmds = [c for c in self.heat_cmds if c.t >= t]
            trajs = [c for c in self.trajectories if c.t >= t]
        def span(samples, unit):
            if not samples:
                return "none"
            return (f"{len(samples)}, max {max(s.value for s in samples):.3g} {unit}, last {samples[-1].value:.3g} "
                    f"{unit} {now - samples[-1].t:.2f} s ago")
        return (f"heater states {span(heater, 'W')}; joint states {span(joints, 'rad/s')}; "
                f"{len(cmds)} heater commands (last {cmds[-1].describe() if cmds else '-'}), "
                f"{len(trajs)} trajectories (last {trajs[-1].describe() if trajs else '-'})")

    def moving_now(self, min_speed: float) -> bool:
        with self._lock:
            return bool(self.joints) and self.joints[-1].value >= min_speed

    def hot_now(self, min_power_w: float) -> bool:
        with self._lock:
            return bool(self.heater) and self.heater[-1].value >= min_power_w

    # -- stop inputs and the local panel ----------------------------------------------------------
    def press_estop(self, pressed: bool = True) -> float:
        msg = Bool(data=pressed)
        t0 = time.monotonic()
        self._estop.publish(msg)
        return t0

    def smoke(self, detected: bool = True) -> float:
        msg = Bool(data=detected)
        t0 = time.monotonic()
        self._smoke.publish(msg)
        return t0

    def presence(self, present: bool) -> float:
        msg = Presence(person_present=present, reachable_within_s=0.0 if present else math.inf, source="sim")
        msg.stamp = self.node.get_clock().now().to_msg()
        t0 = time.monotonic()
        self._presence.publish(msg)
        return t0

    def stop_service(self, requested_by: str = "kitchen_watch", reason: str = "fault test") -> float:
        """Call the monitor's Stop service; returns the trigger time (the answer is not awaited)."""
        if not self._stop.wait_for_service(timeout_sec=10.0):
            raise TimeoutError(f"{self._stop.srv_name} is not available")
        request = Stop.Request(requested_by=requested_by, reason=reason)
        t0 = time.monotonic()
        self._stop.call_async(request)
        return t0

    def reset(self, requested_by: str = "kitchen_watch: local panel", timeout_s: float = 5.0) -> ResetSafety.Response:
        if not self._reset.wait_for_service(timeout_sec=10.0):
            raise TimeoutError(f"{self._reset.srv_name} is not available")
        future = self._reset.call_async(ResetSafety.Request(requested_by=requested_by))
        self.wait_for(future.done, timeout_s, f"answer from {self._reset.srv_name}")
        return future.result()

    def wait_matched(self, timeout_s: float = 10.0) -> None:
        """Until the monitor listens to the stop inputs this watch publishes."""
        self.wait_for(lambda: all(p.get_subscription_count() > 0 for p in (self._estop, self._smoke, self._presence)),
                      timeout_s, "safety monitor subscribed to estop, smoke and presence")

    def close(self) -> None:
        self._executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        self._thread.join(2.0)
