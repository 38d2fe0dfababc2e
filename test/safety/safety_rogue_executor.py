"""A stand-in for an executor that dies before its first heartbeat: a real node that advertises
/cookwala/heartbeat but never publishes on it, and (parameter power_w > 0) commands the heater
at 10 Hz the way the executor's keep-alive does. SIGKILL it to play the crash."""

import sys

import rclpy
from rclpy.executors import ExternalShutdownException

from cookwala_msgs.msg import HeaterCommand, Heartbeat
from cookwala_ros.ros import qos


def main() -> int:
    rclpy.init(args=sys.argv)
    node = rclpy.create_node("rogue_executor")
    power_w = node.declare_parameter("power_w", 0.0).value
    node.create_publisher(Heartbeat, "/cookwala/heartbeat", qos.heartbeat(0.3))  # never beats
    heat = node.create_publisher(HeaterCommand, "/heater/command", qos.command())
    if power_w > 0:
        node.create_timer(0.1, lambda: heat.publish(HeaterCommand(mode=HeaterCommand.MODE_POWER, power_w=power_w,
                                                                  source="executor")))
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
