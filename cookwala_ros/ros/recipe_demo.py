"""Cook a recipe end to end in the simulated kitchen through the Core HTTP API.

`LiveKitchen` brings up the `kitchen` scene (sim clock, arm, heater, executor with its HTTP API,
safety monitor) as child processes with a fresh data dir and recipe library, and plays the person
in the kitchen: it publishes /cookwala/presence and watches the robot's heater state (so tests can
assert that no heat was applied). `namespace` puts the whole robot under /<namespace>/ and
`with_clock=False` leaves /clock to another kitchen already running: two LiveKitchens with two
namespaces are two robots in one ROS domain. `run_recipe_demo()` is the `make demo` flow on top of it: cook the
sample soup over HTTP with a progress bar per step, print the log summary, write the plot.

The only rclpy here is the small observer node of the parent process; cooking itself goes
through HTTP (`cookwala_ros.http.demo_client`), exactly as any other Cookwala client would.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import shutil
import sys
import tempfile
import threading
import time
from typing import Iterable, TextIO

from cookwala_ros import CORE_VERSION, bringup, resources
from cookwala_ros.supervisor import ProcessSpec, Supervisor

SCENE = "kitchen"
SOUP = "tomato-soup.cookwala.json"
# Node executables that may not be installed as console scripts yet: run their module instead.
_MODULES = {
    "executor": "cookwala_ros.ros.executor_node",
    "safety_monitor": "cookwala_ros.ros.safety_monitor_node",
    "arm_sim": "cookwala_ros.ros.arm_sim_node",
    "heater_sim": "cookwala_ros.ros.heater_sim_node",
    "sim_clock": "cookwala_ros.ros.sim_clock_node",
}


class KitchenError(RuntimeError):
    """The kitchen could not start or died (the message names the node or the wait)."""


def _resolver(package: str, executable: str) -> list[str]:
    try:
        return bringup.resolve_executable(package, executable)
    except bringup.ExecutableNotFound:
        if package == "cookwala_ros" and executable in _MODULES:
            return [sys.executable, "-m", _MODULES[executable]]
        raise


def request_for_recipe(recipe: dict, *, key: str, servings: float | None = None) -> dict:
    """A minimal ExecuteRequest for one recipe revision (hash computed from the document)."""
    from cookwala_ros.core.trust import document_hash

    body = {"core": CORE_VERSION, "kind": "ExecuteRequest", "id": f"req-{key}"[:128], "recipe": recipe["id"],
            "recipeHash": document_hash(recipe), "requestedBy": "human:operator", "idempotencyKey": key}
    if servings is not None:
        body["servings"] = servings
    return body


class _Observer:
    """The parent's rclpy node: publishes presence, records heater power."""

    def __init__(self, present: bool, namespace: str = "", heater_state: str = ""):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        from diagnostic_msgs.msg import DiagnosticArray

        from cookwala_msgs.msg import HeaterState, Presence, SafetyStatus
        from cookwala_ros.ros import names, qos

        self._rclpy = rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        # in the robot's namespace: its relative names are the robot's (presence stays kitchen-wide)
        self.node = rclpy.create_node("kitchen_person", context=self.context,
                                      namespace=names.namespace_of(namespace) or "/")
        self.present = present
        self.max_power_w = 0.0
        self.last_state = None
        self._lock = threading.Lock()
        self._presence_type = Presence
        self._pub = self.node.create_publisher(Presence, names.PRESENCE, qos.sensor())
        self.node.create_subscription(HeaterState, heater_state or names.HEATER_STATE, self._on_heater, qos.sensor())
        self.safety_label = ""  # the safety monitor's state, once it has said it
        self.executor_heartbeat = ""  # whether that monitor hears the executor (live | lapsed | none)
        self.node.create_subscription(SafetyStatus, names.SAFETY_STATUS, self._on_safety, qos.latched())
        self._namespace = namespace
        self.executor_ready: tuple[bool, str] | None = None  # what the executor says (ros/readiness.py)
        self.node.create_subscription(DiagnosticArray, names.DIAGNOSTICS, self._on_diagnostics, qos.sensor())
        self.node.create_timer(0.2, self._publish)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, name="kitchen-person", daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except Exception:  # shutdown while spinning
            pass

    def _publish(self) -> None:
        msg = self._presence_type()
        msg.stamp = self.node.get_clock().now().to_msg()
        msg.person_present = bool(self.present)
        msg.reachable_within_s = 0.0 if self.present else math.inf
        msg.source = "sim"
        self._pub.publish(msg)

    def _on_safety(self, msg) -> None:
        self.safety_label = msg.state_label
        self.executor_heartbeat = msg.executor_heartbeat

    def _on_diagnostics(self, msg) -> None:
        from cookwala_ros.ros.readiness import executor_readiness

        said = executor_readiness(msg, self._namespace)
        if said is not None:
            self.executor_ready = said

    def _on_heater(self, msg) -> None:
        with self._lock:
            self.last_state = msg
            self.max_power_w = max(self.max_power_w, float(msg.power_w))

    def set_parameter(self, node: str, name: str, value, timeout_s: float = 10.0) -> None:
        """Set one parameter of a running node (rcl_interfaces SetParameters); raises on refusal."""
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter

        client = self.node.create_client(SetParameters, f"{node}/set_parameters")  # the robot's node
        try:
            if not client.wait_for_service(timeout_sec=timeout_s):
                raise KitchenError(f"{client.srv_name} is not available")
            request = SetParameters.Request()
            request.parameters = [Parameter(name, value=value).to_parameter_msg()]
            future = client.call_async(request)
            deadline = time.monotonic() + timeout_s
            while not future.done():
                if time.monotonic() > deadline:
                    raise KitchenError(f"setting {node}.{name} timed out")
                time.sleep(0.02)
            result = future.result().results[0]
            if not result.successful:
                raise KitchenError(f"{node} refused {name}={value!r}: {result.reason}")
        finally:
            self.node.destroy_client(client)

    def reset_max_power(self) -> None:
        with self._lock:
            self.max_power_w = 0.0

    def reset_safety(self, timeout_s: float = 20.0) -> None:
        """The person's local reset of a stopped safety monitor (ResetSafety), until it is armed again."""
        from cookwala_msgs.srv import ResetSafety
        from cookwala_ros.ros import names

        client = self.node.create_client(ResetSafety, names.service_of(names.SAFETY_MONITOR_NODE, names.MONITOR_RESET))
        deadline = time.monotonic() + timeout_s
        last = "no answer"
        try:
            while time.monotonic() < deadline:
                if self.safety_label == "armed":
                    return
                if client.wait_for_service(timeout_sec=1.0):
                    future = client.call_async(ResetSafety.Request(requested_by="kitchen_person"))
                    end = time.monotonic() + 5.0
                    while not future.done() and time.monotonic() < end:
                        time.sleep(0.02)
                    if future.done() and future.result() is not None:
                        last = future.result().message
                time.sleep(0.3)  # the armed status follows the reply
            raise KitchenError(f"the safety monitor did not re-arm within {timeout_s:g} s ({last})")
        finally:
            self.node.destroy_client(client)

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        self._rclpy.try_shutdown(context=self.context)
        self._thread.join(2.0)


