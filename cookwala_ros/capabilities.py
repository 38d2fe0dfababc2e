"""The Core capabilities document of a robot, generated from its device file (never written by hand).

Its `interfaces` are only what the robot's nodes really serve (`ServedInterfaces`), so a document
never names an action or URL nobody answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cookwala_ros import CORE_VERSION
from cookwala_ros.device import DeviceConfig


@dataclass(frozen=True)
class ServedInterfaces:
    """What the robot's nodes really serve, for the capabilities' `interfaces` (all absolute)."""

    namespace: str = "/"                 # the robot's ROS namespace
    action_server: str = ""              # ExecuteRecipe action, e.g. /robot_a/executor/execute_recipe
    execute_node_action: str = ""        # ExecuteNode action
    http_url: str = ""                   # base URL of the Core HTTP API; "" = not served


def capabilities_document(config: DeviceConfig, served: ServedInterfaces | None = None) -> dict:
    """The Core capabilities document (capabilities.schema.json) of the configured device.

    `interfaces` is only what `served` says the nodes serve (none without it): a document must
    never name an action or a port nobody answers on."""
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
    doc["interfaces"] = {}
    if served is not None:
        if served.http_url:
            doc["interfaces"]["cookwalaHttp"] = served.http_url
        ros2 = {"namespace": served.namespace or "/"}
        if served.action_server:
            ros2["actionServer"] = served.action_server
        if served.execute_node_action:
            ros2["x-executeNode"] = served.execute_node_action
        doc["interfaces"]["ros2"] = ros2
    return doc
