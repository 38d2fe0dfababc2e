"""Cookwala Core 0.2 semantics. Pure Python: no rclpy, no sockets, no threads."""
