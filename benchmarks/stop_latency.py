"""Stop latency of the safety monitor on the simulated kitchen, through every stop input.

Brings up arm_sim, heater_sim and safety_monitor as processes, plus a separate observer process
that timestamps (time.monotonic, the machine-wide steady clock) what appears on the wire: the
monitor's halt trajectory, the arm reaching standstill in /joint_states and the heater reporting
0 W in /heater/state. This driver moves the arm at full speed with the heater on, fires one
trigger, notes the trigger time on the same clock, waits for the halt, resets locally, repeats.

Inputs: the monitor's Stop service, the /cookwala/estop topic, a limit breach (a pressure
reading above pressure.max on /cookwala/pressure: it can be repeated hundreds of times, unlike
heating oil past its max, which the node tests cover), executor heartbeat loss (SIGKILL of a
heartbeat process; its trigger -> halt includes the 0.3 s liveliness lease, so it is also
reported from the lease running out, i.e. 0.3 s after the last heartbeat) and an HTTP stop
(POST /v1/executions/{id}/stop to the executor node while it simmers water: the executor
publishes the halt and hands the stop to the monitor, which latches and verifies it).
Conditions: idle; every CPU core busy (one spinning process per core); heavy (16 spinning
processes and 2 that keep allocating and touching 256 MB).

Run from the repository with the project's venv:
    .venv/bin/python benchmarks/stop_latency.py [--repeats 200] [--load none|busy|both|heavy|all] [--nice -10]
`--nice -10` (root) runs the stop chain ahead of everything else on the machine, the way a device
schedules its controllers, safety monitor and stop inputs: this driver (playing the button, the
pressure sensor and the callers of the Stop service and the HTTP API), the executor, the arm and
heater sims, the monitor and the observer. The busy load and the heartbeat sender stay at normal
priority. Prints numbers; asserts nothing. The stop inputs themselves are in stop_inputs.py, the
process helpers and load generators in stop_processes.py.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MOTION_DEADLINE_S, HEAT_DEADLINE_S = 0.5, 1.0
STILL = 0.01  # rad/s, the monitor's default standstill threshold
SLOW_SHARE = 0.05  # heartbeat and HTTP repeats each: a small share of the total

from stop_inputs import GuardedInput, HeartbeatInput, HttpInput, fire  # noqa: E402
from stop_processes import ALLOC_CODE, BUSY_CODE, NORMAL_PREFIX, pct, start, stop, wait_for  # noqa: E402


# -- the observer process -------------------------------------------------------------------
def observe() -> int:
    """Print `<event> <monotonic time>` lines: halt (per halt trajectory), still/moving (per joint
    state), heat_off/heat_on (per heater state)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory

    from cookwala_msgs.msg import HeaterState
    from cookwala_ros.ros import qos

    rclpy.init()
    node = rclpy.create_node("bench_observer")

    def emit(event: str, t: float, detail: str = "") -> None:
        sys.stdout.write(f"{event} {t:.6f} {detail}\n")
        sys.stdout.flush()

    def on_traj(msg):
        t = time.monotonic()
        # the halt is one point at rest (convert.halt_trajectory_msg; no points before any joint
        # state); this benchmark drives the arm with position-only points
        point = msg.points[0] if len(msg.points) == 1 else None
        halt = not msg.points or (point is not None and point.velocities and not any(point.velocities))
        emit("halt" if halt else "trajectory", t)

    def on_joints(msg):  # every sample: the driver looks for the first still one after a trigger
        t = time.monotonic()
        fastest = max((abs(v) for v in msg.velocity), default=0.0)
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        emit("still" if fastest < STILL else "moving", t, f"{fastest:.4f} {stamp:.6f}")

    def on_heater(msg):
        t = time.monotonic()
        emit("heat_off" if msg.power_w <= 1.0 else "heat_on", t, f"{msg.power_w:.1f}")

    node.create_subscription(JointTrajectory, "/arm_controller/joint_trajectory", on_traj, qos.command())
    node.create_subscription(JointState, "/joint_states", on_joints, qos.sensor())
    node.create_subscription(HeaterState, "/heater/state", on_heater, qos.sensor())
    gc.collect()
    gc.freeze()  # no full garbage collection over start-up objects in the middle of a measurement
    emit("ready", time.monotonic())
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        executor.spin()
    except BaseException:
        pass
    return 0


