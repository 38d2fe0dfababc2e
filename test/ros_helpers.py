"""In-process ROS 2 node tests: real rclpy nodes spun by a MultiThreadedExecutor in a thread
(ours, cookwala_ros.ros.executors: rclpy 9.1's delays callbacks by up to seconds).

    with RosHarness() as ros:
        arm = ros.add(ArmSimNode(context=ros.context))
        probe = ros.node("probe")
        states = ros.collect(probe, JointState, "/joint_states")
        assert ros.wait_for(lambda: states, timeout=10)

Each harness has its own rclpy Context (no global rclpy.init), so tests cannot leak nodes into
each other. ROS isolation (domain id, localhost discovery, log dir) comes from test/conftest.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import rclpy
from rclpy.context import Context
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile

from cookwala_ros.ros import qos
from cookwala_ros.ros.executors import MultiThreadedExecutor


def wait_for(predicate: Callable[[], Any], timeout: float = 10.0, interval: float = 0.002) -> bool:
    """Poll `predicate` until it is truthy or `timeout` wall seconds pass; returns the outcome."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return bool(predicate())
        time.sleep(interval)


class RosHarness:
    """An rclpy context plus an executor spinning in a background thread."""

    def __init__(self, threads: int = 4):
        self.context = Context()
        rclpy.init(context=self.context)
        self.executor = MultiThreadedExecutor(num_threads=threads, context=self.context)
        self._nodes: list[Node] = []
        self._closing = False
        self.errors: list[str] = []  # callbacks that raised (each also printed to stderr)
        self._thread = threading.Thread(target=self._spin, name="ros-harness", daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        """Spin until close(). The executor re-raises a callback's exception from spin(); one
        (an action server's callback finding its server destroyed by the test) used to end this
        thread silently, and every later test of the module then waited for messages that no
        longer arrived. The error is printed and kept, and the spin goes on."""
        while not self._closing and self.context.ok():
            try:
                self.executor.spin()
            except Exception:  # shutdown races (ExternalShutdownException, destroyed handles) included
                if self._closing or not self.context.ok():
                    return
                import sys
                import traceback

                self.errors.append(traceback.format_exc())
                print(f"ros harness: a callback raised; spinning on:\n{self.errors[-1]}", file=sys.stderr)

    def add(self, node: Node) -> Node:
        """Spin a node created with context=harness.context; it is destroyed on close."""
        self._nodes.append(node)
        self.executor.add_node(node)
        return node

    def node(self, name: str, sim_time: bool = False, **kwargs) -> Node:
        """A plain helper node (publishers/subscriptions for the test) on this harness."""
        overrides = list(kwargs.pop("parameter_overrides", []))
        if sim_time:
            overrides.append(Parameter("use_sim_time", value=True))
        return self.add(Node(name, context=self.context, parameter_overrides=overrides, **kwargs))

    def collect(self, node: Node, msg_type, topic: str, profile: QoSProfile | None = None) -> list:
        """Subscribe and append every message to the returned list (thread-safe append)."""
        received: list = []
        node.create_subscription(msg_type, topic, received.append, profile or qos.sensor())
        return received

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 10.0, interval: float = 0.002) -> bool:
        return wait_for(predicate, timeout, interval)

    def wait_for_subscribers(self, publisher, count: int = 1, timeout: float = 10.0) -> bool:
        """Discovery: wait until `publisher` is matched by `count` subscriptions."""
        return wait_for(lambda: publisher.get_subscription_count() >= count, timeout)

    def close(self) -> None:
        self._closing = True
        self.executor.shutdown(timeout_sec=2.0)
        for node in self._nodes:
            try:
                node.destroy_node()
            except Exception:
                pass
        rclpy.try_shutdown(context=self.context)
        self._thread.join(timeout=5.0)

    def __enter__(self) -> RosHarness:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def close_spinning(executor, node, context, thread=None) -> None:
    """End a test's own spinning thread, then its node and context. rclpy 9.1's
    `Executor.shutdown()` never waits for the spin (its wait is skipped once the flag is set) and
    destroys the guard condition under it: the spinning thread is joined before the node and the
    context go, with bounds, so a teardown cannot hang the worker."""
    executor.shutdown(timeout_sec=2.0)
    if thread is not None:
        thread.join(timeout=5.0)
    try:
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
        if thread is not None:
            thread.join(timeout=5.0)


def sent_at(info) -> float:
    """When the sender published a message, on this process's steady clock (time.monotonic).

    From the DDS source timestamp (a subscription callback's second argument, system clock), so an
    observer measures the system under test, not how late its own thread was scheduled."""
    return time.monotonic() - (time.time_ns() - info["source_timestamp"]) * 1e-9


