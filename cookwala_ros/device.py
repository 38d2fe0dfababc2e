"""The device file (config/device.yaml): one YAML in which an integrator describes their robot.

It is read once at node start. Every key is checked; an unknown, missing or mistyped entry raises
`DeviceConfigError` naming the key (e.g. `heaters[0].power_w: expected a number`), so a node
refuses to start rather than run with a half-understood robot. Op, sensor, heater and equipment
ids must be in the vocabulary (the message names the nearest one), heater modes the ones the
nodes command, sensor units of the sensor's quantity, numbers finite and in range. The Core
capabilities document is generated from it (`capabilities.py`), never written by hand.
"""

from __future__ import annotations

import difflib
import ipaddress
import math
import pathlib
import re
import reprlib
from dataclasses import dataclass, field
from typing import Any

import yaml

from cookwala_ros.core import units, vocab, yaml_limits
from cookwala_ros.core.run_types import HeatMode
from cookwala_ros.resources import share_path
from cookwala_ros.ros import names  # the name table (plain strings, no rclpy)


class DeviceConfigError(ValueError):
    """A device file entry is missing, unknown or has the wrong type; the message names the key."""


# --- a tiny declarative checker: {key: (type, required)} per section ----------------------------

_NUMBER = (int, float)
_SECTIONS: dict[str, dict[str, tuple[Any, bool]]] = {
    "device": {
        "id": (str, True),
        "vendor": (str, True),
        "model": (str, True),
        "kitchen_id": (str, False),
        "zone": (str, False),
        "altitude_m": (_NUMBER, False),
    },
    "arm": {
        "trajectory_topic": (str, True),
        "follow_joint_trajectory_action": (str, False),
        "joint_states_topic": (str, True),
        "robot_description": (str, True),
        "poses": (str, True),
        "payload_kg": (_NUMBER, False),
        "reach_mm": (_NUMBER, False),
    },
    "heater": {
        "id": (str, True),
        "class": (str, True),
        "command_topic": (str, True),
        "state_topic": (str, True),
        "power_w": (_NUMBER, True),
        "max_temp_c": (_NUMBER, False),
        "closed_loop_temp": (bool, False),
        "modes": (list, False),
    },
    "sensor": {
        "sensor": (str, True),
        "unit": (str, False),
        "accuracy": (_NUMBER, False),
        "rate_hz": (_NUMBER, False),
    },
    "certification": {
        "standard": (str, True),
        "body": (str, False),
        "certificate": (str, False),
        "self_declared": (bool, False),
    },
    "safety": {
        "certifications": (list, True),
        "presence_detection": (bool, True),
        "emergency_stop": (str, True),
    },
    "safety_monitor": {
        # monitor-only settings (ros/safety_monitor_params.py documents each); a node parameter
        # the scene passes wins over the file
        "estop_topic": (str, False),
        "executor_node": (str, False),
        "executor_start_grace_s": (_NUMBER, False),
        "state_dir": (str, False),
        "autostart": (bool, False),
        "activation_timeout_s": (_NUMBER, False),
        "standstill_velocity": (_NUMBER, False),
        "heat_off_power_w": (_NUMBER, False),
        "heat_deadline_s": (_NUMBER, False),
        "heater_state_timeout_s": (_NUMBER, False),
        "joint_state_timeout_s": (_NUMBER, False),
        "heartbeat_lease_s": (_NUMBER, False),
        "presence_stale_s": (_NUMBER, False),
        "position_margin": (_NUMBER, False),
        "velocity_tolerance": (_NUMBER, False),
        "workspace_min": (list, False),
        "workspace_max": (list, False),
        "check_period_s": (_NUMBER, False),
        "recommand_period_s": (_NUMBER, False),
        "status_period_s": (_NUMBER, False),
        "realtime_priority": (int, False),
    },
    "equipment": {
        "class": (str, True),
        "id": (str, False),
        "count": (int, False),
        "capacity_ml": (_NUMBER, False),
        "diameter_mm": (_NUMBER, False),
    },
    "executor": {
        "data_dir": (str, False),
        "recipe_library": (str, False),
        "catalog_url": (str, False),
        "recall_poll_s": (_NUMBER, False),
        "trusted_keys": (str, False),
        "require_signed_recipes": (bool, False),
        "safety_limits": (list, False),
        "safety_monitor_node": (str, False),
        "http_bind": (str, False),
        "http_port": (int, False),
        "token_file": (str, False),
    },
}
_TOP_LEVEL = {
    "device": (dict, True),
    "arm": (dict, False),
    "heaters": (list, False),
    "sensors": (list, False),
    "equipment": (list, False),
    "ops": (list, True),
    "safety": (dict, True),
    "safety_limits": (list, False),
    "executor": (dict, False),
    "safety_monitor": (dict, False),
}
# Bounds of numbers, per section: (lowest, highest, lowest excluded); None = unbounded. A number
# the type check lets through can still be a power of 0 W or a sensor read never.
_LIMITS: dict[str, dict[str, tuple[float | None, float | None, bool]]] = {
    "device": {"altitude_m": (-500, 9000, False)},  # the range the thermal model takes (sim/thermal_model.py)
    "arm": {"payload_kg": (0, None, False), "reach_mm": (0, None, True)},
    "heater": {"power_w": (0, None, True), "max_temp_c": (0, None, True)},
    "sensor": {"accuracy": (0, None, False), "rate_hz": (0, None, True)},
    "equipment": {"count": (1, None, False), "capacity_ml": (0, None, True), "diameter_mm": (0, None, True)},
    "executor": {"recall_poll_s": (0, None, True), "http_port": (0, 65535, False)},
}
_EMERGENCY_STOP = ("physical", "remote", "both", "none")
_TYPE_NAMES = {str: "a string", bool: "true or false", list: "a list", dict: "a mapping", _NUMBER: "a number",
               int: "an integer"}


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 80
_REPR.maxlist = _REPR.maxdict = 4
_REPR.maxlevel = 2


