"""A stand-in for the executor's heartbeat: a real node publishing /cookwala/heartbeat at 10 Hz
with the project's liveliness lease (parameter lease_s, default 0.3 s), so a test can SIGKILL it
like a crashed executor."""

import sys

import rclpy
from rclpy.executors import ExternalShutdownException

from cookwala_msgs.msg import Heartbeat
from cookwala_ros.ros import qos


def main() -> int:
    rclpy.init(args=sys.argv)
    node = rclpy.create_node("heartbeat_sender")
    lease_s = node.declare_parameter("lease_s", 0.3).value
    pub = node.create_publisher(Heartbeat, "/cookwala/heartbeat", qos.heartbeat(lease_s))
    count = [0]

    def beat():
        count[0] += 1
        pub.publish(Heartbeat(stamp=node.get_clock().now().to_msg(), device_id="sim-kitchen",
                              node_name=node.get_fully_qualified_name(), state="idle", count=count[0]))

    node.create_timer(0.1, beat)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
