"""cookwala_capabilities: serves the device's Core capabilities document over ROS 2.

The document is generated from the device file at start-up (parameter `device_file`, default
the package's config/device.yaml). A bad device file stops the node with a message naming the
key, before anything is advertised.
"""

from __future__ import annotations

import json
import sys

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node

from cookwala_msgs.srv import GetCapabilities
from cookwala_ros.ros.node_main import run_node
from cookwala_ros.ros.params import ParamSpec, declare_parameters
from cookwala_ros.device import capabilities_document, load_device_config

SERVICE_NAME = "cookwala/get_capabilities"
PARAMETERS = (
    ParamSpec("device_file", "", "Path of the device file (YAML); empty = the package's config/device.yaml."),
)


class CapabilitiesNode(Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("cookwala_capabilities", **kwargs)
        device_file = declare_parameters(self, PARAMETERS)["device_file"] or None
        # Raises DeviceConfigError naming the key: main() turns it into a clean exit.
        self.config = load_device_config(device_file)
        self._document_json = json.dumps(capabilities_document(self.config), separators=(",", ":"))
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

    def _on_get_capabilities(self, request, response):
        response.capabilities_json = self._document_json
        return response


def main(args: list[str] | None = None) -> int:
    return run_node("cookwala_capabilities", CapabilitiesNode, args)


if __name__ == "__main__":
    sys.exit(main())