class LiveKitchen:
    """The kitchen scene as processes, with its HTTP API at `base_url` once started."""

    def __init__(self, *, rtf: float = 50.0, recipes: Iterable[str | os.PathLike] = (), data_dir: str | None = None,
                 device_file: str = "", http_port: int | None = None, medium_sensor_fault: str = "none",
                 disabled_sensors: str = "", person_present: bool = True, quiet: bool = True,
                 output: TextIO | None = None, startup_timeout_s: float = 60.0, with_safety_monitor: bool = True,
                 state_dir: str | os.PathLike | None = None, scene_args: dict | None = None,
                 namespace: str = "", with_clock: bool = True, clock: str = "lockstep"):
        from cookwala_ros.http.server import free_port

        self.rtf = float(rtf)  # lock-step: the ceiling
        self.clock = clock  # "lockstep" (the same cook at any load: the default) or "rtf" (/clock = wall x rtf)
        self.recipes = [pathlib.Path(r) for r in recipes] or [resources.share_path("examples", "recipes", SOUP)]
        self._own_dir = data_dir is None
        self.data_dir = pathlib.Path(data_dir or tempfile.mkdtemp(prefix="cookwala-kitchen-"))
        self.device_file = device_file
        self.http_port = int(http_port or free_port())
        self.medium_sensor_fault = medium_sensor_fault
        self.disabled_sensors = disabled_sensors
        self.person_present = person_present
        self.quiet = quiet
        self.output = output
        self.startup_timeout_s = startup_timeout_s
        self.with_safety_monitor = with_safety_monitor
        # the monitor's latched stops persist here; default: inside the (temporary) data dir
        self.state_dir = pathlib.Path(state_dir) if state_dir is not None else self.data_dir / "safety_state"
        self.scene_args = dict(scene_args or {})  # any other argument of the kitchen scene
        self.namespace = namespace
        self.with_clock = with_clock
        self.supervisor: Supervisor | None = None
        self.observer: _Observer | None = None
        self._sink = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def scene_arguments(self) -> dict:
        """The kitchen scene's arguments as this kitchen sets them."""
        return {
            "real_time_factor": self.rtf, "clock_rate_hz": min(1000.0, max(100.0, self.rtf * 10.0)),
            "http_port": self.http_port, "data_dir": str(self.data_dir), "device_file": self.device_file,
            "disabled_sensors": self.disabled_sensors, "medium_sensor_fault": self.medium_sensor_fault,
            "state_dir": str(self.state_dir), "namespace": self.namespace, "with_clock": self.with_clock,
            "clock": self.clock, **self.scene_args}

    def process_specs(self) -> list[ProcessSpec]:
        manifest = bringup.load_manifest(SCENE)
        arguments = self.scene_arguments()
        # without the monitor the executor must be told it runs unguarded (else it refuses to cook)
        specs = manifest.node_specs(arguments, overrides=None if self.with_safety_monitor
                                    else {"executor": {"safety_monitor_node": "none"}})
        if not self.with_safety_monitor:
            specs = [s for s in specs if s.name != "safety_monitor"]
        return [ProcessSpec(s.name, bringup.node_command(s, resolver=_resolver), s.required, stop_order=s.stop_order,
                            restart_hint=bringup.restart_command(SCENE, s.name, arguments)) for s in specs]

    def start(self) -> "LiveKitchen":
        library = self.data_dir / "recipes"
        library.mkdir(parents=True, exist_ok=True)
        for recipe in self.recipes:
            shutil.copy(recipe, library / recipe.name)
        procs = self.process_specs()
        if self.quiet and self.output is None:
            self._sink = open(os.devnull, "w")  # noqa: SIM115 - closed in stop()
        self.supervisor = Supervisor(procs, output=self._sink or self.output)
        self.supervisor.start()
        try:
            self.observer = _Observer(self.person_present, self.namespace, self._heater_state_topic())
            self._wait_for_http()
        except BaseException:
            self.stop()
            raise
        return self

    def _heater_state_topic(self) -> str:
        if not self.device_file:
            return ""
        from cookwala_ros.device import load_device_config

        return load_device_config(self.device_file).names.heater_state

    def _wait_for_http(self) -> None:
        import httpx

        deadline = time.monotonic() + self.startup_timeout_s
        last = "no answer"
        while time.monotonic() < deadline:
            for exit_ in self.supervisor.poll(during_startup=True):
                raise KitchenError(exit_.describe())  # a test kitchen short of a node is no kitchen
            try:
                r = httpx.get(self.base_url + "/v1/capabilities", timeout=1.0)
                # armed, and hearing this executor: heat before that would rightly be a stop
                armed = not self.with_safety_monitor or (self.observer.safety_label == "armed"
                                                         and self.observer.executor_heartbeat == "live")
                # and the executor's own word that it would cook now (it hears its drivers and monitor)
                ready = self.observer.executor_ready
                if r.status_code == 200 and self.observer.last_state is not None and armed and ready and ready[0]:
                    return
                last = (f"HTTP {r.status_code}" if r.status_code != 200 else "no /heater/state yet"
                        if self.observer.last_state is None else
                        f"safety monitor not armed and hearing the executor yet ({self.observer.safety_label or 'no status'}, "
                        f"executor heartbeat {self.observer.executor_heartbeat or '?'})" if not armed else
                        "no readiness from the executor on /diagnostics yet" if ready is None else
                        f"the executor would not cook yet: {ready[1]}")
                if r.status_code == 200 and self.observer.safety_label in ("stopped", "fault"):
                    # it stopped while the scene came up (a node slow to start on a busy host): the
                    # person in the kitchen resets it locally, as after any stop
                    try:
                        self.observer.reset_safety(timeout_s=5.0)
                    except KitchenError as exc:
                        last = str(exc)
            except httpx.HTTPError as exc:
                last = type(exc).__name__
            time.sleep(0.2)
        raise KitchenError(f"the kitchen's HTTP API at {self.base_url} was not ready within "
                           f"{self.startup_timeout_s:g} s ({last})")

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        """Until the executor says it would start a cook (ros/readiness.py); raises with its reason."""
        deadline = time.monotonic() + timeout_s
        while not ((ready := self.observer.executor_ready) and ready[0]):
            if time.monotonic() > deadline:
                raise KitchenError(f"the executor would not cook within {timeout_s:g} s: "
                                   f"{ready[1] if ready else 'no readiness from it on /diagnostics'}")
            time.sleep(0.05)

    def set_presence(self, present: bool, settle_s: float = 0.6) -> None:
        """Change who is in the kitchen, and wait until the executor has seen a message or two."""
        if self.observer is not None:
            self.observer.present = present
        time.sleep(settle_s)

    def reset_safety(self, timeout_s: float = 20.0) -> None:
        """Re-arm the scene's safety monitor after a stop, as the person in the kitchen does."""
        if self.with_safety_monitor and self.observer is not None:
            self.observer.reset_safety(timeout_s)

    def set_parameter(self, node: str, name: str, value) -> None:
        """Change a parameter of one of the scene's nodes while it runs (faults, disabled sensors)."""
        self.observer.set_parameter(node, name, value)

    @property
    def max_heater_power_w(self) -> float:
        return self.observer.max_power_w if self.observer else 0.0

    def reset_heater_watch(self) -> None:
        if self.observer:
            self.observer.reset_max_power()

    def check_alive(self) -> None:
        if self.supervisor is None:
            return
        for exit_ in self.supervisor.poll():
            if exit_.required:
                raise KitchenError(exit_.describe())

    def stop(self) -> dict[str, int]:
        codes: dict[str, int] = {}
        if self.observer is not None:
            self.observer.close()
            self.observer = None
        if self.supervisor is not None:
            codes = self.supervisor.stop()
            self.supervisor = None
        if self._sink is not None:
            self._sink.close()
            self._sink = None
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)
        return codes

    def __enter__(self) -> "LiveKitchen":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def write_plot(log: dict, output: pathlib.Path) -> bool:
    """Write the log's temperature plot (the `cookwala-ros log plot` renderer); True when written."""
    from cookwala_ros.commands import log as log_command

    output.parent.mkdir(parents=True, exist_ok=True)
    log_command.render(log, output, title=f"{log.get('recipe', 'recipe')} on the simulated kitchen")
    return output.is_file()


