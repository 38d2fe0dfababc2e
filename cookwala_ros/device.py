"""The device file (config/device.yaml): one YAML in which an integrator describes their robot.

It is read once at node start. Every key is checked; an unknown, missing or mistyped entry raises
`DeviceConfigError` naming the key (e.g. `heaters[0].power_w: expected a number`), so a node
refuses to start rather than run with a half-understood robot. The Core capabilities document
is generated from it, never written by hand.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass, field
from typing import Any

import yaml

from cookwala_ros import CORE_VERSION
from cookwala_ros.resources import share_path


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
    "interfaces": {
        "http_url": (str, False),
        "ros2_namespace": (str, False),
        "ros2_action_server": (str, False),
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
        "presence_topic": (str, False),
        "safety_status_topic": (str, False),
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
    "interfaces": (dict, False),
    "executor": (dict, False),
}
_EMERGENCY_STOP = ("physical", "remote", "both", "none")
_TYPE_NAMES = {str: "a string", bool: "true or false", list: "a list", dict: "a mapping", _NUMBER: "a number",
               int: "an integer"}


def _check_mapping(value: Any, spec: dict[str, tuple[Any, bool]], where: str) -> dict:
    if not isinstance(value, dict):
        raise DeviceConfigError(f"{where}: expected a mapping")
    for key in value:
        if key not in spec and not str(key).startswith("x-"):
            raise DeviceConfigError(f"{where}.{key}: unknown key (expected one of {', '.join(spec)})")
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
    return value


def _check_list_of(items: list, section: str, where: str) -> list[dict]:
    return [_check_mapping(item, _SECTIONS[section], f"{where}[{i}]") for i, item in enumerate(items)]


def _check_vocab_id(value: Any, prefix: str, where: str) -> str:
    if not isinstance(value, str) or not value.startswith(prefix) or len(value) <= len(prefix):
        raise DeviceConfigError(f"{where}: expected an id starting with {prefix!r}, got {value!r}")
    return value


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


def parse_device_config(raw: Any, source: str = "<memory>") -> DeviceConfig:
    """Check a device mapping (already parsed from YAML) and return it as a DeviceConfig."""
    top = _check_mapping(raw, _TOP_LEVEL, "")
    _check_mapping(top["device"], _SECTIONS["device"], "device")
    if "arm" in top:
        _check_mapping(top["arm"], _SECTIONS["arm"], "arm")
    heaters = _check_list_of(top.get("heaters") or [], "heater", "heaters")
    for i, heater in enumerate(heaters):
        _check_vocab_id(heater["class"], "cw.eq.", f"heaters[{i}].class")
        if heater["power_w"] <= 0:
            raise DeviceConfigError(f"heaters[{i}].power_w: must be > 0, got {heater['power_w']}")
        for j, mode in enumerate(heater.get("modes") or []):
            if not isinstance(mode, str):  # a bare `off` in YAML is the boolean false
                raise DeviceConfigError(f"heaters[{i}].modes[{j}]: expected a string (quote it), got {mode!r}")
    sensors = _check_list_of(top.get("sensors") or [], "sensor", "sensors")
    for i, sensor in enumerate(sensors):
        _check_vocab_id(sensor["sensor"], "cw.sense.", f"sensors[{i}].sensor")
    ops = tuple(_check_vocab_id(op, "cw.op.", f"ops[{i}]") for i, op in enumerate(top["ops"]))
    if len(set(ops)) != len(ops):
        raise DeviceConfigError("ops: an operation is listed twice")
    safety = _check_mapping(top["safety"], _SECTIONS["safety"], "safety")
    _check_list_of(safety["certifications"], "certification", "safety.certifications")
    if safety["emergency_stop"] not in _EMERGENCY_STOP:
        raise DeviceConfigError(
            f"safety.emergency_stop: expected one of {', '.join(_EMERGENCY_STOP)}, got {safety['emergency_stop']!r}"
        )
    if "interfaces" in top:
        _check_mapping(top["interfaces"], _SECTIONS["interfaces"], "interfaces")
    equipment = _check_list_of(top.get("equipment") or [], "equipment", "equipment")
    for i, item in enumerate(equipment):
        _check_vocab_id(item["class"], "cw.eq.", f"equipment[{i}].class")
        if item.get("count") is not None and item["count"] < 1:
            raise DeviceConfigError(f"equipment[{i}].count: must be >= 1, got {item['count']}")
    if "executor" in top:
        _check_executor(_check_mapping(top["executor"], _SECTIONS["executor"], "executor"))
    return DeviceConfig(raw=top, source=source, ops=ops)


def _check_executor(section: dict) -> None:
    url = section.get("catalog_url")
    if url is not None and not (url == "" or url.startswith(("http://", "https://"))):
        raise DeviceConfigError(f"executor.catalog_url: expected an http(s) URL, got {url!r}")
    port = section.get("http_port")
    if port is not None and not 0 <= port <= 65535:
        raise DeviceConfigError(f"executor.http_port: must be 0..65535, got {port}")
    poll = section.get("recall_poll_s")
    if poll is not None and poll <= 0:
        raise DeviceConfigError(f"executor.recall_poll_s: must be > 0, got {poll}")
    for i, pack in enumerate(section.get("safety_limits") or []):
        if not isinstance(pack, str):
            raise DeviceConfigError(f"executor.safety_limits[{i}]: expected a file path (a string)")


def load_device_config(path: str | pathlib.Path | None = None) -> DeviceConfig:
    """Read and check a device file; the default is the package's config/device.yaml."""
    file = pathlib.Path(path) if path else share_path("config", "device.yaml")
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise DeviceConfigError(f"cannot read device file {file}: {exc.strerror or exc}") from exc
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise DeviceConfigError(f"{file}: not valid YAML: {exc}") from exc
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
    from cookwala_ros.core.keys import KeyFileError, parse_key_records

    path = config.resolve(name)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return parse_key_records(data, source=str(path))
    except OSError as exc:
        raise DeviceConfigError(f"executor.trusted_keys: cannot read {path}: {exc.strerror or exc}") from None
    except (KeyFileError, yaml.YAMLError) as exc:
        raise DeviceConfigError(f"executor.trusted_keys: {exc}") from None