# -- helpers --------------------------------------------------------------------------------
TRACE: list = []  # with --trace FILE: that file, which gets every observed event and every trigger


# -- the driver -----------------------------------------------------------------------------
class Driver:
    def __init__(self, observer: subprocess.Popen):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from sensor_msgs.msg import FluidPressure, JointState
        from std_msgs.msg import Bool
        from trajectory_msgs.msg import JointTrajectory

        from cookwala_msgs.msg import HeaterCommand, Heartbeat, Presence, SafetyStatus
        from cookwala_msgs.srv import ResetSafety, Stop
        from cookwala_ros.ros import qos

        self.m = dict(FluidPressure=FluidPressure, Bool=Bool, JointTrajectory=JointTrajectory,
                      HeaterCommand=HeaterCommand, ResetSafety=ResetSafety, Stop=Stop)
        self.node = n = rclpy.create_node("bench_driver")
        self.events: list[tuple[str, float]] = []
        self.lock = threading.Lock()
        self.joints = None
        self.status = None
        self.heartbeats = 0
        self.last_heartbeat_at = 0.0
        n.create_subscription(Heartbeat, "/cookwala/heartbeat", self._on_heartbeat, qos.heartbeat(0.3))
        n.create_subscription(JointState, "/joint_states", self._on_joints, qos.sensor())
        n.create_subscription(SafetyStatus, "/cookwala/safety/status", self._on_status, qos.latched())
        self.traj = n.create_publisher(JointTrajectory, "/arm_controller/joint_trajectory", qos.command())
        self.heat = n.create_publisher(HeaterCommand, "/heater/command", qos.command())
        self.estop = n.create_publisher(Bool, "/cookwala/estop", qos.latched())
        self.pressure = n.create_publisher(FluidPressure, "/cookwala/pressure", qos.sensor())
        presence = n.create_publisher(Presence, "/cookwala/presence", qos.sensor())  # somebody is in the kitchen
        n.create_timer(0.2, lambda: presence.publish(Presence(person_present=True, reachable_within_s=0.0)))
        # heater_sim's dead-man cuts a hob without fresh commands: like the executor, re-send the
        # power every 0.1 s until this driver or the monitor turns it off
        self.heat_w: float | None = None
        n.create_subscription(HeaterCommand, "/heater/command", self._on_heater_command, qos.command())
        n.create_timer(0.1, self._keep_heat)
        self.stop_client = n.create_client(Stop, "/safety_monitor/stop")
        self.reset_client = n.create_client(ResetSafety, "/safety_monitor/reset")
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(n)
        threading.Thread(target=self._spin, daemon=True).start()
        threading.Thread(target=self._read, args=(observer,), daemon=True).start()
        gc.collect()
        gc.freeze()

    def _spin(self):
        try:
            self.executor.spin()
        except BaseException:
            pass

    def _read(self, observer):
        for line in observer.stdout:
            name, t, *_ = line.split()
            if TRACE:
                TRACE[0].write(line)
            with self.lock:
                self.events.append((name, float(t)))

    def _on_joints(self, msg):
        self.joints = msg

    def _on_heater_command(self, msg):
        if msg.mode == 0 and msg.source != "executor":  # the monitor's halt
            self.heat_w = None

    def _keep_heat(self):
        if self.heat_w is not None:
            self.heat.publish(self.m["HeaterCommand"](mode=1, power_w=self.heat_w, source="executor"))

    def _on_heartbeat(self, msg):
        self.heartbeats += 1
        self.last_heartbeat_at = time.monotonic()

    def _on_status(self, msg):
        self.status = msg

    def first(self, name: str, after: float) -> float | None:
        with self.lock:
            return next((t for n, t in self.events if n == name and t >= after), None)

    def call(self, client, request, timeout=5.0):
        future = client.call_async(request)
        wait_for(future.done, timeout, client.srv_name)
        return future.result()

    def rearm(self):
        with self.lock:
            del self.events[:-50]
        self.estop.publish(self.m["Bool"](data=False))
        self.pressure.publish(self.m["FluidPressure"](fluid_pressure=0.0))
        self.heat_w = None
        self.heat.publish(self.m["HeaterCommand"](mode=0, source="executor"))
        request = self.m["ResetSafety"].Request(requested_by="bench")
        wait_for(lambda: self.call(self.reset_client, request).accepted and self.status.state_label == "armed",
                 10.0, "re-armed")

    def drive(self, direction: int):
        from trajectory_msgs.msg import JointTrajectoryPoint

        msg = self.joints
        positions = list(msg.position)
        positions[list(msg.name).index("shoulder_pan_joint")] = 2.5 * direction
        point = JointTrajectoryPoint(positions=positions)
        point.time_from_start.nanosec = 500_000_000
        self.heat_w = 2000.0
        self.heat.publish(self.m["HeaterCommand"](mode=1, power_w=2000.0, source="executor"))
        self.traj.publish(self.m["JointTrajectory"](joint_names=list(msg.name), points=[point]))
        wait_for(lambda: max(abs(v) for v in self.joints.velocity) > 1.5, 5.0, "arm at speed")
        wait_for(lambda: self.last_of(("heat_on", "heat_off")) == "heat_on", 5.0, "heater on")

    def last_of(self, names) -> str | None:
        with self.lock:
            return next((n for n, _ in reversed(self.events) if n in names), None)


