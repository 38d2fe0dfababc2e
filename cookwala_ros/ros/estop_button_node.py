"""estop_button: a stop button as a ROS node, publishing the e-stop topic its device file names.

The topic is `safety_monitor.estop_topic` of the `device_file` (the one the robot's safety monitor
obeys); by default the kitchen's /cookwala/estop, which halts every robot in the kitchen.

std_msgs/Bool, true while the button is held, on the latched QoS profile: a safety monitor that
starts (or restarts) while the button is held still sees it pressed. The state is published on
every change and re-sent every `period_s`. A physical button driver calls the `~/set` service
(std_srvs/SetBool); on a console, type `p` (press) or `r` (release) and Enter when `stdin` is true.
"""

from __future__ import annotations

import sys
import threading

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from std_msgs.msg import Bool
from std_srvs.srv import SetBool

from cookwala_ros.ros.node_main import run_node
from cookwala_ros.ros import names, qos
from cookwala_ros.ros.device_names import robot_names


class EstopButtonNode(Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("estop_button", **kwargs)
        self.declare_parameter("pressed", False, ParameterDescriptor(description="Initial button state."))
        self.declare_parameter("period_s", 1.0, ParameterDescriptor(description="Re-send period of the state [s]."))
        self.declare_parameter("stdin", False, ParameterDescriptor(description="Read p/r lines from the console."))
        self.declare_parameter("device_file", "", ParameterDescriptor(
            description="Device file whose safety_monitor.estop_topic this button publishes; empty = the kitchen's "
                        f"{names.ESTOP}.", read_only=True))
        device_file = self.get_parameter("device_file").value
        if not isinstance(device_file, str):
            raise ValueError(f"parameter device_file must be a string, got {device_file!r}")
        _, topics = robot_names(device_file)
        period = self.get_parameter("period_s").value
        if not isinstance(period, (int, float)) or period <= 0:
            raise ValueError(f"parameter period_s must be a positive number, got {period!r}")
        self._pressed = bool(self.get_parameter("pressed").value)
        self._pub = self.create_publisher(Bool, topics.estop, qos.latched())
        self.create_service(SetBool, "~/set", self._on_set)
        self.create_timer(period, self._publish, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._publish()

    def set_pressed(self, pressed: bool) -> None:
        changed = pressed != self._pressed
        self._pressed = pressed
        self._publish()
        if changed:
            self.get_logger().warning("STOP button pressed" if pressed else "stop button released")

    def _publish(self) -> None:
        self._pub.publish(Bool(data=self._pressed))

    def _on_set(self, request, response):
        self.set_pressed(bool(request.data))
        response.success, response.message = True, "pressed" if self._pressed else "released"
        return response

    def read_console(self) -> None:
        for line in sys.stdin:
            word = line.strip().lower()
            if word in ("p", "press"):
                self.set_pressed(True)
            elif word in ("r", "release"):
                self.set_pressed(False)


def main(args: list[str] | None = None) -> int:
    def start_console(node: EstopButtonNode) -> None:
        if node.get_parameter("stdin").value:
            threading.Thread(target=node.read_console, daemon=True).start()

    return run_node("estop_button", EstopButtonNode, args, before_spin=start_console)


if __name__ == "__main__":
    sys.exit(main())
