"""The robot model as pure data: what the arm and its controllers accept (no ROS, no I/O)."""
