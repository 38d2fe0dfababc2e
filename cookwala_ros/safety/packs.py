"""The device's effective SafetyLimits pack: device packs merged with the standard's defaults.

Loading and checking happen once, when the monitor is configured; a pack that does not pass is
a configuration error naming the file and the JSON pointer. The merge itself (stricter wins) is
`cookwala_ros.core.limits.merge_packs`; the standard's defaults always take part, so a device
pack can only tighten them.
"""

from __future__ import annotations

import pathlib
from typing import Iterable

from cookwala_ros.core import json_limits, yaml_limits
from cookwala_ros.core import limits as core_limits
from cookwala_ros.safety.quantities import QuantityError, dimension, duration_s
from cookwala_ros.safety.strictness import ACTION_EFFECTS


# kinds whose bounds have one physical dimension (the unit must be of it)
KIND_DIMENSION = {"max_temp": "temperature", "min_core_temp": "temperature", "pressure": "pressure", "stop": "time"}


class PackError(ValueError):
    """A SafetyLimits pack the monitor cannot enforce."""


def read_pack(path: str | pathlib.Path) -> dict:
    """A pack from a .json or .yaml file; PackError names the file when it cannot be read.

    Bounded parsers (depth, number size): a hostile pack is a refusal, never a RecursionError."""
    path = pathlib.Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PackError(f"{path}: cannot read a SafetyLimits pack ({exc.strerror or exc})") from None
    try:
        data = yaml_limits.loads(raw) if path.suffix in (".yaml", ".yml") else json_limits.loads(raw)
    except ValueError as exc:  # JsonInputError, YamlInputError
        raise PackError(f"{path}: cannot read a SafetyLimits pack: {exc}") from None
    if not isinstance(data, dict):
        raise PackError(f"{path}: a SafetyLimits pack must be an object at the top level")
    return data


def _schema_issues(pack: dict) -> list[str]:
    try:
        from cookwala_ros.core.schemas import validate
    except ImportError:  # schema set not installed: the structural checks below still run
        return []
    return [str(issue) for issue in validate(pack, "SafetyLimits")]


def check_pack(pack: object, where: str) -> dict:
    """Schema check plus what the monitor needs to enforce a pack; returns the pack."""
    if not isinstance(pack, dict):
        raise PackError(f"{where}: a SafetyLimits pack must be a JSON object")
    issues = _schema_issues(pack)
    if issues:
        raise PackError(f"{where}: not a valid SafetyLimits pack: {issues[0]}"
                        + (f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""))
    try:
        limits = core_limits.check_pack(pack, where)
    except ValueError as exc:
        raise PackError(str(exc)) from None
    seen: set[str] = set()
    for index, limit in enumerate(limits):
        pointer = f"{where}/limits/{index}"
        limit_id = limit.get("id")
        if not isinstance(limit_id, str) or not limit_id:
            raise PackError(f"{pointer}/id: every limit needs an id")
        if limit_id in seen:
            raise PackError(f"{pointer}/id: {limit_id!r} appears twice")
        seen.add(limit_id)
        if limit.get("action") not in ACTION_EFFECTS:
            raise PackError(f"{pointer}/action: {limit.get('action')!r} is not one of {', '.join(ACTION_EFFECTS)}")
        try:
            dim = dimension(limit.get("unit"))
            wanted = KIND_DIMENSION.get(limit["kind"])
            if wanted and dim and dim != wanted:
                raise PackError(f"{pointer}/unit: {limit['unit']!r} is not a {wanted} unit, as {limit['kind']} needs")
            if limit.get("holdFor"):
                duration_s(limit["holdFor"])
        except QuantityError as exc:
            raise PackError(f"{pointer}: {exc}") from None
    return pack


def effective_pack(device_packs: Iterable[dict], pack_id: str | None = None) -> dict:
    """Defaults + device packs, stricter wins; checked again after merging."""
    packs = [core_limits.default_pack(), *device_packs]
    for index, pack in enumerate(packs):
        check_pack(pack, "default pack" if index == 0 else f"device pack {index}")
    merged = core_limits.merge_packs(*packs)
    if pack_id:
        merged["id"] = pack_id
    return check_pack(merged, "merged pack")


def load_effective_pack(paths: Iterable[str | pathlib.Path], pack_id: str | None = None) -> dict:
    """Read each device pack file and merge it with the defaults."""
    device = [check_pack(read_pack(path), str(path)) for path in paths]
    return effective_pack(device, pack_id)
