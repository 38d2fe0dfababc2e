"""Bringup manifests (config/bringup/<scene>.yaml) and the command lines of their nodes.

Read by `launch/*.launch.py` (launch_ros Nodes) and by `cookwala-ros up` (child processes), so
both start the same nodes with the same parameters. Pure Python: no rclpy, no launch.
The format is described in `cookwala_ros.bringup.manifest`.
"""

from cookwala_ros.bringup.command_line import (
    ExecutableNotFound,
    console_scripts,
    format_param_value,
    node_command,
    restart_command,
    resolve_executable,
    ros_arguments,
)
from cookwala_ros.bringup.manifest import (
    BRINGUP_DIR,
    FORMAT_VERSION,
    ON_EXIT,
    Argument,
    Manifest,
    ManifestError,
    NodeSpec,
    available_scenes,
    load_manifest,
    manifest_path,
    parse_manifest,
    parse_set_options,
    parse_value,
)

__all__ = [
    "BRINGUP_DIR", "FORMAT_VERSION", "ON_EXIT", "Argument", "ExecutableNotFound", "Manifest", "ManifestError", "NodeSpec",
    "available_scenes", "console_scripts", "format_param_value", "load_manifest", "manifest_path", "node_command",
    "parse_manifest", "parse_set_options", "parse_value", "resolve_executable", "restart_command", "ros_arguments",
]