def _shown(value: Any) -> str:
    """A value for a message: bounded, so a 1 MB string or a YAML alias bomb stays one short line."""
    return _REPR.repr(value)


def _key(key: Any) -> str:
    return key if isinstance(key, str) and key.isprintable() and len(key) <= 80 else _shown(key)


def _check_mapping(value: Any, spec: dict[str, tuple[Any, bool]], where: str,
                   limits: dict[str, tuple[float | None, float | None, bool]] | None = None) -> dict:
    if not isinstance(value, dict):
        raise DeviceConfigError(f"{where}: expected a mapping" if where else
                                f"expected a mapping of sections (device, ops, safety, ...), got {type(value).__name__}")
    for key in value:
        if key not in spec and not str(key).startswith("x-"):
            path = f"{where}.{_key(key)}" if where else _key(key)
            raise DeviceConfigError(f"{path}: unknown key (expected one of {', '.join(spec)})")
    for key, (kind, required) in spec.items():
        path = f"{where}.{key}" if where else key
        if key not in value or value[key] is None:
            if required:
                raise DeviceConfigError(f"{path}: missing")
            continue
        item = value[key]
        # bool is an int in Python; a number field must not accept true/false.
        if kind in (_NUMBER, int) and isinstance(item, bool) or not isinstance(item, kind):
            raise DeviceConfigError(f"{path}: expected {_TYPE_NAMES[kind]}, got {type(item).__name__}")
        if isinstance(item, float) and not math.isfinite(item):  # YAML's .nan and .inf
            raise DeviceConfigError(f"{path}: expected a finite number, got {item}")
        if limits and key in limits:
            _check_bounds(item, *limits[key], path)
    return value


def _check_bounds(value: float, low: float | None, high: float | None, low_excluded: bool, where: str) -> None:
    if high is not None:
        if not low <= value <= high:
            raise DeviceConfigError(f"{where}: must be {low}..{high}, got {value}")
    elif value < low or low_excluded and value == low:
        raise DeviceConfigError(f"{where}: must be {'>' if low_excluded else '>='} {low}, got {value}")


def _check_section(value: Any, section: str, where: str) -> dict:
    return _check_mapping(value, _SECTIONS[section], where, _LIMITS.get(section))


