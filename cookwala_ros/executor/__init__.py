"""The executor service: owns Cookwala executions, their persistence and their events.

No rclpy here (the ROS node in `cookwala_ros.ros.executor_node` and the HTTP app in
`cookwala_ros.http` are thin adapters over `service.ExecutorService`); threads and SQLite are fine.
"""
