"""cookwala_capabilities: serves the device's Core capabilities document over ROS 2.

The document is generated from the device file at start-up (parameter `device_file`, default
the package's config/device.yaml). Its `interfaces` name what the robot's executor serves in this
node's namespace (parameter `executor_node`, relative = in the namespace; empty = no executor, no
interfaces): its ExecuteRecipe action and, when the device file's `executor.http_port` is set,
its HTTP API. A bad device file stops the node with a message naming the key, before anything
is advertised.
"""

from __future__ import annotations

import json
import sys

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node

from cookwala_msgs.srv import GetCapabilities
from cookwala_ros.ros.endpoints import LeanEndpoints
from cookwala_ros.ros.node_main import run_node
from cookwala_ros.ros.params import ParamSpec, declare_parameters
from cookwala_ros.capabilities import ServedInterfaces, capabilities_document
from cookwala_ros.device import load_device_config, load_robot_files
from cookwala_ros.ros import names

SERVICE_NAME = names.CAPABILITIES_SERVICE
PARAMETERS = (
    ParamSpec("device_file", "", "Path of the device file (YAML); empty = the package's config/device.yaml."),
    ParamSpec("executor_node", "", "The robot's executor, e.g. executor (relative = in this node's namespace); "
              "empty = none runs, the capabilities name no action."),
)


class CapabilitiesNode(LeanEndpoints, Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("cookwala_capabilities", **kwargs)
        device_file = declare_parameters(self, PARAMETERS)["device_file"] or None
        # Raises DeviceConfigError naming the key: main() turns it into a clean exit.
        self.config = load_device_config(device_file)
        load_robot_files(self.config)  # the arm it advertises must load (URDF and poses), like the executor's
        served = self._served(self.get_parameter("executor_node").value)
        self._document_json = json.dumps(capabilities_document(self.config, served), separators=(",", ":"))
        self._service = self.create_service(
            GetCapabilities,
            SERVICE_NAME,
            self._on_get_capabilities,
            callback_group=MutuallyExclusiveCallbackGroup(),
        )
        self.get_logger().info(
            f"serving capabilities of {self.config.device_id} ({len(self.config.ops)} ops) "
            f"on {self._service.srv_name}"
        )

    def _served(self, executor: str) -> ServedInterfaces:
        if not executor:
            return ServedInterfaces(namespace=self.get_namespace())
        fqn = names.qualify(self.get_namespace(), executor)
        section = self.config.executor
        port = int(section.get("http_port") or 0)
        host = section.get("http_bind") or "127.0.0.1"
        return ServedInterfaces(
            namespace=self.get_namespace(), action_server=names.service_of(fqn, names.EXECUTE_RECIPE),
            execute_node_action=names.service_of(fqn, names.EXECUTE_NODE),
            http_url=f"http://{host}:{port}" if port > 0 else "")

    def _on_get_capabilities(self, request, response):
        response.capabilities_json = self._document_json
        return response


def main(args: list[str] | None = None) -> int:
    return run_node("cookwala_capabilities", CapabilitiesNode, args)


if __name__ == "__main__":
    sys.exit(main())