def _check_list_of(items: list, section: str, where: str) -> list[dict]:
    return [_check_section(item, section, f"{where}[{i}]") for i, item in enumerate(items)]


def _check_vocab_id(value: Any, prefix: str, where: str) -> str:
    if not isinstance(value, str) or not value.startswith(prefix) or len(value) <= len(prefix):
        raise DeviceConfigError(f"{where}: expected an id starting with {prefix!r}, got {_shown(value)}")
    return value


def _vocabulary(kind: str) -> tuple[str, frozenset[str], frozenset[str]]:
    """What the message calls a `kind` of id, the ids accepted and the ids a near match is drawn
    from: a sensor alias is accepted but never suggested; a heater must be a heat source."""
    if kind == "op":
        ops = frozenset(vocab.operations())
        return "an op", ops, ops
    if kind == "sensor":
        return "a sensor", vocab.sensor_ids() | frozenset(vocab.sensor_aliases()), vocab.sensor_ids()
    if kind == "heater class":
        return "a heater class", vocab.heat_source_classes(), vocab.heat_source_classes()
    return "an equipment class", vocab.equipment_classes(), vocab.equipment_classes()


EQUIPMENT_FAMILIES = frozenset({"cold", "heat", "sensor", "tool", "vessel"})  # cw.eq.<family>.…
NEAR_MISS = 0.85  # difflib ratio from which an unknown class reads as a misspelling of a known one


def _known_class(value: str, known: frozenset[str]) -> bool:
    """A known class or a narrower one (`cw.eq.heat.hob.induction` is a hob: equipment matching
    is by prefix, core/dryrun.py)."""
    return value in known or any(value.startswith(k + ".") for k in known)


def _plausible_equipment(value: str, known: frozenset[str]) -> bool:
    """The standard lists no closed set of equipment: a tool or vessel it never names (a wok) is
    accepted in a known family, unless it is a near miss of a class it does name. Heat sources
    are a closed set: they decide how a step is heated."""
    parts = value.split(".")
    if len(parts) < 4 or parts[2] not in EQUIPMENT_FAMILIES or parts[2] == "heat":
        return False
    return not difflib.get_close_matches(value, sorted(known), n=1, cutoff=NEAR_MISS)


def _check_known(value: str, kind: str, where: str) -> str:
    """A misspelt id would silently change who does and verifies each step, or what the robot
    says it has: it must be in the vocabulary, and the message names the nearest id."""
    name, accepted, suggested = _vocabulary(kind)
    if kind in ("heater class", "equipment class") and _known_class(value, accepted):
        return value
    if kind == "equipment class" and _plausible_equipment(value, accepted):
        return value
    if value not in accepted:
        near = difflib.get_close_matches(value, sorted(suggested), n=1)
        raise DeviceConfigError(f"{where}: {_shown(value)} is not {name} of the vocabulary"
                                + (f" (did you mean {near[0]!r}?)" if near else ""))
    return value


def _check_id(value: Any, prefix: str, kind: str, where: str) -> str:
    """A vocabulary id: the prefix first (a bare `simmer` is told so), then a known id."""
    return _check_known(_check_vocab_id(value, prefix, where), kind, where)


