"""pot_sim: the simulated kitchen's cook, as far as the pot on the hob goes.

In a real kitchen the ingredients a step heats are in the pot because they were put there; in the
simulated one this node puts them there. It follows the executor's public status
(`cookwala/status`), and for each execution asks the executor's `get_log` service once for what
the ExecutionLog says publicly (recipe, recipe hash, servings), reads that recipe from the
executor's recipe library (the device file's `executor.recipe_library`, else <data_dir>/recipes:
the same folder the executor cooks from) and, when a heat step starts, sets the heater sim's
`medium`, `medium_mass_kg` and `lid` parameters with one SetParametersAtomically call to the
contents core.pot says the step heats: the rule the engine's own estimate uses, so the sim pot
holds what the engine believes it holds. The executor knows nothing of this node.

A recipe not in the library (e.g. an ExecuteNode's one-node recipe) leaves the pot as it is, with
a warning. Calls never block a callback; the newest contents win.
"""

from __future__ import annotations

import json
import sys
import threading

from rcl_interfaces.srv import SetParametersAtomically
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter

from cookwala_msgs.msg import ExecutionStatus
from cookwala_msgs.srv import GetLog
from cookwala_ros.core import lifecycle
from cookwala_ros.core.pot import PotCook
from cookwala_ros.device import load_device_config
from cookwala_ros.executor.config import library_dir_of
from cookwala_ros.executor.library import RecipeLibrary
from cookwala_ros.ros import names, qos
from cookwala_ros.ros.endpoints import LeanEndpoints
from cookwala_ros.ros.node_main import run_node
from cookwala_ros.ros.params import ParamSpec, declare_parameters

NODE_NAME = "pot_sim"
FINAL = lifecycle.FINAL_STATES
MASS_RANGE_KG = (0.01, 50.0)  # heater_sim's medium_mass_kg range
PUMP_PERIOD_S = 0.25  # steady clock: retries of a call whose service was not there yet (cheap when idle)

PARAMETERS = (
    ParamSpec("device_file", "", "Device file (YAML) naming the executor's recipe library; empty = the "
              "package's config/device.yaml."),
    ParamSpec("data_dir", "", "The executor's data folder (recipes in <data_dir>/recipes); empty = "
              "executor.data_dir of the device file."),
    ParamSpec("executor_node", names.EXECUTOR_NODE, "The executor whose status is followed and whose "
              "get_log names the recipe (relative names resolve in this node's namespace)."),
    ParamSpec("heater_node", "heater_sim", "The heater sim whose pot contents are set."),
)


class PotSimNode(LeanEndpoints, Node):
    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS)
        device = load_device_config(values["device_file"] or None)
        self.library = RecipeLibrary(library_dir_of(device, values["data_dir"] or None))
        group = MutuallyExclusiveCallbackGroup()
        executor, heater = values["executor_node"].rstrip("/"), values["heater_node"].rstrip("/")
        self._log_client = self.create_client(GetLog, f"{executor}/get_log", callback_group=group)
        self._set_client = self.create_client(SetParametersAtomically, f"{heater}/set_parameters_atomically",
                                              callback_group=group)
        self._lock = threading.Lock()
        self._execution: str | None = None
        self._cook: PotCook | None = None
        self._asked = False  # get_log asked for the execution being followed
        self._node: str | None = None  # the node it runs now
        self._pending: dict | None = None  # contents not sent yet
        self._in_flight = False
        self.applied: list[dict] = []  # contents the heater sim took, in order (diagnostics, tests)
        self.create_subscription(ExecutionStatus, names.EXECUTION_STATUS, self._on_status, qos.latched(),
                                 callback_group=group)
        self.create_timer(PUMP_PERIOD_S, self._pump, callback_group=group, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.get_logger().info(f"recipes from {self.library.folder}; pot contents to {self._set_client.srv_name}")

    # ------------------------------------------------------------------ following the executor

    def _on_status(self, msg: ExecutionStatus) -> None:
        with self._lock:
            if msg.id != self._execution:
                self._execution, self._cook, self._asked, self._node = msg.id, None, False, None
            self._node = None if msg.state in FINAL else msg.node or None
        self._pump()

    def _on_log(self, future, execution: str) -> None:
        try:
            response = future.result()
            log = json.loads(response.log_json) if response.found else None
        except Exception as exc:  # noqa: BLE001 - a failed call leaves the pot as it is
            self.get_logger().warning(f"no log of {execution}: {exc}")
            return
        cook = None
        if isinstance(log, dict):
            ref, recipe_hash = str(log.get("recipe", "")), log.get("recipeHash")
            found = self._find(ref, recipe_hash)
            if found is None and self.library.refresh():
                found = self._find(ref, recipe_hash)
            if found is None:
                self.get_logger().warning(f"{execution}: recipe {ref} is not in {self.library.folder}; "
                                          "the pot stays as it is")
            else:
                cook = PotCook(found.document, log.get("servings"))
        with self._lock:
            if self._execution == execution:
                self._cook = cook
        self._pump()

    def _find(self, ref: str, recipe_hash: str | None):
        """That exact revision (the log's hash), never another one."""
        found = self.library.find(ref, recipe_hash)
        return found if found is not None and (not recipe_hash or found.hash == recipe_hash) else None

    # ------------------------------------------------------------------ setting the pot

    def _pump(self) -> None:
        """Ask for the log, work out the contents, send them: whatever is due and possible now."""
        with self._lock:
            execution = self._execution
            if execution is not None and not self._asked and self._log_client.service_is_ready():
                self._asked = True
                future = self._log_client.call_async(GetLog.Request(execution_id=execution))
                future.add_done_callback(lambda done: self._on_log(done, execution))
            if self._cook is not None:
                contents = self._cook.step(self._node)
                if contents is not None:
                    self._pending = contents
            if self._pending is None or self._in_flight or not self._set_client.service_is_ready():
                return
            contents, self._pending, self._in_flight = self._pending, None, True
        mass = min(max(float(contents["mass_kg"]), MASS_RANGE_KG[0]), MASS_RANGE_KG[1])
        request = SetParametersAtomically.Request()
        request.parameters = [Parameter("medium", value=str(contents["medium"])).to_parameter_msg(),
                              Parameter("medium_mass_kg", value=mass).to_parameter_msg(),
                              Parameter("lid", value=bool(contents["lid"])).to_parameter_msg()]
        future = self._set_client.call_async(request)
        future.add_done_callback(lambda done: self._on_set(done, contents))

    def _on_set(self, future, contents: dict) -> None:
        with self._lock:
            self._in_flight = False
        try:
            result = future.result().result
            problem = None if result.successful else f"refused: {result.reason}"
        except Exception as exc:  # noqa: BLE001 - logged; the executor's sensors tell the truth
            problem = f"not applied: {exc}"
        if problem:
            self.get_logger().error(f"pot contents {contents} {problem}")
        else:
            self.applied.append(contents)
            self.get_logger().info(f"pot contents set: {contents}")
        self._pump()


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, PotSimNode, args, threads=1)


if __name__ == "__main__":
    sys.exit(main())
