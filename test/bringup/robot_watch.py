"""One robot seen from outside, in its namespace: the tests' eyes and hands for a robot.

A plain module with a unique name (not conftest). `RobotWatch` is an rclpy node in the robot's
namespace that publishes presence (kitchen-wide), records on the steady clock the heater commands
and trajectories on the robot's topics (with the node that sent each, from the publisher's gid)
and its heater state and safety status, and calls its safety monitor's services. `cook()` and
`final()` drive the robot's executor over HTTP.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import threading
import time

import httpx
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from std_msgs.msg import Bool
from trajectory_msgs.msg import JointTrajectory

from cookwala_msgs.msg import HeaterCommand, HeaterState, Presence, SafetyStatus
from cookwala_msgs.srv import GetSafetyLimits, ResetSafety, Stop
from cookwala_ros.device import RobotNames
from cookwala_ros.ros import names, qos
from cookwala_ros.ros.readiness import executor_readiness
from ros_helpers import wait_armed_and_ready

REPO = pathlib.Path(__file__).resolve().parents[2]
WATER = REPO / "test" / "e2e" / "data" / "recipes" / "e2e-water-simmer.cookwala.json"
MEDIA = "application/vnd.cookwala+json"
FINAL = ("completed", "stopped", "refused", "failed")


@dataclasses.dataclass(frozen=True)
class Sent:
    t: float  # steady clock
    node: str  # fully qualified name of the publisher ("?" before discovery)
    kind: str  # heat: "off" / "on"; trajectory: number of points
    source: str = ""


class RobotWatch:
    def __init__(self, namespace: str = "", topics: RobotNames | None = None, name: str = "robot_watch",
                 present: bool = True):
        self.topics = topics or RobotNames()
        self.namespace = names.namespace_of(namespace)
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = node = rclpy.create_node(name, namespace=self.namespace or "/", context=self.context)
        self.lock = threading.Lock()
        self.heat: list[Sent] = []
        self.trajectories: list[Sent] = []
        self.power: list[tuple[float, float]] = []
        self.status: SafetyStatus | None = None
        self.present = present
        self._publishers: dict[tuple[str, bytes], str] = {}
        self.heat_topic = node.resolve_topic_name(self.topics.heater_command)
        self.traj_topic = node.resolve_topic_name(self.topics.arm_trajectory)
        node.create_subscription(HeaterCommand, self.topics.heater_command, self._on_heat, qos.command(100))
        node.create_subscription(JointTrajectory, self.topics.arm_trajectory, self._on_traj, qos.command(100))
        node.create_subscription(HeaterState, self.topics.heater_state, self._on_state, qos.sensor(50))
        node.create_subscription(SafetyStatus, names.SAFETY_STATUS, self._on_status, qos.latched())
        self.executor_ready: tuple[bool, str] | None = None  # its executor's own word (ros/readiness.py)
        node.create_subscription(DiagnosticArray, names.DIAGNOSTICS, self._on_diagnostics, qos.sensor())
        self._presence = node.create_publisher(Presence, names.PRESENCE, qos.sensor())
        self.estop = node.create_publisher(Bool, names.ESTOP, qos.latched())
        monitor = names.qualify(self.namespace, names.SAFETY_MONITOR_NODE)
        self._stop = node.create_client(Stop, names.service_of(monitor, names.MONITOR_STOP))
        self._reset = node.create_client(ResetSafety, names.service_of(monitor, names.MONITOR_RESET))
        self._limits = node.create_client(GetSafetyLimits, names.service_of(monitor, names.MONITOR_GET_LIMITS))
        node.create_timer(0.2, self._publish_presence)
        self._executor = SingleThreadedExecutor(context=self.context)
        self._executor.add_node(node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            self._executor.spin()
        except Exception:  # noqa: BLE001 - shut down at close()
            pass

    def _publisher(self, topic: str, info) -> str:
        gid = (info or {}).get("publisher_gid") or {}
        key = (topic, bytes(gid.get("data", b""))[:16])
        if key not in self._publishers:
            for endpoint in self.node.get_publishers_info_by_topic(topic):
                if "_UNKNOWN_" not in endpoint.node_name:
                    self._publishers[(topic, bytes(endpoint.endpoint_gid)[:16])] = (
                        f"{endpoint.node_namespace.rstrip('/')}/{endpoint.node_name}")
        return self._publishers.get(key, "?")

    def _on_heat(self, msg: HeaterCommand, info) -> None:
        sent = Sent(time.monotonic(), self._publisher(self.heat_topic, info),
                    "off" if msg.mode == HeaterCommand.MODE_OFF else "on", msg.source)
        with self.lock:
            self.heat.append(sent)

    def _on_traj(self, msg: JointTrajectory, info) -> None:
        sent = Sent(time.monotonic(), self._publisher(self.traj_topic, info), str(len(msg.points)))
        with self.lock:
            self.trajectories.append(sent)

    def _on_state(self, msg: HeaterState) -> None:
        with self.lock:
            self.power.append((time.monotonic(), float(msg.power_w)))

    def _on_status(self, msg: SafetyStatus) -> None:
        self.status = msg

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        said = executor_readiness(msg, self.namespace or "/")
        if said is not None:
            self.executor_ready = said

    def _publish_presence(self) -> None:
        msg = Presence()
        msg.stamp = self.node.get_clock().now().to_msg()
        msg.person_present = bool(self.present)
        msg.reachable_within_s = 0.0 if self.present else float("inf")
        msg.source = "sim"
        self._presence.publish(msg)

    # -- reading ---------------------------------------------------------------------------
    @property
    def state_label(self) -> str:
        return self.status.state_label if self.status is not None else "none"

    def describe_monitor(self) -> str:
        """The monitor's state with its last stop, for a failing test's message."""
        s = self.status
        if s is None:
            return "none"
        return (f"{s.state_label}; last trigger {s.last_trigger or '-'}: {s.last_trigger_detail or '-'}; "
                f"halt {s.last_halt_command_latency_s:.3f} s, standstill {s.last_standstill_latency_s:.3f} s, "
                f"0 W {s.last_heat_off_latency_s:.3f} s")

    def power_since(self, t: float) -> list[float]:
        with self.lock:
            return [p for at, p in self.power if at >= t]

    def wait(self, predicate, timeout: float, what: str, detail=None) -> None:
        """`detail()`: more to say when it fails (e.g. what became of a team's tasks)."""
        deadline = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < deadline, f"{self.namespace or '/'}: {what}: not within {timeout} s " \
                f"(monitor {self.describe_monitor()})" + (f"; {detail()}" if detail is not None else "")
            time.sleep(0.01)

    def armed_before_cooking(self, timeout: float = 90.0) -> None:
        """Wait for an armed monitor and the executor's word that it would cook (it hears the monitor
        and its drivers on its own); a monitor that stops on its own first fails the test."""
        wait_armed_and_ready(self, lambda: f"{self.namespace or '/'} {self.state_label}: "
                             f"{self.status.last_trigger if self.status else '-'}", timeout)

    # -- the monitor's services ----------------------------------------------------------------
    def _call(self, client, request, timeout: float = 20.0):
        assert client.wait_for_service(timeout_sec=timeout), f"{client.srv_name} not available"
        future = client.call_async(request)
        deadline = time.monotonic() + timeout
        while not future.done():
            assert time.monotonic() < deadline, f"{client.srv_name} did not answer"
            time.sleep(0.02)
        return future.result()

    def stop(self, reason: str = "test"):
        return self._call(self._stop, Stop.Request(requested_by="test", reason=reason))

    def reset(self):
        return self._call(self._reset, ResetSafety.Request(requested_by="test: local panel"))

    def safety_limits(self) -> dict:
        return json.loads(self._call(self._limits, GetSafetyLimits.Request()).pack_json)

    def close(self) -> None:
        self._executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        self._thread.join(2.0)


def cook(base_url: str, recipe_path: pathlib.Path, key: str) -> dict:
    from cookwala_ros.ros.recipe_demo import request_for_recipe

    recipe = json.loads(recipe_path.read_text(encoding="utf-8"))
    r = httpx.post(base_url + "/v1/executions", json=request_for_recipe(recipe, key=key),
                   headers={"content-type": MEDIA, "Idempotency-Key": key}, timeout=20.0)
    assert r.status_code == 202, r.text
    return r.json()


def execution(base_url: str, execution_id: str) -> dict:
    r = httpx.get(f"{base_url}/v1/executions/{execution_id}", timeout=10.0)
    assert r.status_code == 200, r.text
    return r.json()


def final(base_url: str, execution_id: str, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    status = {}
    while time.monotonic() < deadline:
        status = execution(base_url, execution_id)
        if status["state"] in FINAL:
            return status
        time.sleep(0.2)
    raise AssertionError(f"{execution_id} did not end within {timeout} s (last {status.get('state')})")


class UpRobot:
    """`cookwala-ros up kitchen` for one robot, in the background (its nodes die with it)."""

    def __init__(self, tmp: pathlib.Path, namespace: str, *, rtf: float, with_clock: bool,
                 recipes: tuple[pathlib.Path, ...] = (WATER,), extra: tuple[str, ...] = (), clock: str = "rtf"):
        import shutil
        import subprocess
        import sys

        from cookwala_ros.http.server import free_port

        self.namespace = namespace
        self.http_port = free_port()
        library = tmp / "data" / "recipes"
        library.mkdir(parents=True, exist_ok=True)
        for recipe in recipes:
            shutil.copy(recipe, library / recipe.name)
        self.log_path = tmp / "up.log"
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed in close()
        args = ["up", "kitchen", "--rtf", str(rtf), "--arg", f"clock_rate_hz={rtf * 10:g}", "--arg", f"clock={clock}",
                "--arg", f"namespace={namespace}", "--arg", f"with_clock={'true' if with_clock else 'false'}",
                "--arg", f"http_port={self.http_port}", "--arg", f"data_dir={tmp / 'data'}",
                "--arg", f"state_dir={tmp / 'latch'}", *extra]
        self.proc = subprocess.Popen([sys.executable, "-m", "cookwala_ros.cli", *args],
                                     stdout=self._log, stderr=subprocess.STDOUT)
        from ros_helpers import NodeLogs

        NodeLogs.add(f"{namespace}: up kitchen", self.log_path, self.proc)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def node_process(self, name: str):
        """The process of this robot's node `name` under `up` (a psutil.Process)."""
        from ros_helpers import node_process

        return node_process(self.proc.pid, name)

    def wait_http(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if httpx.get(self.base_url + "/v1/capabilities", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert self.proc.poll() is None, f"{self.namespace}: up exited:\n{self.output()[-3000:]}"
            assert time.monotonic() < deadline, f"{self.namespace}: no HTTP within {timeout} s:\n{self.output()[-3000:]}"
            time.sleep(0.2)

    def close(self) -> None:
        import signal
        import subprocess

        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