@dataclass(frozen=True)
class DeviceConfig:
    """The checked device file. `raw` keeps the mapping for sections later readers add."""

    raw: dict
    source: str = "<memory>"
    ops: tuple[str, ...] = field(default=())

    @property
    def device_id(self) -> str:
        return self.raw["device"]["id"]

    @property
    def altitude_m(self) -> float:
        return float(self.raw["device"].get("altitude_m") or 0.0)

    @property
    def executor(self) -> dict:
        """The `executor:` section (data dir, catalog, keys, HTTP); {} when absent."""
        return dict(self.raw.get("executor") or {})

    @property
    def safety_monitor(self) -> dict:
        """The `safety_monitor:` section (monitor-only settings); {} when absent."""
        return dict(self.raw.get("safety_monitor") or {})

    @property
    def names(self) -> "RobotNames":
        """The per-robot topics the file names (relative = in the robot's namespace)."""
        arm = self.raw.get("arm") or {}
        heater = (self.raw.get("heaters") or [{}])[0]
        return RobotNames(
            arm_trajectory=arm.get("trajectory_topic") or _DEFAULT_NAMES.arm_trajectory,
            arm_follow_joint_trajectory=(arm.get("follow_joint_trajectory_action")
                                         or _DEFAULT_NAMES.arm_follow_joint_trajectory),
            joint_states=arm.get("joint_states_topic") or _DEFAULT_NAMES.joint_states,
            heater_command=heater.get("command_topic") or _DEFAULT_NAMES.heater_command,
            heater_state=heater.get("state_topic") or _DEFAULT_NAMES.heater_state,
            estop=self.safety_monitor.get("estop_topic") or _DEFAULT_NAMES.estop,
        )

    def safety_pack_paths(self) -> list[pathlib.Path]:
        """The SafetyLimits pack files (`safety_limits`, or the older `executor.safety_limits`),
        resolved; raises DeviceConfigError naming the entry of a missing file."""
        old = self.executor.get("safety_limits")
        key, packs = ("executor.safety_limits", old) if old is not None else ("safety_limits", self.raw.get("safety_limits"))
        paths = []
        for i, name in enumerate(packs or []):
            path = self.resolve(name)
            if not path.is_file():
                raise DeviceConfigError(f"{key}[{i}]: no such file {path}")
            paths.append(path)
        return paths

    def resolve(self, path: str) -> pathlib.Path:
        """A path named in the file: absolute, else next to the device file, else in the share dir
        (`package://x/y` always means the share dir)."""
        if path.startswith("package://"):
            return share_path(*path[len("package://"):].split("/"))
        candidate = pathlib.Path(path).expanduser()
        if candidate.is_absolute():
            return candidate
        if self.source != "<memory>":
            beside = pathlib.Path(self.source).parent / candidate
            if beside.exists():
                return beside
        return share_path(*candidate.parts)


@dataclass(frozen=True)
class RobotNames:
    """A robot's per-robot topic and action names (defaults: ros/names.py, the simulated kitchen)."""

    arm_trajectory: str = names.ARM_TRAJECTORY
    arm_follow_joint_trajectory: str = names.ARM_FOLLOW_JOINT_TRAJECTORY
    joint_states: str = names.JOINT_STATES
    heater_command: str = names.HEATER_COMMAND
    heater_state: str = names.HEATER_STATE
    estop: str = names.ESTOP  # the kitchen's button unless the file names the robot's own


_DEFAULT_NAMES = RobotNames()


def parse_device_config(raw: Any, source: str = "<memory>") -> DeviceConfig:
    """Check a device mapping (already parsed from YAML) and return it as a DeviceConfig."""
    if isinstance(raw, dict) and "interfaces" in raw:
        raise DeviceConfigError("interfaces: no longer written by hand; the capabilities' interfaces are the "
                                "names the nodes really serve (remove the section)")
    top = _check_mapping(raw, _TOP_LEVEL, "")
    _check_section(top["device"], "device", "device")
    if "arm" in top:
        _check_section(top["arm"], "arm", "arm")
    heaters = _check_list_of(top.get("heaters") or [], "heater", "heaters")
    for i, heater in enumerate(heaters):
        _check_id(heater["class"], "cw.eq.", "heater class", f"heaters[{i}].class")
        for j, mode in enumerate(heater.get("modes") or []):
            _check_mode(mode, f"heaters[{i}].modes[{j}]")
    sensors = _check_list_of(top.get("sensors") or [], "sensor", "sensors")
    for i, sensor in enumerate(sensors):
        _check_id(sensor["sensor"], "cw.sense.", "sensor", f"sensors[{i}].sensor")
        if sensor.get("unit") is not None:
            _check_sensor_unit(sensor["sensor"], sensor["unit"], f"sensors[{i}].unit")
    ops = tuple(_check_id(op, "cw.op.", "op", f"ops[{i}]") for i, op in enumerate(top["ops"]))
    if len(set(ops)) != len(ops):
        raise DeviceConfigError("ops: an operation is listed twice")
    safety = _check_section(top["safety"], "safety", "safety")
    _check_list_of(safety["certifications"], "certification", "safety.certifications")
    if safety["emergency_stop"] not in _EMERGENCY_STOP:
        raise DeviceConfigError(
            f"safety.emergency_stop: expected one of {', '.join(_EMERGENCY_STOP)}, got {_shown(safety['emergency_stop'])}"
        )
    equipment = _check_list_of(top.get("equipment") or [], "equipment", "equipment")
    for i, item in enumerate(equipment):
        _check_id(item["class"], "cw.eq.", "equipment class", f"equipment[{i}].class")
    if "executor" in top:
        _check_executor(_check_section(top["executor"], "executor", "executor"))
    _check_packs(top)
    if "safety_monitor" in top:
        # lists (workspace corners) are checked by the monitor's parameter table, naming the key
        _check_section(top["safety_monitor"], "safety_monitor", "safety_monitor")
    _check_names(top)
    return DeviceConfig(raw=top, source=source, ops=ops)


