"""Demo driver for the simulated kitchen: tours the arm's named poses, then simmers 1 L of water.

Talks only through the standard controller topics (JointTrajectory / JointState, HeaterCommand /
HeaterState) on ROS time, so it runs unchanged against the sim at any real-time factor. Until
the executor exists this is what `cookwala-ros demo` shows. Stand-alone, against a running
scene: `python -m cookwala_ros.ros.sim_demo [NAMESPACE]` (after `cookwala-ros up sim_kitchen`); the
topics are the robot's relative names, so `DemoSettings.namespace` drives a robot under /<ns>/.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from typing import Callable

import rclpy
import rclpy.executors
from builtin_interfaces.msg import Duration as DurationMsg
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from cookwala_msgs.msg import HeaterCommand, HeaterState
from cookwala_ros.ros import names, qos
from cookwala_ros.robot.description import default_arm, load_poses

TRAJECTORY_TOPIC = names.ARM_TRAJECTORY  # relative: in the driven robot's namespace
JOINT_STATES_TOPIC = names.JOINT_STATES
HEATER_COMMAND_TOPIC = names.HEATER_COMMAND
HEATER_STATE_TOPIC = names.HEATER_STATE
DEFAULT_TOUR = ("home", "above_hob", "stir", "pour", "dispense", "serve", "home")
WATER_SPECIFIC_HEAT = 4186.0  # [J/(kg K)]
HEATER_KEEP_ALIVE_S = 0.1  # a heater command in force is re-sent this often [s, steady clock]


class DemoError(RuntimeError):
    """The scene did not come up or did not do what the demo asked within its time limit."""


@dataclasses.dataclass
class DemoSettings:
    tour: tuple[str, ...] = DEFAULT_TOUR
    speed_fraction: float = 0.5  # of each joint's velocity limit
    pose_tolerance_rad: float = 0.01
    target_c: float = 90.0
    band_c: tuple[float, float] = (85.0, 96.0)  # cw.op.simmer, water
    hold_s: float = 120.0  # simulated seconds held at a simmer
    max_power_w: float = 2000.0
    kp_w_per_k: float = 400.0
    ki_w_per_ks: float = 2.0
    heat_timeout_s: float = 1200.0  # simulated seconds to reach the simmer
    startup_timeout_s: float = 30.0  # wall seconds for the scene's topics to appear
    wall_timeout_s: float = 90.0  # wall seconds for any one phase
    progress_every_s: float = 30.0  # simulated seconds between progress lines
    control_period_s: float = 0.5  # simulated seconds between heater commands
    namespace: str = ""  # the robot's ROS namespace ("" = the root)


@dataclasses.dataclass
class DemoResult:
    samples: list[tuple[float, float, float]] = dataclasses.field(default_factory=list)  # (sim s, °C, W)
    poses: list[tuple[str, float, float]] = dataclasses.field(default_factory=list)  # (name, sim s, max error rad)
    heat_start_s: float = math.nan
    simmer_reached_s: float = math.nan
    hold_end_s: float = math.nan
    hold_min_c: float = math.nan
    hold_max_c: float = math.nan
    startup_wall_s: float = math.nan  # wall seconds until the scene's topics were up
    wall_s: float = math.nan  # wall seconds from then to the end
    sim_s: float = math.nan  # sim seconds over the same span


class SimmerController:
    """PI power control towards a medium temperature, safe against late updates.

    The integral acts only near the target (no wind-up during the long heat-up). The hob keeps
    the last power until the next command, and on a loaded machine at a high real-time factor
    the next command may come tens of simulated seconds late; so power is also capped so that
    even an update three times as late as the worst seen so far would not carry the medium past
    `ceiling_c` (all electrical power assumed to reach the water and pan).
    """

    def __init__(self, target_c: float, ceiling_c: float, max_power_w: float, kp: float, ki: float,
                 window_k: float = 5.0, pan_heat_capacity_j_per_k: float = 500.0):
        self.target_c, self.ceiling_c, self.max_power_w = target_c, ceiling_c, max_power_w
        self.kp, self.ki, self.window_k = kp, ki, window_k
        self.pan_heat_capacity = pan_heat_capacity_j_per_k
        self.integral_w = 0.0
        self.worst_dt_s = 1.0

    def power_cap_w(self, temp_c: float, medium_mass_kg: float) -> float:
        late_s = 3.0 * self.worst_dt_s
        heat_capacity = WATER_SPECIFIC_HEAT * medium_mass_kg + self.pan_heat_capacity
        return max(0.0, (self.ceiling_c - temp_c) * heat_capacity / late_s)

    def update(self, temp_c: float, dt_s: float, medium_mass_kg: float = 1.0) -> float:
        if not math.isfinite(temp_c):
            return 0.0  # no reading, no heat
        self.worst_dt_s = max(self.worst_dt_s, dt_s)
        error = self.target_c - temp_c
        if abs(error) < self.window_k and dt_s > 0:
            self.integral_w = min(self.max_power_w, max(0.0, self.integral_w + self.ki * error * dt_s))
        power = min(self.max_power_w, max(0.0, self.kp * error + self.integral_w))
        return min(power, self.power_cap_w(temp_c, medium_mass_kg))


class SimDemoDriver(Node):
    """Publishes commands and records what the sim reports; the sequence runs in run_demo()."""

    def __init__(self, **kwargs) -> None:
        super().__init__("cookwala_sim_demo", **kwargs)
        self.joint_state: JointState | None = None
        self.heater_state: HeaterState | None = None
        self.on_heater_state: Callable[[HeaterState], None] | None = None
        self.trajectory_pub = self.create_publisher(JointTrajectory, TRAJECTORY_TOPIC, qos.command())
        self.heater_pub = self.create_publisher(HeaterCommand, HEATER_COMMAND_TOPIC, qos.command())
        self.create_subscription(JointState, JOINT_STATES_TOPIC, self._joint_state, qos.sensor())
        self.create_subscription(HeaterState, HEATER_STATE_TOPIC, self._heater_state, qos.sensor())
        # the hob's dead-man cuts it without fresh commands: re-send the one in force on the steady clock
        self._heater_command: HeaterCommand | None = None
        self.create_timer(HEATER_KEEP_ALIVE_S, self._keep_heater_alive, clock=Clock(clock_type=ClockType.STEADY_TIME))

    def _keep_heater_alive(self) -> None:
        command = self._heater_command
        if command is not None and command.mode != HeaterCommand.MODE_OFF:
            command.stamp = self.get_clock().now().to_msg()
            self.heater_pub.publish(command)

    def _joint_state(self, msg: JointState) -> None:
        self.joint_state = msg

    def _heater_state(self, msg: HeaterState) -> None:
        self.heater_state = msg
        if self.on_heater_state is not None:
            self.on_heater_state(msg)

    def sim_now_s(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def joint_positions(self) -> dict[str, float]:
        msg = self.joint_state
        return dict(zip(msg.name, msg.position)) if msg is not None else {}

    def send_trajectory(self, joints: list[str], target: list[float], duration_s: float) -> None:
        msg = JointTrajectory()
        msg.joint_names = list(joints)
        point = JointTrajectoryPoint()
        point.positions = [float(v) for v in target]
        point.velocities = [0.0] * len(target)
        whole = int(duration_s)
        point.time_from_start = DurationMsg(sec=whole, nanosec=int((duration_s - whole) * 1e9))
        msg.points = [point]
        self.trajectory_pub.publish(msg)

    def send_heater(self, mode: int, power_w: float = 0.0) -> None:
        msg = HeaterCommand()
        msg.stamp = self.get_clock().now().to_msg()
        msg.mode = mode
        msg.power_w = float(power_w)
        msg.setpoint_c = 0.0
        msg.source = "operator"
        self._heater_command = msg
        self.heater_pub.publish(msg)


class _Runner:
    def __init__(self, node: SimDemoDriver, executor, settings: DemoSettings,
                 say: Callable[[str], None], abort: Callable[[], str | None]):
        self.node, self.executor, self.settings, self.say, self.abort = node, executor, settings, say, abort
        self.origin_s = 0.0  # sim time when the scene came up; printed times are relative to it

    def rel(self, t: float) -> float:
        return t - self.origin_s

    def wait_until(self, predicate: Callable[[], bool], wall_timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + wall_timeout_s
        while not predicate():
            reason = self.abort()
            if reason:
                raise DemoError(f"{reason} (while waiting for {what})")
            if time.monotonic() > deadline:
                raise DemoError(f"timed out after {wall_timeout_s:.0f} s waiting for {what}")
            self.executor.spin_once(timeout_sec=0.02)

    def wait_for_scene(self) -> None:
        n, s = self.node, self.settings
        self.wait_until(lambda: n.joint_state is not None, s.startup_timeout_s, f"{JOINT_STATES_TOPIC} from the arm")
        self.wait_until(lambda: n.heater_state is not None, s.startup_timeout_s, f"{HEATER_STATE_TOPIC} from the heater")
        self.wait_until(lambda: n.sim_now_s() > 0, s.startup_timeout_s, "simulated time on /clock")
        self.wait_until(lambda: n.trajectory_pub.get_subscription_count() > 0 and n.heater_pub.get_subscription_count() > 0,
                        s.startup_timeout_s, "the arm and heater to subscribe to their command topics")
        settle = time.monotonic() + 0.5  # let both ends of every publisher/subscription match
        self.wait_until(lambda: time.monotonic() > settle, 5.0, "discovery to settle")
        self.origin_s = n.sim_now_s()
        self.say(f"scene up: arm joints {', '.join(n.joint_state.name)}; heater medium "
                 f"{n.heater_state.medium or '?'} {n.heater_state.medium_mass_kg:.2f} kg at "
                 f"{n.heater_state.medium_temp_c:.1f} °C; sim time t=0 from here")

    def tour(self, result: DemoResult) -> None:
        n, s = self.node, self.settings
        arm = default_arm()
        poses = load_poses(arm=arm)
        unknown = [p for p in s.tour if p not in poses]
        if unknown:
            raise DemoError(f"unknown pose {unknown[0]!r} (poses: {', '.join(poses)})")
        joints = list(arm.joint_names)
        limits = dict(zip(joints, arm.max_velocity))
        for name in s.tour:
            target = [poses[name][j] for j in joints]
            current = n.joint_positions()
            missing = [j for j in joints if j not in current]
            if missing:
                raise DemoError(f"{JOINT_STATES_TOPIC} lacks joint {missing[0]!r}")
            duration = max(
                [abs(t - current[j]) / (s.speed_fraction * limits[j]) for j, t in zip(joints, target)] + [0.5]
            )

            def error() -> float:
                now = n.joint_positions()
                return max(abs(now[j] - t) for j, t in zip(joints, target))

            sent = {"wall": time.monotonic(), "sim": n.sim_now_s(), "count": 1}
            progress = {"best": error(), "wall": time.monotonic()}
            n.send_trajectory(joints, target, duration)

            def reached() -> bool:
                err, now = error(), time.monotonic()
                if err <= s.pose_tolerance_rad:
                    return True
                if err < progress["best"] - 1e-3:
                    progress.update(best=err, wall=now)
                elif now - progress["wall"] > 1.0:
                    # A command topic is volatile: a trajectory sent before the arm's subscription
                    # matched ours is lost. No progress for a wall second: send it again.
                    if sent["count"] >= 5:
                        raise DemoError(f"the arm did not respond to {sent['count']} trajectories to pose {name!r}")
                    n.send_trajectory(joints, target, duration)
                    sent.update(wall=now, sim=n.sim_now_s(), count=sent["count"] + 1)
                    progress["wall"] = now
                # both limits: at a high real-time factor 10 s of sim time is a blink of wall time
                if n.sim_now_s() - sent["sim"] > duration + 10.0 and now - sent["wall"] > 5.0:
                    raise DemoError(f"the arm did not reach pose {name!r} within {duration + 10.0:.1f} s of sim time "
                                    f"(max joint error {err:.3f} rad)")
                return False

            self.wait_until(reached, s.wall_timeout_s, f"the arm to reach pose {name!r}")
            result.poses.append((name, n.sim_now_s(), error()))
            self.say(f"arm: pose {name:<10} reached at sim t={self.rel(n.sim_now_s()):7.1f} s "
                     f"(planned {duration:4.1f} s, max joint error {error():.4f} rad)")

    def simmer(self, result: DemoResult) -> None:
        n, s = self.node, self.settings
        controller = SimmerController(s.target_c, s.band_c[1] - 1.0, s.max_power_w, s.kp_w_per_k, s.ki_w_per_ks)
        state = {"phase": "heating", "last_t": None, "next_report": 0.0}
        low, high = s.band_c
        result.heat_start_s = n.sim_now_s()

        def on_state(msg: HeaterState) -> None:
            t = msg.stamp.sec + msg.stamp.nanosec * 1e-9
            temp = msg.medium_temp_c
            result.samples.append((t, temp, msg.power_w))
            if state["phase"] == "done":
                return
            # The hob answers every command with a state at once: act only once per control
            # period of sim time, or command and state would chase each other.
            if state["last_t"] is not None and t - state["last_t"] < s.control_period_s:
                return
            dt = 0.0 if state["last_t"] is None else t - state["last_t"]
            state["last_t"] = t
            if state["phase"] == "heating" and temp >= s.target_c - 1.0:
                state["phase"] = "holding"
                result.simmer_reached_s = t
                result.hold_min_c = result.hold_max_c = temp
                self.say(f"heater: simmer reached: water {temp:.1f} °C at sim t={self.rel(t):.1f} s; "
                         f"holding for {s.hold_s:.0f} s")
            if state["phase"] == "holding":
                result.hold_min_c = min(result.hold_min_c, temp)
                result.hold_max_c = max(result.hold_max_c, temp)
                if t - result.simmer_reached_s >= s.hold_s:
                    state["phase"] = "done"
                    result.hold_end_s = t
                    n.send_heater(HeaterCommand.MODE_OFF)
                    return
            power = controller.update(temp, dt, msg.medium_mass_kg)
            n.send_heater(HeaterCommand.MODE_POWER, power)
            if t >= state["next_report"]:
                state["next_report"] = t + s.progress_every_s
                self.say(f"heater: sim t={self.rel(t):7.1f} s  water {temp:6.2f} °C  "
                         f"power {msg.power_w:6.0f} W  ({state['phase']})")

        n.on_heater_state = on_state
        self.say(f"heater: simmering 1 L of water at {s.target_c:.0f} °C (simmer band {low:.0f}-{high:.0f} °C), "
                 f"power control up to {s.max_power_w:.0f} W")

        def heating_done() -> bool:
            if state["phase"] == "heating" and n.sim_now_s() - result.heat_start_s > s.heat_timeout_s:
                raise DemoError(f"the water did not reach {s.target_c - 1:.0f} °C within {s.heat_timeout_s:.0f} s of sim time")
            return state["phase"] == "done"

        self.wait_until(heating_done, s.wall_timeout_s, "the simmer to finish")
        self.wait_until(lambda: n.heater_state is not None and not n.heater_state.on and n.heater_state.power_w == 0.0,
                        s.wall_timeout_s / 3, "the heater to report power off")
        n.on_heater_state = None
        self.say(f"heater: heat cut at sim t={self.rel(result.hold_end_s):.1f} s; held {result.hold_min_c:.2f}-"
                 f"{result.hold_max_c:.2f} °C for {result.hold_end_s - result.simmer_reached_s:.0f} s")
        if not (low <= result.hold_min_c and result.hold_max_c <= high):
            raise DemoError(f"the water left the simmer band {low}-{high} °C "
                            f"({result.hold_min_c:.2f}-{result.hold_max_c:.2f} °C)")


def run_demo(settings: DemoSettings, say: Callable[[str], None] = print,
             abort: Callable[[], str | None] = lambda: None) -> DemoResult:
    """Runs the demo sequence on sim time against a running scene. Raises DemoError."""
    context = rclpy.Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    node = None
    result = DemoResult()
    wall_start = time.monotonic()
    wall_up = None
    try:
        node = SimDemoDriver(context=context, parameter_overrides=[Parameter("use_sim_time", value=True)],
                             namespace=names.namespace_of(settings.namespace) or "/")
        executor = rclpy.executors.SingleThreadedExecutor(context=context)
        executor.add_node(node)
        runner = _Runner(node, executor, settings, say, abort)
        runner.wait_for_scene()
        wall_up = time.monotonic()
        result.startup_wall_s = wall_up - wall_start
        sim_start = node.sim_now_s()
        runner.tour(result)
        runner.simmer(result)
        result.sim_s = node.sim_now_s() - sim_start
        return result
    finally:
        if wall_up is not None:
            result.wall_s = time.monotonic() - wall_up
        if node is not None:
            try:  # never leave the heater on, whatever happened
                node.send_heater(HeaterCommand.MODE_OFF)
            except Exception:  # noqa: BLE001 - best effort during shutdown
                pass
            node.destroy_node()
        rclpy.try_shutdown(context=context)


def main() -> int:
    """Run the demo sequence against an already running sim kitchen."""
    try:
        result = run_demo(DemoSettings(namespace=sys.argv[1] if len(sys.argv) > 1 else ""))
    except DemoError as exc:
        print(f"sim_demo: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    print(f"sim_demo: done: {len(result.poses)} poses, {result.sim_s:.0f} s of sim time in {result.wall_s:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
