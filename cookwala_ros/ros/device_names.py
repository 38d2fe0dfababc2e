"""A node's `device_file` parameter -> the robot's per-robot names (sims, e-stop button).

Empty = no device file: the name table's defaults (what the simulated kitchen serves), so a sim
runs on its own. A bad file stops the node naming `device_file` and the key.
"""

from __future__ import annotations

from cookwala_ros.device import DeviceConfig, DeviceConfigError, RobotNames, load_device_config
from cookwala_ros.ros.params import ParameterError, ParamSpec

DEVICE_FILE = ParamSpec("device_file", "", "The robot's device file (YAML): its topic names come from it; "
                        "empty = the default names (ros/names.py).")


def robot_names(path: str) -> tuple[DeviceConfig | None, RobotNames]:
    if not path:
        return None, RobotNames()
    try:
        device = load_device_config(path)
    except DeviceConfigError as exc:
        raise ParameterError("device_file", str(exc)) from None
    return device, device.names
