"""The safety monitor's parameters (one table, with descriptors and checks) and the arguments of
its stop-input companion node.

A bad value stops the node before it advertises anything, with one line naming the parameter
(`cookwala_ros.ros.params`). The companion node takes no global arguments: a `__node:=` remap
must not give it the monitor's name, and `use_sim_time` must not subscribe it to /clock. It does
take the command line's topic remaps, so `-r /cookwala/estop:=...` still reaches the stop inputs.
"""

from __future__ import annotations

import math
import os
import re

from cookwala_ros.ros.params import ParamSpec

_NODE_NAME = re.compile(r"^/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")


def _numbers(count: int):
    def check(value) -> str | None:
        if len(value) != count or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                          and math.isfinite(v) for v in value):
            return f"must be {count} finite numbers, got {value!r}"
        return None
    return check


def _node_name(value: str) -> str | None:
    if value and not _NODE_NAME.match(value):
        return f"must be empty or a node name such as executor (in the monitor's namespace) or /executor, got {value!r}"
    return None


def _state_dir(value: str) -> str | None:
    if not value:
        return None
    value = os.path.expanduser(value)  # the scene passes ~ literally (no shell)
    try:
        os.makedirs(value, exist_ok=True)
    except OSError as exc:
        return f"cannot create directory {value!r}: {exc.strerror or exc}"
    if not os.access(value, os.W_OK | os.X_OK):
        return f"directory {value!r} is not writable"
    return None


def _positive(name: str, default: float, description: str, maximum: float | None = None) -> ParamSpec:
    return ParamSpec(name, default, description, minimum=0.0, exclusive_minimum=True, maximum=maximum)


SPECS: tuple[ParamSpec, ...] = (
    ParamSpec("device_file", "", "The robot's device file (YAML); empty = the package's config/device.yaml. Topics, "
              "device id, URDF and packs come from it, the other parameters' defaults from its safety_monitor: "
              "section; a parameter given to the node wins."),
    ParamSpec("device_id", "sim-kitchen", "Device id used in events and diagnostics (default: device.id of the device file)."),
    ParamSpec("device_packs", ["package://config/safety/device-pack.json"],
              "SafetyLimits pack files (JSON/YAML) merged with the standard's defaults, stricter wins (default: the "
              "device file's safety_limits)."),
    ParamSpec("urdf_path", "", "Robot description for joint limits and the workspace check; empty = packaged arm "
              "(default: arm.robot_description of the device file)."),
    _positive("activation_timeout_s", 10.0, "Once active, an error is logged if the arm and heater controllers "
              "have not matched the halt topics and no heater state has come within this [s]; the monitor stays "
              "unarmed until they have (it keeps waiting)."),
    ParamSpec("autostart", True, "Configure and activate at start-up instead of waiting for a lifecycle manager "
              "(change_state/get_state services)."),
    _positive("standstill_velocity", 0.01, "All |joint velocity| below this [rad/s] is standstill."),
    ParamSpec("heat_off_power_w", 1.0, "Heater power at or below this [W] is heat off.", minimum=0.0),
    _positive("heat_deadline_s", 1.0, "Heat must be off this long after a trigger (<= 1 s, CORE §6.2).", maximum=1.0),
    _positive("heater_state_timeout_s", 0.5, "Heater state older than this cuts heat."),
    _positive("joint_state_timeout_s", 0.5,
              "Joint states older than this [s, steady clock; from activation if none yet] mean a dead arm "
              "driver: stop."),
    _positive("heartbeat_lease_s", 0.3,
              "Executor heartbeat liveliness lease; heat or motion without a live heartbeat for longer "
              "(including none ever) stops."),
    ParamSpec("executor_node", "", "Name of the executor node the monitor expects (relative = in the monitor's "
              "namespace, e.g. executor): in the ROS graph without a heartbeat within executor_start_grace_s, or gone before "
              "its first one, stops. Empty = none expected.", check=_node_name),
    _positive("executor_start_grace_s", 5.0, "How long the expected executor may be in the ROS graph before its "
              "first heartbeat [s]."),
    ParamSpec("state_dir", "", "Directory of the persisted latch (a stop survives a restart until a local "
              "reset). Empty = latched stops are not persisted.", check=_state_dir),
    _positive("presence_stale_s", 5.0, "Presence readings older than this count as nobody present."),
    ParamSpec("position_margin", 0.02, "Joint position tolerance beyond the URDF limits [rad].", minimum=0.0),
    _positive("velocity_tolerance", 1.05, "Factor on the URDF velocity limits before a joint counts as too fast."),
    ParamSpec("workspace_min", [-0.6, -0.9, 0.91], "Tool workspace box lower corner, URDF root frame [m].",
              check=_numbers(3)),
    ParamSpec("workspace_max", [1.1, 0.9, 2.1], "Tool workspace box upper corner, URDF root frame [m].",
              check=_numbers(3)),
    _positive("check_period_s", 0.05, "Period of the heartbeat/staleness/deadline check."),
    _positive("recommand_period_s", 0.1, "While stopped or in fault the halt is re-sent this often."),
    _positive("status_period_s", 0.2, "SafetyStatus is published on every change and at this period."),
    ParamSpec("realtime_priority", 0, "SCHED_FIFO priority the monitor asks for, all its threads (1-99, e.g. 50; "
              "where refused, the lowest nice allowed; memory locked); 0 = normal scheduling. See ros/realtime.py.",
              minimum=0, maximum=99),
)

# name -> (default, description), as before the specs existed
PARAMETERS = {spec.name: (spec.default, spec.description) for spec in SPECS}


def stop_input_args(argv: list[str] | None) -> list[str]:
    """The topic/service remaps of a command line, as node-local arguments for the companion node.

    Remaps of the node's own name or namespace (`__node`, `__ns`, `__name`) and every parameter
    are left out.
    """
    out: list[str] = []
    tokens = list(argv or [])
    inside = False
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "--ros-args":
            inside = True
        elif token == "--":
            inside = False
        elif inside and token in ("-r", "--remap") and i + 1 < len(tokens):
            rule = tokens[i + 1]
            lhs = rule.split(":=", 1)[0]
            if not lhs.rsplit(":", 1)[-1].startswith("__") and ":" not in lhs.replace(":=", ""):
                out += ["-r", rule]
            i += 1
        i += 1
    return ["--ros-args", *out] if out else []