INPUTS = ("service", "estop", "limit", "heartbeat", "http")


def make_plan(repeats: int, inputs: tuple[str, ...]) -> list[tuple[str, int]]:
    """(input, stops): heartbeat and HTTP stops need a process or an execution each, so with
    every input they get a small share; a chosen subset shares the repeats evenly."""
    if set(inputs) != set(INPUTS):
        return [(name, max(1, repeats // len(inputs))) for name in INPUTS if name in inputs]
    n_slow = max(3, int(repeats * SLOW_SHARE))
    per_input = max(1, (repeats - 2 * n_slow) // 3)
    return [("service", per_input), ("estop", per_input), ("limit", repeats - 2 * n_slow - 2 * per_input),
            ("heartbeat", n_slow), ("http", n_slow)]


def run_condition(label: str, repeats: int, load: tuple[int, int], log_dir: str, inputs: tuple[str, ...] = INPUTS) -> dict:
    """`load`: (spinning processes, allocating processes) beside the kitchen."""
    env = dict(os.environ)
    logs = {name: open(os.path.join(log_dir, f"{label}-{name}.log"), "w")
            for name in ("arm", "heater", "monitor", "executor")}
    procs = [
        start("cookwala_ros.ros.arm_sim_node", {}, stdout=logs["arm"], stderr=subprocess.STDOUT),
        start("cookwala_ros.ros.heater_sim_node", {"medium": "water", "medium_mass_kg": 1.0},
              stdout=logs["heater"], stderr=subprocess.STDOUT),
        start("cookwala_ros.ros.safety_monitor_node", {"activation_timeout_s": 30.0},
              stdout=logs["monitor"], stderr=subprocess.STDOUT),
    ]
    observer = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--observer"], env=env,
                                stdout=subprocess.PIPE, text=True, bufsize=1)
    busy = []
    import rclpy
    rclpy.init()
    driver = Driver(observer)
    results: dict[str, list[dict]] = {}
    spurious: list[str] = []
    sources: list = []
    try:
        wait_for(lambda: driver.first("ready", 0.0), 30.0, "observer")
        wait_for(lambda: driver.status is not None and driver.status.state_label == "armed", 60.0, "monitor armed")
        wait_for(lambda: driver.joints is not None, 10.0, "joint states")
        spinners, allocators = load
        busy = [subprocess.Popen([*NORMAL_PREFIX, sys.executable, "-c", code])
                for code, count in ((BUSY_CODE, spinners), (ALLOC_CODE, allocators)) for _ in range(count)]
        if busy:
            time.sleep(1.0)
        plan = make_plan(repeats, inputs)
        direction = 1
        for name, count in plan:
            if name == "heartbeat":
                source = HeartbeatInput(driver)
            elif name == "http":
                source = HttpInput(driver, logs["executor"])
            else:
                source = GuardedInput(driver, name)
            sources.append(source)
            for i in range(count):
                for attempt in range(5):
                    if source is not None:
                        source.prepare()
                    if name != "http":
                        driver.rearm()
                    direction = -direction
                    try:
                        driver.drive(direction)
                        if driver.status.state_label == "armed":
                            break
                    except TimeoutError:
                        pass
                    # the monitor stopped on its own before the trigger (e.g. a late heartbeat under load)
                    spurious.append(driver.status.last_trigger)
                    if source is not None:
                        source.abandon()
                t0 = source.fire() if source is not None else fire(driver, name)
                if TRACE:
                    TRACE[0].write(f"trigger:{name} {t0:.6f}\n")
                sample = collect(driver, t0)
                sample["trigger"] = name
                sample["t0"] = t0
                sample["grace"] = getattr(source, "grace_s", 0.0)  # trigger -> the moment a stop is due
                results.setdefault(name, []).append(sample)
                if source is not None:
                    source.finish()
                print(f"\r  {label}: {name} {i + 1}/{count}   ", end="", file=sys.stderr, flush=True)
            if source is not None:
                source.close()
        print(file=sys.stderr)
        results["_spurious"] = spurious
    finally:
        for source in sources:
            if source is not None:
                source.close()
        for proc in busy:
            proc.kill()
            proc.wait()
        driver.executor.shutdown()
        rclpy.try_shutdown()
        for proc in (observer, *procs):
            stop(proc)
    return results


def collect(driver: Driver, t0: float) -> dict:
    halt = wait_for(lambda: driver.first("halt", t0), 5.0, "halt on the wire")
    still = wait_for(lambda: driver.first("still", t0), 5.0, "standstill")
    off = wait_for(lambda: driver.first("heat_off", t0), 5.0, "heat off")
    status = wait_for(lambda: (s := driver.status) and not math.isnan(s.last_heat_off_latency_s)
                      and not math.isnan(s.last_standstill_latency_s) and s, 5.0, "verified stop")
    return {"halt": halt - t0, "still": still - t0, "off": off - t0, "monitor_halt": status.last_halt_command_latency_s,
            "monitor_still": status.last_standstill_latency_s, "monitor_off": status.last_heat_off_latency_s,
            "state": status.state_label}


def report(label: str, results: dict) -> None:
    print(f"\n== {label} ==  (ms; trigger time on the steady clock of this machine)")
    head = f"{'input':<10}{'n':>5}  {'trigger->halt on wire':>27}  {'trigger->standstill':>27}  {'trigger->heater 0 W':>27}  misses"
    print(head)
    print(f"{'':<15}" + "  ".join(f"{'p50':>8} {'p99':>8} {'max':>8}" for _ in range(3)))
    everything: list[dict] = []
    spurious = results.pop("_spurious", [])
    for name, samples in results.items():
        everything += samples
        cells = []
        for key in ("halt", "still", "off"):
            values = [s[key] * 1000 for s in samples]
            cells.append(f"{pct(values, 50):8.1f} {pct(values, 99):8.1f} {max(values):8.1f}")
        # deadlines count from when the stop was due (for heartbeat loss: the lease running out)
        misses = sum(1 for s in samples if s["still"] - s["grace"] > MOTION_DEADLINE_S
                     or s["off"] - s["grace"] > HEAT_DEADLINE_S
                     or s["monitor_still"] > MOTION_DEADLINE_S or s["monitor_off"] > HEAT_DEADLINE_S)
        print(f"{name:<10}{len(samples):>5}  " + "  ".join(cells) + f"  {misses}")

    def line(what: str, values: list[float]) -> None:
        if values:
            print(f"{what}: p50 {pct(values, 50):.1f} ms, p99 {pct(values, 99):.1f} ms, max {max(values):.1f} ms "
                  f"(n={len(values)})")

    line("the monitor's own inputs (service, estop, limit), trigger->halt on wire",
         [s["halt"] * 1000 for s in everything if s["trigger"] in ("service", "estop", "limit")])
    line("heartbeat loss, lease expiry->halt on wire",
         [(s["halt"] - s["grace"]) * 1000 for s in everything if s["trigger"] == "heartbeat"])
    for key, what in (("monitor_halt", "detection->halt published"), ("monitor_still", "detection->standstill"),
                      ("monitor_off", "detection->heater 0 W")):
        line(f"as measured by the monitor, {what}", [s[key] * 1000 for s in everything])
    faults = sum(1 for s in everything if s["state"] != "stopped")
    if spurious:
        print(f"stops the monitor made on its own while the arm was being set in motion: {len(spurious)} "
              f"({', '.join(sorted(set(spurious)))})")
    print(f"runs in total: {len(everything)}; ended in fault: {faults}")


IDLE, BUSY, HEAVY = ("idle", (0, 0)), ("all cores busy", (os.cpu_count() or 2, 0)), ("heavy", (16, 2))
LOADS = {"none": [IDLE], "busy": [BUSY], "both": [IDLE, BUSY], "heavy": [HEAVY], "all": [IDLE, BUSY, HEAVY]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=200, help="stops per load condition (all inputs together)")
    parser.add_argument("--load", choices=tuple(LOADS), default="both",
                        help="idle (none), every core busy (busy), both (default), 16 spinning + 2 allocating "
                             "processes (heavy), or all three")
    parser.add_argument("--nice", type=int, default=0, metavar="N",
                        help="run the stop chain (this driver, the kitchen's nodes, the observer) at nice N "
                             "(e.g. -10, needs root: a deployment gives its safety path and controllers "
                             "priority over everything else) and the busy load at 0; 0 = all alike")
    parser.add_argument("--inputs", default=",".join(INPUTS),
                        help=f"comma-separated stop inputs to exercise (default: all of {','.join(INPUTS)})")
    parser.add_argument("--samples", metavar="FILE", help="also write every sample as a JSON line to FILE")
    parser.add_argument("--trace", metavar="FILE", help="write every observed event and trigger to FILE "
                        "(`<event> <steady time> [detail]`), to look into a slow stop")
    parser.add_argument("--observer", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.observer:
        return observe()
    inputs = tuple(name.strip() for name in args.inputs.split(",") if name.strip())
    unknown = sorted(set(inputs) - set(INPUTS))
    if unknown or not inputs:
        parser.error(f"--inputs: unknown {', '.join(unknown) or 'nothing chosen'}; choose from {', '.join(INPUTS)}")
    if args.trace:
        TRACE.append(open(args.trace, "w", buffering=1))
    if args.nice:
        try:
            os.nice(args.nice)
        except PermissionError:
            parser.error(f"--nice {args.nice} needs the right to raise priority (root or CAP_SYS_NICE)")
        NORMAL_PREFIX[:] = ["nice", "-n", str(-args.nice)]
    os.environ.setdefault("ROS_DOMAIN_ID", str(40 + os.getpid() % 50))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    from cookwala_ros.bringup.dds_profile import use_default_profile

    use_default_profile(os.environ)  # the DDS profile the scenes run with (the loopback one), for every process
    log_dir = tempfile.mkdtemp(prefix="stop-latency-")
    os.environ.setdefault("ROS_LOG_DIR", log_dir)
    print(f"stop latency: {args.repeats} stops per condition, ROS_DOMAIN_ID {os.environ['ROS_DOMAIN_ID']}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} before start, "
          f"kitchen processes at nice {args.nice}, node logs in {log_dir}")
    for label, load in LOADS[args.load]:
        results = run_condition(label.replace(" ", "-"), args.repeats, load, log_dir, inputs)
        if args.samples:
            with open(args.samples, "a") as out:
                for i, sample in enumerate(s for key, samples in results.items() if key != "_spurious"
                                           for s in samples):
                    out.write(json.dumps({"condition": label, "index": i, **sample}) + "\n")
        report(label, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