class NodeLogs:
    """Where the node processes a test starts write their output, so that a failing test's report
    ends with the last lines of each (conftest.py adds them): a node's traceback or its last
    warnings say more than "no answer from ..." in a CI log."""

    _started: list[tuple[float, str, str, subprocess.Popen]] = []  # (steady start, label, log path, process)
    _count = 0

    @classmethod
    def open(cls, label: str, proc_factory: Callable[[Any], subprocess.Popen]) -> subprocess.Popen:
        """Start a process with `proc_factory(output file)` and keep its output for the report."""
        import tempfile

        folder = os.path.join(os.environ.get("ROS_LOG_DIR") or tempfile.gettempdir(), "node-output")
        os.makedirs(folder, exist_ok=True)
        cls._count += 1
        path = os.path.join(folder, f"{cls._count:04d}-{label.replace('/', '_')}.log")
        with open(path, "wb") as out:
            proc = proc_factory(out)
        cls.add(label, path, proc)
        return proc

    @classmethod
    def add(cls, label: str, path, proc: subprocess.Popen) -> None:
        """A process that writes its output to `path` itself."""
        cls._started.append((time.monotonic(), label, str(path), proc))

    @classmethod
    def alive(cls) -> list[subprocess.Popen]:
        """The processes running now (a test's start: a module fixture's nodes it may outlive)."""
        return [entry[3] for entry in cls._started if entry[3].poll() is None]

    @classmethod
    def report(cls, since: float, alive_then=(), lines: int = 40) -> str:
        """The output tails of the processes started after `since`, running at `since`
        (`alive_then`, from alive()) or still running."""
        keep = {id(proc) for proc in alive_then}
        cls._started = [entry for entry in cls._started
                        if entry[3].poll() is None or entry[0] >= since or id(entry[3]) in keep]
        out = []
        for _, label, path, proc in cls._started:
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = "".join(f.readlines()[-lines:])
            except OSError:
                text = ""
            out.append(f"--- {label} (pid {proc.pid}, exit code {proc.poll()}):\n{text}")
        return "\n".join(out)


def start_ros_module(module: str, params: dict, namespace: str = "") -> subprocess.Popen:
    """`module`.main() in its own process, as its console script runs it, with ROS parameters and
    an optional namespace; its output goes to NodeLogs."""
    import sys

    args = ["--ros-args"] + (["-r", f"__ns:={namespace}"] if namespace else [])
    for name, value in params.items():
        args += ["-p", f"{name}:={str(value).lower() if isinstance(value, bool) else value}"]
    code = f"import sys; from {module} import main; sys.exit(main())"
    return NodeLogs.open(f"{namespace}/{module.rsplit('.', 1)[-1]}", lambda out: subprocess.Popen(
        [sys.executable, "-c", code, *args], env=dict(os.environ), stdout=out, stderr=subprocess.STDOUT))


def device_file_as(tmp, actor_id: str, ops: list[str] | None = None) -> str:
    """The shipped device file under another device (actor) id, and with other `ops` if given."""
    import pathlib

    import yaml

    repo = pathlib.Path(__file__).resolve().parents[1]
    document = yaml.safe_load((repo / "config" / "device.yaml").read_text(encoding="utf-8"))
    document["device"]["id"] = actor_id
    if ops is not None:
        document["ops"] = list(ops)
    path = pathlib.Path(tmp) / f"{actor_id.replace(':', '_')}.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return str(path)


def node_process(parent_pid: int, name: str):
    """The process of node `name` among `parent_pid`'s descendants (a psutil.Process): a scene
    started by `cookwala-ros up` runs each node as `... --ros-args -r __node:=<name>`."""
    import psutil

    for proc in psutil.Process(parent_pid).children(recursive=True):
        try:
            if f"__node:={name}" in proc.cmdline():
                return proc
        except psutil.NoSuchProcess:
            continue
    raise AssertionError(f"no process of node {name!r} under pid {parent_pid}")


def stop_processes(procs) -> None:
    """SIGINT every process still running (None entries skipped), then wait; one that lingers past
    10 s is asked for its threads' stacks (SIGUSR1: node_main's faulthandler, into its output) and
    then killed, so the failing test's report says where it hung."""
    procs = [p for p in procs if p is not None]
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    for proc in procs:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGUSR1)
            try:
                proc.wait(timeout=2)  # faulthandler writes at once; the node stays where it is
            except subprocess.TimeoutExpired:
                pass
            proc.kill()
            proc.wait()


def wait_armed_and_ready(watch, describe: Callable[[], str], timeout: float) -> None:
    """Until `watch` (a test's observer with `state_label` and `executor_ready`) sees an armed
    monitor and the executor's word that it would cook (ros/readiness.py). A monitor that stops
    on its own meanwhile fails the test at once, naming its trigger: a spurious stop is a fault
    to find, never one to reset and wait out (issue 22)."""
    deadline = time.monotonic() + timeout
    while not (watch.state_label == "armed" and watch.executor_ready and watch.executor_ready[0]):
        assert watch.state_label not in ("stopped", "fault"), f"the monitor stopped before anything cooked: {describe()}"
        assert time.monotonic() < deadline, (
            f"armed and the executor ready to cook: not within {timeout} s (monitor {describe()}; executor: "
            f"{watch.executor_ready[1] if watch.executor_ready else 'no diagnostics from it'})")
        time.sleep(0.05)