def _check_sensor_unit(sensor: str, unit: str, where: str) -> None:
    """A unit of another quantity (`g` on a thermometer) would be read as that quantity."""
    if unit not in units.WIRE_UNITS:
        raise DeviceConfigError(f"{where}: {_shown(unit)} is not a unit of the standard "
                                f"(one of {', '.join(sorted(units.WIRE_UNITS))})")
    quantity = vocab.sensor_quantity(sensor)
    if quantity is None:
        raise DeviceConfigError(f"{where}: {sensor} has no unit in the standard (leave unit out), got {_shown(unit)}")
    if units.dimension(unit) != quantity:
        fits = sorted(u for u in units.WIRE_UNITS if units.dimension(u) == quantity)
        raise DeviceConfigError(f"{where}: {_shown(unit)} is not a unit of {quantity}, which {sensor} measures "
                                f"(one of {', '.join(fits)})")


_HEAT_MODES = tuple(m.value for m in HeatMode)


def _check_mode(mode: Any, where: str) -> None:
    """A mode the nodes cannot command would be promised in the capabilities and never used."""
    if not isinstance(mode, str):  # a bare `off` in YAML is the boolean false
        raise DeviceConfigError(f"{where}: expected a string (quote it), got {_shown(mode)}")
    if mode not in _HEAT_MODES:
        near = difflib.get_close_matches(mode, _HEAT_MODES, n=1)
        raise DeviceConfigError(f"{where}: {_shown(mode)} is not a heater mode (one of {', '.join(_HEAT_MODES)})"
                                + (f"; did you mean {near[0]!r}?" if near else ""))


def _check_packs(top: dict) -> None:
    """The SafetyLimits packs are named once, in `safety_limits` (read by the executor and the
    safety monitor); `executor.safety_limits` is the older spelling."""
    old = (top.get("executor") or {}).get("safety_limits")
    if old is not None and top.get("safety_limits") is not None:
        raise DeviceConfigError("executor.safety_limits: the packs are named once, in safety_limits; remove this one")
    where = "executor.safety_limits" if old is not None else "safety_limits"
    for i, pack in enumerate((old if old is not None else top.get("safety_limits")) or []):
        if not isinstance(pack, str):
            raise DeviceConfigError(f"{where}[{i}]: expected a file path (a string)")


_ROS_NAME = re.compile(r"^/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")


def _check_names(top: dict) -> None:
    """Topic, action and node names: relative (in the robot's namespace) or absolute ROS names."""
    fields = [("arm", k) for k in ("trajectory_topic", "follow_joint_trajectory_action", "joint_states_topic")]
    fields += [("executor", "safety_monitor_node"), ("safety_monitor", "estop_topic"),
               ("safety_monitor", "executor_node")]
    items = [(f"{section}.{key}", (top.get(section) or {}).get(key)) for section, key in fields]
    for i, heater in enumerate(top.get("heaters") or []):
        items += [(f"heaters[{i}].{key}", heater.get(key)) for key in ("command_topic", "state_topic")]
    for where, value in items:
        if value and not _ROS_NAME.match(value):
            raise DeviceConfigError(f"{where}: {_shown(value)} is not a ROS name (e.g. heater/command or /cookwala/estop)")