def capabilities_document(config: DeviceConfig) -> dict:
    """The Core capabilities document (capabilities.schema.json) of the configured device."""
    raw = config.raw
    dev = raw["device"]
    doc: dict[str, Any] = {
        "cookwala": CORE_VERSION,
        "actor": {"kind": "robot", "id": dev["id"], "vendor": dev["vendor"], "model": dev["model"]},
        "roles": ["executor", "safety_monitor"],
        "location": {"mobile": False},
        "capabilities": {"ops": [{"op": op} for op in config.ops]},
    }
    if dev.get("kitchen_id"):
        doc["location"]["kitchenId"] = dev["kitchen_id"]
    if dev.get("zone"):
        doc["location"]["zone"] = dev["zone"]

    caps = doc["capabilities"]
    if raw.get("heaters"):
        caps["heat"] = []
        for heater in raw["heaters"]:
            entry = {"id": heater["id"], "class": heater["class"], "powerW": heater["power_w"]}
            if heater.get("max_temp_c") is not None:
                entry["maxTempC"] = heater["max_temp_c"]
            if heater.get("modes"):
                entry["modes"] = list(heater["modes"])
            if heater.get("closed_loop_temp") is not None:
                entry["closedLoopTemp"] = heater["closed_loop_temp"]
            entry["remoteStartAllowed"] = False
            caps["heat"].append(entry)
    if raw.get("sensors"):
        caps["sensors"] = []
        for sensor in raw["sensors"]:
            entry = {"sensor": sensor["sensor"]}
            for key, out in (("accuracy", "accuracy"), ("unit", "unit"), ("rate_hz", "rateHz")):
                if sensor.get(key) is not None:
                    entry[out] = sensor[key]
            caps["sensors"].append(entry)
    vessels = [e for e in raw.get("equipment") or [] if e["class"].startswith("cw.eq.vessel.")]
    if vessels:
        caps["vessels"] = []
        for vessel in vessels:
            entry = {"class": vessel["class"]}
            for key, out in (("capacity_ml", "capacityMl"), ("diameter_mm", "diameterMm"), ("count", "count")):
                if vessel.get(key) is not None:
                    entry[out] = vessel[key]
            caps["vessels"].append(entry)
    arm = raw.get("arm")
    if arm:
        manipulation: dict[str, Any] = {"arms": 1}
        if arm.get("payload_kg") is not None:
            manipulation["payloadKg"] = arm["payload_kg"]
        if arm.get("reach_mm") is not None:
            manipulation["reachMm"] = arm["reach_mm"]
        caps["manipulation"] = manipulation

    safety = raw["safety"]
    doc["safety"] = {
        "certifications": [
            {
                "standard": c["standard"],
                **({"body": c["body"]} if c.get("body") else {}),
                **({"certificate": c["certificate"]} if c.get("certificate") else {}),
                **({"selfDeclared": c["self_declared"]} if c.get("self_declared") is not None else {}),
            }
            for c in safety["certifications"]
        ],
        "presenceDetection": safety["presence_detection"],
        "emergencyStop": safety["emergency_stop"],
    }
    interfaces = raw.get("interfaces") or {}
    doc["interfaces"] = {}
    if interfaces.get("http_url"):
        doc["interfaces"]["cookwalaHttp"] = interfaces["http_url"]
    ros2 = {}
    if interfaces.get("ros2_namespace"):
        ros2["namespace"] = interfaces["ros2_namespace"]
    if interfaces.get("ros2_action_server"):
        ros2["actionServer"] = interfaces["ros2_action_server"]
    if ros2:
        doc["interfaces"]["ros2"] = ros2
    return doc
