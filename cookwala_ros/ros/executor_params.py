"""The executor node's parameters: names, defaults, ranges and the checks that name a bad one."""

from __future__ import annotations

import re

from cookwala_ros.ros.executor_io import UNGUARDED
from cookwala_ros.ros.lockstep import clock_mode_param
from cookwala_ros.ros.monitor_watch import DEFAULT_TIMEOUT_S
from cookwala_ros.ros.params import ParamSpec

_NODE_NAME = re.compile(r"^/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")


def _monitor_name(value: str) -> str | None:
    if value in ("", UNGUARDED) or _NODE_NAME.match(value):
        return None
    return (f"must be empty (the device file's), '{UNGUARDED}' (no monitor) or a node name (relative = in the "
            f"executor's namespace), got {value!r}")


def _port(value: int) -> str | None:
    return None if -1 <= value <= 65535 else f"must be -1 (device file), 0 (no HTTP) or a TCP port, got {value}"


PARAMETERS = (
    ParamSpec("device_file", "", "Device file (YAML); empty = the package's config/device.yaml."),
    ParamSpec("data_dir", "", "Database and recipe library folder; empty = executor.data_dir of the device file."),
    ParamSpec("http_port", -1, "Core HTTP API port: 0 = no HTTP server, -1 = executor.http_port of the device file.",
              check=_port),
    ParamSpec("http_bind", "", "Address the HTTP API listens on; empty = executor.http_bind (default 127.0.0.1)."),
    ParamSpec("token_file", "", "File holding the bearer token for POSTs other than stop; empty = device file / none."),
    ParamSpec("tick_hz", 10.0, "Control tick rate on the ROS clock [Hz] (the engine needs >= 5).",
              minimum=5.0, maximum=200.0),
    clock_mode_param("the control tick runs"),
    ParamSpec("heartbeat_hz", 10.0, "/cookwala/heartbeat rate on the steady clock [Hz].", minimum=1.0, maximum=100.0),
    ParamSpec("heartbeat_lease_s", 0.3, "Liveliness lease of /cookwala/heartbeat [s].", minimum=0.05, maximum=10.0),
    ParamSpec("presence_stale_s", 5.0, "Presence older than this [s, steady clock] counts as nobody present.",
              minimum=0.1, maximum=3600.0),
    ParamSpec("presence_default", False, "Whether a person counts as present before any /cookwala/presence message."),
    ParamSpec("disabled_sensors", "", "Comma-separated cw.sense.* ids treated as unusable (e.g. to test the ladder).",
              read_only=False),
    ParamSpec("safety_monitor_node", "", "Safety monitor that must be alive and armed before and while cooking: "
              f"empty = executor.safety_monitor_node of the device file, '{UNGUARDED}' = explicitly no monitor.",
              check=_monitor_name),
    ParamSpec("safety_status_timeout_s", DEFAULT_TIMEOUT_S, "No SafetyStatus for this long [s, steady clock] = "
              "the monitor is gone: heat cut, arm halted, execution stopped (the monitor republishes every status_period_s: 0.2 s, 0.1 s in the kitchen scene).",
              minimum=0.1, maximum=10.0),
    ParamSpec("heater_state_timeout_s", 0.5, "Heater state older than this [s, steady clock] is not controlled on: "
              "a heater fault (stale_state) stops the execution.", minimum=0.05, maximum=60.0),
    ParamSpec("joint_state_timeout_s", 0.5, "Joint states older than this [s, steady clock] = a silent arm driver: "
              "an arm fault (stale_state) stops the execution.", minimum=0.05, maximum=60.0),
    ParamSpec("heater_keepalive_s", 0.05, "While heating, the heater command is re-sent this often [s, steady clock] "
              "for the heater's dead-man timeout.", minimum=0.01, maximum=0.1),
)
