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
}
_TOP_LEVEL = {
    "device": (dict, True),
    "arm": (dict, False),
    "heaters": (list, False),
    "sensors": (list, False),
    "ops": (list, True),
    "safety": (dict, True),
    "interfaces": (dict, False),
}
_EMERGENCY_STOP = ("physical", "remote", "both", "none")
_TYPE_NAMES = {str: "a string", bool: "true or false", list: "a list", dict: "a mapping", _NUMBER: "a number"}


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
        if kind is _NUMBER and isinstance(item, bool) or not isinstance(item, kind):
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
    return DeviceConfig(raw=top, source=source, ops=ops)


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