def run_recipe_demo(*, rtf: float = 50.0, recipe: str | os.PathLike | None = None,
                    output: str | os.PathLike = "out/demo/recipe.png", quiet_nodes: bool = True,
                    out: TextIO | None = None, timeout_s: float = 900.0, with_safety_monitor: bool = True,
                    clock: str = "lockstep") -> int:
    """Bring up the kitchen, cook `recipe` (default: the sample soup) over HTTP, print the log
    summary and write the plot. Returns 0 when the execution completed, 1 otherwise. In lock-step
    (the default) the cook is the same on a busy machine as on an idle one; `rtf` is its ceiling."""
    from cookwala_ros.http.demo_client import DemoClientError, cook, log_summary

    out = out or sys.stdout
    recipe_path = pathlib.Path(recipe) if recipe else resources.share_path("examples", "recipes", SOUP)
    document = json.loads(recipe_path.read_text(encoding="utf-8"))

    def say(line: str) -> None:
        out.write(f"[demo] {line}\n")
        out.flush()

    monitor = ", safety monitor" if with_safety_monitor else ""
    pace = f"in lock-step, at most {rtf:g}x real time" if clock == "lockstep" else f"at real-time factor {rtf:g}"
    say(f"starting the {SCENE} scene {pace} (sim clock, arm, heater, executor{monitor})")
    started = time.monotonic()
    try:
        with LiveKitchen(rtf=rtf, recipes=[recipe_path], quiet=quiet_nodes, clock=clock,
                         with_safety_monitor=with_safety_monitor) as kitchen:
            say(f"executor HTTP API up at {kitchen.base_url} after {time.monotonic() - started:.1f} s; "
                f"cooking {document['id']} ({recipe_path.name})")
            request = request_for_recipe(document, key=f"demo-{time.time_ns()}",
                                         servings=(document.get("yield") or {}).get("servings"))
            result = cook(kitchen.base_url, request, out=out, poll_s=0.1, timeout_s=timeout_s)
    except (KitchenError, DemoClientError, OSError) as exc:
        say(f"FAILED: {exc}")
        return 1
    say(f"execution {result.status['id']} ended {result.status['state']} after {result.wall_s:.1f} s wall "
        f"({result.statuses_seen} status polls)")
    if result.log:
        for line in log_summary(result.log):
            out.write(line + "\n")
        path = pathlib.Path(output)
        if write_plot(result.log, path):
            say(f"plot written to {path}")
    return 0 if result.status["state"] == "completed" else 1
