"""The simulated kitchen and the executor as processes, and a client node for node tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.action import ActionClient
from sensor_msgs.msg import JointState

from cookwala_msgs.action import ExecuteRecipe
from cookwala_msgs.msg import Event, ExecutionStatus, HeaterState
from cookwala_msgs.srv import GetExecution, GetLog, Resume
from cookwala_ros.ros import qos
from cookwala_ros.ros.convert import event_from_msg
from cookwala_ros.ros.readiness import executor_readiness
from ros_helpers import NodeLogs, stop_processes  # noqa: F401, E402 - one copy, used by the executor tests through here


def ros_args(params: dict) -> list[str]:
    out = ["--ros-args"]
    for name, value in params.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        out += ["-p", f"{name}:={value}"]
    return out


def start_node(module: str, params: dict | None = None, capture: bool = False) -> subprocess.Popen:
    """`module`.main() in its own process, as its console script runs it."""
    code = f"import sys; from {module} import main; sys.exit(main())"
    argv = [sys.executable, "-c", code, *ros_args(params or {})]
    if capture:
        return subprocess.Popen(argv, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return NodeLogs.open(module.rsplit(".", 1)[-1], lambda out: subprocess.Popen(
        argv, env=dict(os.environ), stdout=out, stderr=subprocess.STDOUT))


def start_kitchen(real_time_factor: float, data_dir=None, clock: str = "rtf") -> list[subprocess.Popen]:
    """Clock, arm and hob; with the executor's `data_dir`, also pot_sim, which fills the pot from
    the recipes there (without it the pot keeps heater_sim's 1 kg of water). `clock` lockstep: the
    clock waits for the sims and the executor each step (real_time_factor is then a ceiling)."""
    sim = {"use_sim_time": True}
    stepped = {"clock_mode": clock}
    procs = [
        start_node("cookwala_ros.ros.sim_clock_node", {"real_time_factor": real_time_factor, **stepped}),
        start_node("cookwala_ros.ros.arm_sim_node", {**sim, **stepped, "publish_rate_hz": 50.0}),
        start_node("cookwala_ros.ros.heater_sim_node", {**sim, **stepped}),
    ]
    if data_dir is not None:
        procs.append(start_node("cookwala_ros.ros.pot_sim_node", {**sim, "data_dir": str(data_dir)}))
    return procs


def start_executor(data_dir, **params) -> subprocess.Popen:
    values = {"use_sim_time": True, "data_dir": str(data_dir), "http_port": 0, "presence_default": True,
              "tick_hz": 5.0, "safety_monitor_node": "none",  # no monitor here
              "heater_state_timeout_s": 1.0, "joint_state_timeout_s": 1.0}  # the kitchen scene's margins (loaded hosts)
    values.update(params)
    return start_node("cookwala_ros.ros.executor_node", values)


class Client:
    """An in-process client of the executor: action, services, and the event/status topics."""

    def __init__(self, ros) -> None:
        self.ros = ros
        self.node = ros.node("executor_test_client")
        self.action = ActionClient(self.node, ExecuteRecipe, "/executor/execute_recipe",  # bursts of goals too
                                   **{f"{kind}_service_qos_profile": qos.action_goals()
                                      for kind in ("goal", "result", "cancel")})
        self.get_execution = self.node.create_client(GetExecution, "/executor/get_execution")
        self.get_log = self.node.create_client(GetLog, "/executor/get_log")
        self.resume_client = self.node.create_client(Resume, "/executor/resume")
        self.events: list[dict] = []
        self.statuses: list[ExecutionStatus] = []
        self.feedback: list = []
        self._lock = threading.Lock()
        self.node.create_subscription(Event, "/cookwala/events", self._on_event, qos.events(1000))
        self.node.create_subscription(ExecutionStatus, "/cookwala/status", self.statuses.append, qos.latched())
        self.readiness: tuple[bool, str] | None = None  # the executor's own word (ros/readiness.py)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, qos.sensor())

    def _on_event(self, msg: Event) -> None:
        with self._lock:
            self.events.append(event_from_msg(msg))

    def _on_diagnostics(self, msg) -> None:
        said = executor_readiness(msg)
        if said is not None:
            self.readiness = said

    def wait_ready(self, timeout: float = 45.0, to_cook: bool = False) -> bool:
        """Discovered, and answering: a first request is re-sent until answered, then a short pause
        lets the action's endpoints finish matching (discovery is not symmetric in time). `to_cook`:
        and the executor says it would start a cook (it hears its drivers and its monitor)."""
        ready = (self.action.wait_for_server(timeout_sec=timeout)
                 and self.get_execution.wait_for_service(timeout_sec=timeout)
                 and self.resume_client.wait_for_service(timeout_sec=timeout))
        if ready:
            self.call(self.get_execution, GetExecution.Request(execution_id="exec-probe"), timeout=timeout)
            time.sleep(1.0)
        if ready and to_cook:
            ready = self.ros.wait_for(lambda: self.readiness is not None and self.readiness[0], timeout=timeout)
            assert ready, f"the executor would not cook: {self.readiness[1] if self.readiness else 'no diagnostics from it'}"
        return ready

    def call(self, client, request, timeout: float = 20.0, attempt_s: float = 2.0):
        """Call, re-sending every `attempt_s` (a restarted server may miss requests sent while the
        dead one was still in the discovery cache) until answered or `timeout` passes."""
        deadline = time.monotonic() + timeout
        while True:
            future = client.call_async(request)
            if self.ros.wait_for(future.done, timeout=min(attempt_s, max(0.1, deadline - time.monotonic()))):
                return future.result()
            client.remove_pending_request(future)
            assert time.monotonic() < deadline, f"no answer from {client.srv_name}"

    def send(self, goal: ExecuteRecipe.Goal, timeout: float = 20.0):
        future = self.action.send_goal_async(goal, feedback_callback=lambda m: self.feedback.append(m.feedback))
        assert self.ros.wait_for(future.done, timeout=timeout), "the goal was not answered"
        return future.result()

    def status(self, execution_id: str) -> dict | None:
        answer = self.call(self.get_execution, GetExecution.Request(execution_id=execution_id))
        return json.loads(answer.status.status_json) if answer.found else None

    def log(self, execution_id: str) -> dict | None:
        answer = self.call(self.get_log, GetLog.Request(execution_id=execution_id))
        return json.loads(answer.log_json) if answer.found else None

    def resume(self, execution_id: str, seq: int):
        return self.call(self.resume_client, Resume.Request(execution_id=execution_id, if_match_seq=seq,
                                                            idempotency_key=""))

    def execution_events(self, execution_id: str) -> list[dict]:
        """De-duplicated by id, in arrival order."""
        seen, out = set(), []
        with self._lock:
            events = list(self.events)
        for event in events:
            if event["id"] in seen:
                continue
            seen.add(event["id"])
            if event.get("subject") == execution_id and event["type"].startswith("cookwala.execution."):
                out.append(event)
        return out


def goal_for(request: dict) -> ExecuteRecipe.Goal:
    return ExecuteRecipe.Goal(recipe_ref=request["recipe"], recipe_hash=request["recipeHash"],
                              servings=float(request.get("servings", 0.0)), idempotency_key=request["idempotencyKey"],
                              request_json=json.dumps(request))


def wait_exit(proc: subprocess.Popen, timeout: float = 30.0) -> tuple[int, str]:
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return proc.returncode, out or ""


def monotonic_deadline(seconds: float) -> float:
    return time.monotonic() + seconds


class StandInDrivers:
    """The hob and the arm saying they are there (room temperature, 0 W, standing still) at 10 Hz,
    from the test's process: an executor admits a cook only once it has heard its drivers. For
    tests of what it refuses or accepts; nothing here follows a command."""

    def __init__(self, ros, heater_state: str = "/heater/state", joint_states: str = "/joint_states"):
        node = ros.node("stand_in_drivers")
        self._heater = node.create_publisher(HeaterState, heater_state, qos.sensor())
        self._joints = node.create_publisher(JointState, joint_states, qos.sensor())
        node.create_timer(0.1, self._tick)

    def _tick(self) -> None:
        self._heater.publish(HeaterState(medium_temp_c=20.0, pan_surface_temp_c=20.0, medium_sensor_ok=True,
                                         pan_sensor_ok=True))
        self._joints.publish(JointState(name=["stand_in_joint"], position=[0.0], velocity=[0.0]))
