"""What the executor service needs to know about its device, and the ports it reads the device by.

`ExecutorConfig.from_device` builds it from the device file (config/device.yaml): capabilities
document, effective SafetyLimits (device packs merged with the standard's defaults), trusted
keys, recipe library, catalog, named poses and joint names (from the URDF). Every problem is a
DeviceConfigError naming the key, raised before anything starts.
"""

from __future__ import annotations

import dataclasses
import pathlib
from dataclasses import dataclass, field
from typing import Iterable, Protocol

from cookwala_ros.core.run_types import RunConfig
from cookwala_ros.capabilities import capabilities_document
from cookwala_ros.device import DeviceConfig, DeviceConfigError, load_robot_files, load_trusted_keys

DEFAULT_DATA_DIR = "~/.local/share/cookwala_ros"
# RunConfig fields the service fills in itself (executor/service.py run_config): from the request ...
PER_EXECUTION = frozenset({"execution_id", "recipe_ref", "recipe_hash", "servings"})
# ... and from the device file; run_options may set the others
SET_FROM_DEVICE = frozenset({"altitude_m", "poses", "max_heater_power_w", "device", "limits"})


class LimitsUnknown(Exception):
    """The device's safety monitor is there to ask but did not give its limits (why in the message)."""


class DevicePorts(Protocol):
    """What the service asks the device outside the tick (the ROS node implements it)."""

    def human_present(self) -> bool:
        """A responsible person is present (from /cookwala/presence)."""

    def demoted_sensors(self) -> Iterable[str]:
        """Sensors declared in the capabilities that are not usable now (disabled, faulty)."""

    def safety_hold(self) -> str | None:
        """Why the safety monitor holds the device stopped (not armed), or None when it may cook."""

    def safety_limits(self) -> dict | None:
        """The safety monitor's effective SafetyLimits pack (tightenings included), or None when
        there is no monitor to ask; the service merges it with its own, stricter wins. Raises
        LimitsUnknown when a monitor guards the device but does not answer: its limits (perhaps
        tightened since start-up) are then unknown, and the executor's own are not enough."""

    def halt(self, stop_reason: str | None = None) -> None:
        """Cut heat and halt motion now (the safety monitor never relies on it).

        `stop_reason` is set for a stop somebody asked for (HTTP, ROS service, goal cancel): the
        device's safety monitor is asked to latch that stop as well, so it verifies standstill
        and heat off and keeps the kitchen halted until a local reset.
        """


@dataclass
class StaticPorts:
    """Ports with settable values: for tests and for hosts without presence detection."""

    present: bool = True
    demoted: set = field(default_factory=set)
    halts: int = 0
    stop_reasons: list = field(default_factory=list)
    hold: str | None = None
    limits: dict | None = None  # what the device's safety monitor enforces, if any

    def human_present(self) -> bool:
        return self.present

    def demoted_sensors(self) -> Iterable[str]:
        return set(self.demoted)

    def safety_hold(self) -> str | None:
        return self.hold

    def safety_limits(self) -> dict | None:
        return self.limits

    def halt(self, stop_reason: str | None = None) -> None:
        self.halts += 1
        if stop_reason is not None:
            self.stop_reasons.append(stop_reason)


def data_dir_of(device: DeviceConfig, data_dir: str | pathlib.Path | None = None) -> pathlib.Path:
    """The executor's data folder: `data_dir`, else the device file's executor.data_dir."""
    return pathlib.Path(data_dir or device.executor.get("data_dir") or DEFAULT_DATA_DIR).expanduser()


def library_dir_of(device: DeviceConfig, data_dir: str | pathlib.Path | None = None) -> pathlib.Path:
    """The recipe library the executor cooks from (decision 5): the device file's
    executor.recipe_library, else <data dir>/recipes. Others that read the same recipes (the
    simulated kitchen's pot_sim) find them here too."""
    library = device.executor.get("recipe_library")
    return device.resolve(library) if library else data_dir_of(device, data_dir) / "recipes"


@dataclass
class ExecutorConfig:
    data_dir: pathlib.Path
    capabilities: dict
    device_id: str = "cwros:device"
    library_dir: pathlib.Path | None = None  # default: <data_dir>/recipes
    limits: dict | None = None  # effective SafetyLimits pack; None = the standard's defaults
    trusted_keys: list = field(default_factory=list)
    require_signed_recipes: bool = False
    catalog_url: str = ""
    recall_poll_s: float = 300.0
    altitude_m: float = 0.0
    poses: dict = field(default_factory=dict)  # name -> {joint: rad}
    joint_names: tuple = ()
    max_heater_power_w: float = 2000.0
    heartbeat_interval_s: float = 1.0
    status_interval_s: float = 5.0  # readings refresh the stored status (a new seq) at most this often
    run_options: dict = field(default_factory=dict)  # engine RunConfig fields the device does not set

    def __post_init__(self) -> None:
        known = {f.name for f in dataclasses.fields(RunConfig)} - PER_EXECUTION - SET_FROM_DEVICE
        unknown = sorted(set(self.run_options) - known)
        if unknown:
            raise ValueError(f"run_options: {', '.join(map(repr, unknown))} is not an engine option this "
                             f"executor lets you set; choose from {', '.join(sorted(known))}")
        self.data_dir = pathlib.Path(self.data_dir).expanduser()
        if self.library_dir is None:
            self.library_dir = self.data_dir / "recipes"
        self.library_dir = pathlib.Path(self.library_dir).expanduser()

    @property
    def device_info(self) -> dict:
        actor = self.capabilities.get("actor") or {}
        info = {"vendor": actor.get("vendor", "unknown"), "model": actor.get("model", "unknown")}
        if self.limits and self.limits.get("id"):
            info["safetyLimits"] = f"{self.limits['id']}@{self.limits.get('version', '0')}"
        return info

    @classmethod
    def from_device(cls, device: DeviceConfig, data_dir: str | pathlib.Path | None = None,
                    **overrides) -> "ExecutorConfig":
        section = device.executor
        data = data_dir_of(device, data_dir)
        library = section.get("recipe_library") or None
        robot = load_robot_files(device)
        limits = effective_limits(device)
        heaters = device.raw.get("heaters") or []
        values = dict(
            data_dir=pathlib.Path(data).expanduser(),
            capabilities=capabilities_document(device),
            device_id=device.device_id,
            library_dir=device.resolve(library) if library else None,
            limits=limits,
            trusted_keys=load_trusted_keys(device),
            require_signed_recipes=bool(section.get("require_signed_recipes", False)),
            catalog_url=section.get("catalog_url") or "",
            recall_poll_s=float(section.get("recall_poll_s") or 300.0),
            altitude_m=device.altitude_m,
            poses=robot.poses if robot else {},
            joint_names=robot.joint_names if robot else (),
            max_heater_power_w=float(heaters[0]["power_w"]) if heaters else 0.0,
        )
        unknown = set(overrides) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise TypeError(f"unknown ExecutorConfig fields: {', '.join(sorted(unknown))}")
        values.update(overrides)
        return cls(**values)


def effective_limits(device: DeviceConfig) -> dict | None:
    """The device file's packs (`safety_limits`, shared with the safety monitor) merged with the
    standard's defaults; None when the file names none."""
    paths = device.safety_pack_paths()  # DeviceConfigError names a missing file's entry
    if not paths:
        return None
    from cookwala_ros.safety.packs import PackError, load_effective_pack

    try:
        return load_effective_pack(paths, pack_id=f"{device.device_id}-effective")
    except PackError as exc:
        raise DeviceConfigError(f"safety_limits: {exc}") from None
