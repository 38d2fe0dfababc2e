"""ROS 2 adapters: the only package that imports rclpy (nodes, message conversion, QoS)."""
