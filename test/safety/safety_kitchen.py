"""Bring-up helpers for the safety monitor's node tests: nodes as processes, one probe node.

The probe is an in-process rclpy node spinning in a background thread. It plays the parts the
tests need (the executor driving the arm and heater, the local stop button, a presence sensor)
and records what the kitchen reports, with steady-clock receipt times (time.monotonic, which is
the same clock in every process of the machine).
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque

import rclpy
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from cookwala_msgs.msg import Event, ExecutionStatus, HeaterCommand, HeaterState, Heartbeat, Presence, SafetyStatus
from cookwala_msgs.srv import GetSafetyLimits, ResetSafety, Stop, TightenSafetyLimits
from cookwala_ros.ros import qos
from ros_helpers import close_spinning

HERE = os.path.dirname(os.path.abspath(__file__))
STILL = 0.01  # rad/s, the monitor's standstill_velocity


def ros_args(params: dict) -> list[str]:
    out = ["--ros-args"]
    for name, value in params.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            value = "[" + ",".join(f'"{v}"' if isinstance(v, str) else repr(v) for v in value) + "]"
        out += ["-p", f"{name}:={value}"]
    return out


def start_node(module: str, params: dict | None = None, env: dict | None = None, log=None) -> subprocess.Popen:
    """`module`.main() in its own process (the way its console script runs it). Its output goes to
    a temporary file (`proc.log_path`) unless `log` is given, so a failure can show it (`tails`)."""
    code = f"import sys; from {module} import main; sys.exit(main())"
    if log is None and os.environ.get("COOKWALA_TEST_NODE_LOGS"):  # debugging: keep each node's output
        log = open(os.path.join(os.environ["COOKWALA_TEST_NODE_LOGS"], module.rsplit(".", 1)[-1] + ".log"), "a")
    path = None
    if log is None:
        log = tempfile.NamedTemporaryFile("w", prefix=module.rsplit(".", 1)[-1] + "-", suffix=".log", delete=False)
        path = log.name
    proc = subprocess.Popen([sys.executable, "-c", code, *ros_args(params or {})],
                            env={**os.environ, **(env or {})}, stdout=log, stderr=subprocess.STDOUT)
    proc.log_path = path
    return proc


def tails(procs: dict, lines: int = 15) -> str:
    """Each process's exit code and the last lines of its output: for a failure message."""
    out = []
    for name, proc in procs.items():
        text = ""
        path = getattr(proc, "log_path", None)
        if path and os.path.exists(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                text = "".join(f.readlines()[-lines:])
        out.append(f"--- {name}: exit code {proc.poll()}\n{text}")
    return "\n".join(out)


def start_script(name: str, env: dict | None = None, args: tuple[str, ...] = ()) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, os.path.join(HERE, name), *args], env={**os.environ, **(env or {})},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_process(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def stop_processes(procs) -> None:
    """SIGINT to all first, then wait: the nodes shut down in parallel."""
    procs = list(procs)
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    for proc in procs:
        stop_process(proc)


class Probe:
    """Owns its own rclpy context, so it never clashes with other test modules' rclpy.init()."""

    def __init__(self, name: str = "safety_probe"):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        n = self.node
        self.lock = threading.Lock()
        self.joints: deque = deque(maxlen=2000)  # (t, names, positions, velocities)
        self.heater: deque = deque(maxlen=2000)  # (t, HeaterState)
        self.statuses: deque = deque(maxlen=500)  # (t, SafetyStatus)
        self.events: deque = deque(maxlen=500)  # (t, Event)
        self.heater_commands: deque = deque(maxlen=2000)  # (t, HeaterCommand)
        self.heartbeats = 0
        self.heartbeat_senders: set[str] = set()
        self.estops: deque = deque(maxlen=100)  # (t, Bool)
        n.create_subscription(Bool, "/cookwala/estop", lambda m: self._rec(self.estops, m), qos.latched())
        n.create_subscription(JointState, "/joint_states", lambda m: self._rec(self.joints, m), qos.sensor())
        n.create_subscription(HeaterState, "/heater/state", lambda m: self._rec(self.heater, m), qos.sensor())
        n.create_subscription(SafetyStatus, "/cookwala/safety/status", lambda m: self._rec(self.statuses, m), qos.latched())
        n.create_subscription(Event, "/cookwala/events", lambda m: self._rec(self.events, m), qos.events())
        n.create_subscription(HeaterCommand, "/heater/command", self._on_heater_command, qos.command())
        n.create_subscription(Heartbeat, "/cookwala/heartbeat", self._on_heartbeat, qos.heartbeat(0.3))
        self.traj_pub = n.create_publisher(JointTrajectory, "/arm_controller/joint_trajectory", qos.command())
        self.heat_pub = n.create_publisher(HeaterCommand, "/heater/command", qos.command())
        self.estop_pub = n.create_publisher(Bool, "/cookwala/estop", qos.latched())
        self.presence_pub = n.create_publisher(Presence, "/cookwala/presence", qos.sensor())
        self.exec_pub = n.create_publisher(ExecutionStatus, "/cookwala/status", qos.latched())
        self.stop_client = n.create_client(Stop, "/safety_monitor/stop")
        self.reset_client = n.create_client(ResetSafety, "/safety_monitor/reset")
        self.get_client = n.create_client(GetSafetyLimits, "/safety_monitor/get_safety_limits")
        self.tighten_client = n.create_client(TightenSafetyLimits, "/safety_monitor/tighten_safety_limits")
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(n)
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()
        # heater_sim's dead-man cuts a hob without fresh commands: as the executor does, the probe
        # re-sends its power every 0.1 s until it turns the heater off or the monitor does
        self._heat_w: float | None = None
        self._closing = threading.Event()
        self._keep_alive = threading.Thread(target=self._keep_heat, daemon=True)
        self._keep_alive.start()

    def _spin(self):
        try:
            self.executor.spin()
        except Exception:
            pass

    def _rec(self, log, msg):
        with self.lock:
            log.append((time.monotonic(), msg))

    def _on_heater_command(self, msg):
        self._rec(self.heater_commands, msg)
        if msg.mode == HeaterCommand.MODE_OFF and msg.source != "executor":
            self._heat_w = None  # the monitor's halt: an executor stops heating

    def _keep_heat(self):
        while not self._closing.wait(0.1):
            power_w = self._heat_w
            if power_w is not None:
                try:
                    self.heat_pub.publish(HeaterCommand(mode=HeaterCommand.MODE_POWER, power_w=power_w,
                                                        source="executor"))
                except Exception:  # noqa: BLE001 - closing
                    return

    def _on_heartbeat(self, msg):
        self.heartbeats += 1
        self.heartbeat_senders.add(msg.node_name)

    def close(self):
        self._closing.set()
        self._keep_alive.join(timeout=5.0)
        close_spinning(self.executor, self.node, self.context, self.thread)

    # -- waiting --------------------------------------------------------------------------
    @staticmethod
    def wait_for(predicate, timeout: float, what):
        """`what` names what was awaited; a callable is asked at the timeout (the state then)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            value = predicate()
            if value:
                return value
            time.sleep(0.01)
        raise AssertionError(f"timed out after {timeout:g} s waiting for {what() if callable(what) else what}")

    def status(self) -> SafetyStatus | None:
        with self.lock:
            return self.statuses[-1][1] if self.statuses else None

    def wait_state(self, label: str, timeout: float = 5.0) -> SafetyStatus:
        return self.wait_for(lambda: (s := self.status()) is not None and s.state_label == label and s, timeout,
                             lambda: f"safety state {label} (last: {self._describe(self.status())})")

    @staticmethod
    def _describe(status: SafetyStatus | None) -> str:
        if status is None:
            return "none heard"
        return status.state_label + (f" after {status.last_trigger}: {status.last_trigger_detail}" if status.last_trigger else "")

    def call(self, client, request, timeout: float = 10.0):
        if not client.wait_for_service(timeout_sec=timeout):
            raise AssertionError(f"service {client.srv_name} not available")
        future = client.call_async(request)
        self.wait_for(future.done, timeout, f"reply from {client.srv_name}")
        return future.result()

    def last_joints(self):
        with self.lock:
            return self.joints[-1] if self.joints else None

    def last_heater(self):
        with self.lock:
            return self.heater[-1][1] if self.heater else None

    def first_after(self, log, t0: float, predicate):
        """Receipt time of the first message after t0 that satisfies predicate, or None."""
        with self.lock:
            for t, msg in log:
                if t >= t0 and predicate(msg):
                    return t
        return None

    # -- acting ---------------------------------------------------------------------------
    def move_joint(self, joint: str, target: float, seconds: float = 0.5):
        t, msg = self.last_joints()
        positions = list(msg.position)
        positions[list(msg.name).index(joint)] = target
        point = JointTrajectoryPoint(positions=positions)
        point.time_from_start.sec, point.time_from_start.nanosec = int(seconds), int((seconds % 1) * 1e9)
        self.traj_pub.publish(JointTrajectory(joint_names=list(msg.name), points=[point]))

    def heat(self, power_w: float):
        self._heat_w = float(power_w)
        self.heat_pub.publish(HeaterCommand(mode=HeaterCommand.MODE_POWER, power_w=float(power_w), source="executor"))

    def heater_off(self):
        self._heat_w = None
        self.heat_pub.publish(HeaterCommand(mode=HeaterCommand.MODE_OFF, source="executor"))

    def estop(self, pressed: bool):
        self.estop_pub.publish(Bool(data=pressed))

    def presence(self, present: bool):
        self.presence_pub.publish(Presence(person_present=present, reachable_within_s=0.0 if present else math.inf,
                                           source="test"))

    def execution(self, state: str, op: str = ""):
        self.exec_pub.publish(ExecutionStatus(id="exec-test", state=state, op=op))


def max_speed(msg: JointState) -> float:
    return max((abs(v) for v in msg.velocity), default=0.0)


# -- the steps every stop test takes ------------------------------------------------------
def rearm(probe):
    """Clear every input this module sets, then reset locally until armed."""
    probe.estop(False)
    probe.execution("completed")
    probe.presence(True)
    probe.heater_off()
    probe.wait_for(lambda: (j := probe.last_joints()) and max_speed(j[1]) < STILL, 5.0, "arm at rest")
    probe.wait_for(probe.last_heater, 5.0, "a heater state")

    def armed():
        reply = probe.call(probe.reset_client, ResetSafety.Request(requested_by="test"))
        return reply.accepted and reply.state == "armed"

    probe.wait_for(armed, 5.0, "a reset to be accepted")
    probe.wait_state("armed")


def wait_heartbeat_live(probe) -> None:
    """Until the monitor hears the stand-in executor's heartbeat: heat and motion before that are
    rightly a stop (a sender process still starting)."""
    probe.wait_for(lambda: (s := probe.status()) and s.executor_heartbeat == "live", 30.0,
                   lambda: f"the monitor hearing the executor's heartbeat (status: {probe._describe(probe.status())})")


def heat_while_armed(probe, power_w: float = 2000.0) -> None:
    """The hob above 1 kW with the monitor armed. A monitor that stops on its own meanwhile fails
    the test, naming its trigger (issue 22: no re-arm after a spurious stop)."""
    wait_heartbeat_live(probe)
    end = time.monotonic() + 5.0
    while not ((h := probe.last_heater()) and h.power_w > 1000.0):
        status = probe.status()
        assert status.state_label == "armed", f"the monitor stopped on its own: {probe._describe(status)}"
        assert time.monotonic() < end, f"no heat within 5 s (monitor {probe._describe(status)}, hob {h})"
        probe.heat(power_w)
        time.sleep(0.05)
    status = probe.status()
    assert status.state_label == "armed", f"the monitor stopped on its own: {probe._describe(status)}"


def drive(probe, direction: int):
    """Armed, with the arm sweeping its base joint at full speed and the heater at full power.

    It starts once the monitor hears the stand-in executor's heartbeat: heat and motion before that
    are rightly a stop (a sender process still starting). A monitor that stops on its own fails the
    test, naming its trigger (issue 22: no re-arm after a spurious stop)."""
    wait_heartbeat_live(probe)
    probe.heat(2000.0)
    probe.move_joint("shoulder_pan_joint", 2.5 * direction, seconds=0.5)
    end = time.monotonic() + 5.0
    while time.monotonic() < end:
        status = probe.status()
        assert status.state_label == "armed", f"the monitor stopped on its own: {probe._describe(status)}"
        if max_speed(probe.last_joints()[1]) > 1.5 and probe.last_heater().power_w > 1000.0:
            return
        time.sleep(0.01)
    raise AssertionError(f"the arm not at full speed with full heat within 5 s (monitor {probe._describe(probe.status())})")


def check_stop(probe, t_trigger: float, trigger: str, extra_s: float = 0.0, fault_ok: bool = False):
    """Stopped by `trigger`; both latencies in time, measured by the monitor and by the probe.

    `fault_ok`: the device under test may misbehave after the stop (a hung heater that resumes
    and runs the heat commands queued while it hung after reporting 0 W); the monitor then
    rightly says fault, which holds the kitchen as firmly as stopped."""
    status = probe.wait_for(
        lambda: (s := probe.status()) and s.last_trigger == trigger and not math.isnan(s.last_heat_off_latency_s)
        and not math.isnan(s.last_standstill_latency_s) and s, 3.0, f"a verified stop by {trigger}")
    allowed = ("stopped", "fault") if fault_ok else ("stopped",)
    assert status.state_label in allowed, status.last_trigger_detail
    # the standard's figures; how soon the halt is sent is a benchmark's (benchmarks/stop_latency.py)
    assert 0.0 <= status.last_halt_command_latency_s <= status.last_standstill_latency_s
    assert status.last_standstill_latency_s < 0.5
    assert status.last_heat_off_latency_s < 1.0
    still_at = probe.first_after(probe.joints, t_trigger, lambda m: max_speed(m) < STILL)
    off_at = probe.first_after(probe.heater, t_trigger, lambda m: m.power_w <= 1.0)
    assert still_at is not None and still_at - t_trigger < 0.5 + extra_s
    assert off_at is not None and off_at - t_trigger < 1.0 + extra_s
    return status
