"""The safety monitor reads its robot's device file, like every node of the robot.

The device file names the robot once: its topics (`arm:`, `heaters:`), its id, its URDF and its
SafetyLimits packs (`safety_limits`), and the monitor-only settings (`safety_monitor:` section).
They become the defaults of the monitor's parameters; a parameter given to the node (`-p`, a
scene's `parameters:`) wins. So a renamed controller topic or a site pack reaches the monitor
without being written a second time, and `ros2 param get` shows the values in force.
"""

from __future__ import annotations

from rclpy.node import Node
from rclpy.parameter import Parameter

from cookwala_ros.device import DeviceConfig, DeviceConfigError, RobotNames, load_device_config
from cookwala_ros.ros.params import ParameterError, ParamSpec

# keys of the `safety_monitor:` section that are not parameters of the node
_FILE_ONLY = ("estop_topic",)


def device_defaults(device: DeviceConfig) -> dict:
    """Parameter name -> value the device file gives the monitor."""
    values = {k: v for k, v in device.safety_monitor.items() if k not in _FILE_ONLY}
    values["device_id"] = device.device_id
    values["device_packs"] = [str(path) for path in device.safety_pack_paths()] or [""]
    arm = device.raw.get("arm") or {}
    if arm.get("robot_description"):
        values["urdf_path"] = str(device.resolve(arm["robot_description"]))
    return values


def apply_device_file(node: Node, specs: tuple[ParamSpec, ...]) -> tuple[DeviceConfig, RobotNames]:
    """Load the node's `device_file` and turn it into parameter overrides where none is given.

    Call before declaring the parameters. Raises ParameterError naming `device_file` (an
    unreadable or invalid file, the key named) or the parameter a file value is bad for."""
    overrides = node._parameter_overrides  # noqa: SLF001 - rclpy keeps the given values here until declared
    given = overrides.get("device_file")
    path = given.value if given is not None else ""
    if not isinstance(path, str):
        raise ParameterError("device_file", f"expected a string, got {path!r}")
    try:
        device = load_device_config(path or None)
        defaults = device_defaults(device)
    except DeviceConfigError as exc:
        raise ParameterError("device_file", str(exc)) from None
    by_name = {spec.name: spec for spec in specs}
    for name, value in defaults.items():
        if name in overrides:
            continue
        spec = by_name[name]
        value = _typed(spec.default, value)
        problem = spec.problem(value)
        if problem:
            raise ParameterError(name, f"{device.source}: safety_monitor.{name}: {problem}")
        overrides[name] = Parameter(name, value=value)
    return device, device.names


def _typed(default, value):
    """YAML's 1 for a double parameter, [1, 2, 3] for a double array: as the parameter's type."""
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(default, list) and default and isinstance(default[0], float) and isinstance(value, list):
        return [float(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value]
    return value
