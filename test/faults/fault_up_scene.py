"""The kitchen scene under `cookwala-ros up`, and an observer that watches it from outside.

A plain module with a unique name (not conftest). `UpScene` runs the real command as a child
process (its own output file; the scene's nodes die with it, PR_SET_PDEATHSIG). `Watcher` is the
person in the kitchen and the test's eyes: it publishes presence and records, on its own steady
clock, /heater/state, /heater/command, /clock and the safety monitor's status.
"""

from __future__ import annotations

import datetime
import pathlib
import re
import shlex
import signal
import subprocess
import sys
import threading
import time

import httpx
import psutil

from ros_helpers import node_process, sent_at

REPO = pathlib.Path(__file__).resolve().parents[2]
WATER = REPO / "test" / "e2e" / "data" / "recipes" / "e2e-water-simmer.cookwala.json"
MEDIA = "application/vnd.cookwala+json"
CLI = [sys.executable, "-m", "cookwala_ros.cli"]
RESTART_LINE = re.compile(r"node 'executor' exited (?:during start-up )?\(([^)]*)\); the rest of the scene keeps running; "
                          r"restart it with: (cookwala-ros up .*)$", re.M)


def epoch(text: str) -> float:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class UpScene:
    """`cookwala-ros up ARGS...` in the background."""

    def __init__(self, log_path: pathlib.Path, args: list[str]):
        self.log_path = log_path
        self._log = open(log_path, "w")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(CLI + ["up", *args], stdout=self._log, stderr=subprocess.STDOUT)

    @classmethod
    def from_command_line(cls, log_path: pathlib.Path, line: str) -> "UpScene":
        """Run a `cookwala-ros up ...` line as printed by the supervisor."""
        words = shlex.split(line)
        assert words[:2] == ["cookwala-ros", "up"], line
        return cls(log_path, words[2:])

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for_output(self, pattern: str | re.Pattern, timeout: float = 60.0) -> re.Match:
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        while True:
            found = regex.search(self.output())
            if found:
                return found
            assert self.proc.poll() is None, f"up exited ({self.proc.returncode}):\n{self.output()[-4000:]}"
            assert time.monotonic() < deadline, f"no {regex.pattern!r} within {timeout} s:\n{self.output()[-4000:]}"
            time.sleep(0.05)

    def node_process(self, name: str) -> psutil.Process:
        return node_process(self.proc.pid, name)

    def stop(self, timeout: float = 40.0) -> int:
        """Ctrl-C: the supervisor stops the scene in its stop order."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


class Watcher:
    """Presence publisher + steady-clock recorder of the kitchen's heater, clock and monitor."""

    def __init__(self, name: str = "fault_watcher"):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from diagnostic_msgs.msg import DiagnosticArray
        from rosgraph_msgs.msg import Clock

        from cookwala_msgs.msg import HeaterCommand, HeaterState, Presence, SafetyStatus
        from cookwala_msgs.srv import ResetSafety
        from cookwala_ros.ros import qos

        self._rclpy = rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.lock = threading.Lock()
        self.heater: list[tuple[float, float]] = []  # (steady s, power W)
        self.commands: list[tuple[float, float, str, float]] = []  # (steady s, stamp s, source, power W)
        self.last_clock: tuple[float, float] | None = None  # (steady s, sim s)
        self.status = None
        self.statuses: list[tuple[float, str, str]] = []  # (steady s, state_label, last_trigger)
        self.last_medium_c = float("nan")
        self._presence = Presence
        self._pub = self.node.create_publisher(Presence, "/cookwala/presence", qos.sensor())
        self.node.create_subscription(HeaterState, "/heater/state", self._on_heater, qos.sensor())
        self.node.create_subscription(HeaterCommand, "/heater/command", self._on_command, qos.command())
        self.node.create_subscription(Clock, "/clock", self._on_clock, qos.clock())
        self.node.create_subscription(SafetyStatus, "/cookwala/safety/status", self._on_status, qos.latched())
        self.executor_ready: tuple[bool, str] | None = None  # the executor's own word (ros/readiness.py)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, qos.sensor())
        self._reset = self.node.create_client(ResetSafety, "/safety_monitor/reset")
        self._reset_type = ResetSafety
        self.node.create_timer(0.2, self._publish_presence)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except Exception:  # noqa: BLE001 - shut down at close()
            pass

    def _publish_presence(self) -> None:
        msg = self._presence()
        msg.stamp = self.node.get_clock().now().to_msg()
        msg.person_present = True
        msg.reachable_within_s = 0.0
        msg.source = "sim"
        self._pub.publish(msg)

    def _on_heater(self, msg, info) -> None:
        with self.lock:  # when the hob published it (ros_helpers.sent_at): this process's delays do not count
            self.heater.append((sent_at(info), float(msg.power_w)))
            self.last_medium_c = float(msg.medium_temp_c)

    def _on_command(self, msg, info) -> None:
        stamp = msg.stamp.sec + msg.stamp.nanosec * 1e-9
        with self.lock:
            self.commands.append((sent_at(info), stamp, msg.source, float(msg.power_w)))

    def _on_clock(self, msg) -> None:
        self.last_clock = (time.monotonic(), msg.clock.sec + msg.clock.nanosec * 1e-9)

    def _on_diagnostics(self, msg) -> None:
        from cookwala_ros.ros.readiness import executor_readiness

        said = executor_readiness(msg)
        if said is not None:
            self.executor_ready = said

    def _on_status(self, msg) -> None:
        self.status = msg
        self.statuses.append((time.monotonic(), msg.state_label, msg.last_trigger))

    @property
    def power_w(self) -> float:
        with self.lock:
            return self.heater[-1][1] if self.heater else float("nan")

    def heater_since(self, t: float) -> list[tuple[float, float]]:
        with self.lock:
            return [h for h in self.heater if h[0] >= t]

    def wait(self, predicate, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < deadline, f"{what}: not within {timeout} s (monitor {self.describe_status()})"
            time.sleep(0.005)

    def describe_status(self) -> str:
        status = self.status
        if status is None:
            return "none"
        return f"{status.state_label}, last trigger {status.last_trigger!r}: {status.last_trigger_detail}"

    def armed_before_cooking(self, timeout: float = 60.0) -> None:
        """Wait for an armed monitor and the executor's word that it would cook (it hears the monitor
        and its drivers on its own); a monitor that stops on its own first fails the test."""
        from ros_helpers import wait_armed_and_ready

        wait_armed_and_ready(self, self.describe_status, timeout)

    @property
    def state_label(self) -> str:
        return self.status.state_label if self.status is not None else "none"

    def reset_safety(self, timeout: float = 20.0):
        assert self._reset.wait_for_service(timeout_sec=timeout), "/safety_monitor/reset not available"
        future = self._reset.call_async(self._reset_type.Request(requested_by="fault test: local panel"))
        deadline = time.monotonic() + timeout
        while not future.done():
            assert time.monotonic() < deadline, "ResetSafety did not answer"
            time.sleep(0.02)
        return future.result()

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        self._rclpy.try_shutdown(context=self.context)
        self._thread.join(2.0)


def wait_http(base_url: str, timeout: float = 120.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(base_url + "/v1/capabilities", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert proc is None or proc.poll() is None, f"the scene exited ({proc.returncode}) before serving HTTP"
        assert time.monotonic() < deadline, f"{base_url} not serving within {timeout} s"
        time.sleep(0.2)


def start_cook(base_url: str, recipe: dict, key: str) -> dict:
    from cookwala_ros.ros.recipe_demo import request_for_recipe

    r = httpx.post(base_url + "/v1/executions", json=request_for_recipe(recipe, key=key),
                   headers={"content-type": MEDIA, "Idempotency-Key": key}, timeout=10.0)
    assert r.status_code == 202, r.text
    return r.json()


def get(base_url: str, path: str) -> dict:
    r = httpx.get(base_url + path, timeout=10.0)
    assert r.status_code == 200, f"GET {path}: {r.status_code} {r.text}"
    return r.json()
