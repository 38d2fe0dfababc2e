"""cookwala_ros: the ROS 2 implementation of the Cookwala Core 0.2 robot-cooking standard."""

__version__ = "0.1.0"
CORE_VERSION = "0.2.1"
