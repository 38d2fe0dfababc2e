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

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from std_msgs.msg import Bool
from std_srvs.srv import SetBool

from cookwala_ros.ros.endpoints import LeanEndpoints
from cookwala_ros.ros.node_main import run_node
from cookwala_ros.ros import names, qos
from cookwala_ros.ros.device_names import robot_names
from cookwala_ros.ros.params import ParamSpec, declare_parameters

PARAMETERS = (
    ParamSpec("pressed", False, "Initial button state."),
    ParamSpec("period_s", 1.0, "Re-send period of the state [s].", minimum=0.0, exclusive_minimum=True),
    ParamSpec("stdin", False, "Read p/r lines from the console."),
    ParamSpec("device_file", "", "Device file whose safety_monitor.estop_topic this button publishes; empty = "
              f"the kitchen's {names.ESTOP}."),
)


class EstopButtonNode(LeanEndpoints, Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("estop_button", **kwargs)
        values = declare_parameters(self, PARAMETERS)  # ParameterError (a ValueError) names a bad one
        _, topics = robot_names(values["device_file"])
        period = values["period_s"]
        self._pressed = values["pressed"]
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