def _check_executor(section: dict) -> None:
    url = section.get("catalog_url")
    if url is not None and not (url == "" or url.startswith(("http://", "https://"))):
        raise DeviceConfigError(f"executor.catalog_url: expected an http(s) URL, got {_shown(url)}")
    bind = section.get("http_bind")
    if bind and not _is_host(bind):
        hint = "; the port goes in executor.http_port" if ":" in bind else ""
        raise DeviceConfigError(f"executor.http_bind: {_shown(bind)} is not an IP address or host name "
                                f"(e.g. 127.0.0.1, 0.0.0.0, ::1, localhost){hint}")


_HOST_LABEL = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")


def _is_host(value: str) -> bool:
    """What the HTTP server can listen on: an IP address, or a host name whose last label is not
    all digits (`999.1.1.1` is a wrong address, not a name; RFC 3696 §2)."""
    try:
        ipaddress.ip_address(value)
        return True
    except ValueError:
        pass
    labels = value.split(".")
    return (len(value) <= 253 and all(_HOST_LABEL.match(label) for label in labels)
            and not labels[-1].isdigit())


MAX_FILE_BYTES = 1 << 20  # a device file is a few KB; more is not one


def load_device_config(path: str | pathlib.Path | None = None) -> DeviceConfig:
    """Read and check a device file; the default is the package's config/device.yaml. Every
    failure is one DeviceConfigError naming the file: a node stops with it, not a traceback."""
    file = pathlib.Path(path) if path else share_path("config", "device.yaml")
    try:
        with file.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise DeviceConfigError(f"cannot read device file {file}: {exc.strerror or exc}") from exc
    if len(data) > MAX_FILE_BYTES:
        raise DeviceConfigError(f"{file}: larger than {MAX_FILE_BYTES} bytes; not a device file")
    try:
        raw = yaml_limits.loads(data)  # bounded depth (aliases too), UTF-8 checked, one-line errors
    except yaml_limits.YamlInputError as exc:
        raise DeviceConfigError(f"{file}: {exc}") from None
    try:
        return parse_device_config(raw, source=str(file))
    except DeviceConfigError as exc:
        raise DeviceConfigError(f"{file}: {exc}") from None


@dataclass(frozen=True)
class RobotFiles:
    """The arm as the device file describes it: joint names from the URDF and the named poses."""

    joint_names: tuple[str, ...]
    poses: dict


def load_robot_files(config: DeviceConfig) -> RobotFiles | None:
    """Load and cross-check the URDF and the poses file named under `arm:` (None without an arm).

    Raises DeviceConfigError naming `arm.robot_description` or `arm.poses` when a file is missing,
    unreadable, or a pose does not name exactly the URDF's actuated joints."""
    arm = config.raw.get("arm")
    if not arm:
        return None
    from cookwala_ros.robot.description import RobotDescriptionError, load_arm, load_poses

    urdf = config.resolve(arm["robot_description"])
    try:
        description = load_arm(urdf)
    except (RobotDescriptionError, ValueError, OSError) as exc:
        raise DeviceConfigError(f"arm.robot_description: {exc}") from None
    poses_file = config.resolve(arm["poses"])
    if not poses_file.is_file():
        raise DeviceConfigError(f"arm.poses: no such file {poses_file}")
    try:
        poses = load_poses(poses_file, description)
    except (RobotDescriptionError, ValueError, OSError, yaml.YAMLError) as exc:
        raise DeviceConfigError(f"arm.poses: {exc}") from None
    return RobotFiles(joint_names=tuple(description.joint_names), poses=poses)


def load_trusted_keys(config: DeviceConfig) -> list[dict]:
    """KeyRecords from `executor.trusted_keys` (JSON or YAML); [] when not configured."""
    name = config.executor.get("trusted_keys")
    if not name:
        return []
    from cookwala_ros.core.keys import KeyFileError, parse_key_file

    path = config.resolve(name)
    try:
        return parse_key_file(path.read_bytes(), source=str(path))  # bounded depth, UTF-8 checked
    except OSError as exc:
        raise DeviceConfigError(f"executor.trusted_keys: cannot read {path}: {exc.strerror or exc}") from None
    except KeyFileError as exc:
        raise DeviceConfigError(f"executor.trusted_keys: {exc}") from None
