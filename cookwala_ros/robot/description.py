"""The kitchen arm as data: joint names, limits, named poses and forward kinematics.

Read from config/robot/ (kitchen_arm.urdf is the source of joint names and position, velocity
and effort limits; joint_limits.yaml adds acceleration limits; poses.yaml names poses). The
arm simulator, the safety monitor's workspace check and the executor's motion code all take
their numbers from here, so they cannot disagree about the robot.

Parsed with the standard library's XML reader (no mesh loading, fast import); the tests
cross-check it against yourdfpy. Pure: no ROS, no I/O beyond reading these files.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import pathlib
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence

import numpy as np
import transforms3d

from cookwala_ros.core import yaml_limits

ACTUATED_TYPES = ("revolute", "continuous", "prismatic")
DEFAULT_TOOL_FRAME = "tool0"


class RobotDescriptionError(ValueError):
    """The robot description files are missing, malformed or disagree with each other."""


@dataclasses.dataclass(frozen=True)
class JointSpec:
    """One URDF joint with its limits (SI units: m, rad, s, N, N·m)."""

    name: str
    type: str
    parent: str
    child: str
    origin_xyz: tuple[float, float, float]
    origin_rpy: tuple[float, float, float]
    axis: tuple[float, float, float]
    lower: float = -math.inf
    upper: float = math.inf
    max_velocity: float = math.inf
    max_effort: float = math.inf
    max_acceleration: float = math.inf

    @property
    def actuated(self) -> bool:
        return self.type in ACTUATED_TYPES

    def origin(self) -> np.ndarray:
        """Homogeneous transform parent -> joint frame at zero position."""
        t = np.eye(4)
        t[:3, :3] = transforms3d.euler.euler2mat(*self.origin_rpy, axes="sxyz")
        t[:3, 3] = self.origin_xyz
        return t

    def motion(self, position: float) -> np.ndarray:
        """Homogeneous transform of the joint's own motion at `position`."""
        t = np.eye(4)
        if self.type in ("revolute", "continuous"):
            t[:3, :3] = transforms3d.axangles.axangle2mat(self.axis, position)
        elif self.type == "prismatic":
            t[:3, 3] = np.asarray(self.axis) * position
        return t


@dataclasses.dataclass(frozen=True)
class ArmDescription:
    """The serial chain from the URDF root to the tool frame."""

    robot_name: str
    root_frame: str
    tool_frame: str
    chain: tuple[JointSpec, ...]  # root -> tool, fixed joints included
    all_joints: tuple[JointSpec, ...]  # every joint of the URDF, for frames off the chain

    @property
    def joints(self) -> tuple[JointSpec, ...]:
        """Actuated joints of the chain, root to tool (the controller's joint order)."""
        return tuple(j for j in self.chain if j.actuated)

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(j.name for j in self.joints)

    @property
    def lower(self) -> np.ndarray:
        return np.array([j.lower for j in self.joints])

    @property
    def upper(self) -> np.ndarray:
        return np.array([j.upper for j in self.joints])

    @property
    def max_velocity(self) -> np.ndarray:
        return np.array([j.max_velocity for j in self.joints])

    @property
    def max_acceleration(self) -> np.ndarray:
        return np.array([j.max_acceleration for j in self.joints])

    def positions_vector(self, joint_positions: Mapping[str, float] | Sequence[float]) -> np.ndarray:
        """Joint positions in chain order, from a name->position mapping or a sequence."""
        names = self.joint_names
        if isinstance(joint_positions, Mapping):
            missing = [n for n in names if n not in joint_positions]
            if missing:
                raise ValueError(f"joint positions lack {', '.join(missing)}")
            return np.array([float(joint_positions[n]) for n in names])
        q = np.asarray(joint_positions, dtype=float)
        if q.shape != (len(names),):
            raise ValueError(f"expected {len(names)} joint positions ({', '.join(names)}), got shape {q.shape}")
        return q

    def tool_pose(self, joint_positions: Mapping[str, float] | Sequence[float]) -> np.ndarray:
        """4x4 pose of the tool frame in the root frame."""
        q = iter(self.positions_vector(joint_positions))
        t = np.eye(4)
        for joint in self.chain:
            t = t @ joint.origin()
            if joint.actuated:
                t = t @ joint.motion(next(q))
        return t

    def tool_position(self, joint_positions: Mapping[str, float] | Sequence[float]) -> np.ndarray:
        """xyz [m] of the tool frame in the root frame."""
        return self.tool_pose(joint_positions)[:3, 3]

    def frame_pose(self, frame: str) -> np.ndarray:
        """4x4 pose of a frame attached to the root through fixed joints only (e.g. hob_link)."""
        by_child = {j.child: j for j in self.all_joints}
        t = np.eye(4)
        link = frame
        while link != self.root_frame:
            joint = by_child.get(link)
            if joint is None:
                raise ValueError(f"frame {frame!r} is not connected to {self.root_frame!r}")
            if joint.actuated:
                raise ValueError(f"frame {frame!r} moves with joint {joint.name!r}; use tool_pose")
            t = joint.origin() @ t
            link = joint.parent
        return t

    def within_limits(self, joint_positions: Mapping[str, float] | Sequence[float], margin: float = 0.0) -> bool:
        q = self.positions_vector(joint_positions)
        return bool(np.all(q >= self.lower + margin) and np.all(q <= self.upper - margin))


def _floats(text: str | None, default: str, what: str) -> tuple[float, float, float]:
    parts = (text if text is not None else default).split()
    if len(parts) != 3:
        raise RobotDescriptionError(f"{what}: expected three numbers, got {text!r}")
    return tuple(float(p) for p in parts)  # type: ignore[return-value]


def _parse_joint(element: ET.Element) -> JointSpec:
    name = element.get("name")
    jtype = element.get("type")
    if not name or not jtype:
        raise RobotDescriptionError("a <joint> lacks its name or type attribute")
    parent = element.find("parent")
    child = element.find("child")
    if parent is None or child is None:
        raise RobotDescriptionError(f"joint {name!r}: missing <parent> or <child>")
    origin = element.find("origin")
    axis = element.find("axis")
    limit = element.find("limit")
    fields: dict = dict(
        name=name,
        type=jtype,
        parent=parent.get("link", ""),
        child=child.get("link", ""),
        origin_xyz=_floats(origin.get("xyz") if origin is not None else None, "0 0 0", f"joint {name!r} origin xyz"),
        origin_rpy=_floats(origin.get("rpy") if origin is not None else None, "0 0 0", f"joint {name!r} origin rpy"),
        axis=_floats(axis.get("xyz") if axis is not None else None, "1 0 0", f"joint {name!r} axis"),
    )
    if jtype in ("revolute", "prismatic"):
        if limit is None:
            raise RobotDescriptionError(f"joint {name!r}: a {jtype} joint needs a <limit> tag")
        fields.update(lower=float(limit.get("lower", "0")), upper=float(limit.get("upper", "0")))
    if limit is not None and jtype in ACTUATED_TYPES:
        try:
            fields.update(max_velocity=float(limit.get("velocity")), max_effort=float(limit.get("effort")))
        except TypeError:
            raise RobotDescriptionError(f"joint {name!r}: <limit> needs velocity and effort") from None
    return JointSpec(**fields)


def _read_mapping(path: pathlib.Path) -> dict:
    """A YAML file whose top level is a mapping (empty: {}); bounded, so a hostile file is a
    RobotDescriptionError naming it, never a RecursionError or AttributeError."""
    try:
        data = yaml_limits.loads(path.read_bytes())
    except yaml_limits.YamlInputError as exc:
        raise RobotDescriptionError(f"{path}: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise RobotDescriptionError(f"{path}: expected a mapping at the top level")
    return data


def load_acceleration_limits(path: pathlib.Path | str) -> dict[str, float]:
    """joint name -> max acceleration [rad/s²] from a `joint_limits:` YAML file."""
    limits = _read_mapping(pathlib.Path(path)).get("joint_limits")
    if not isinstance(limits, dict):
        raise RobotDescriptionError(f"{path}: expected a top-level 'joint_limits' mapping")
    out = {}
    for joint, spec in limits.items():
        if not isinstance(spec, dict) or not spec.get("has_acceleration_limits"):
            continue
        value = spec.get("max_acceleration")
        if not isinstance(value, (int, float)) or value <= 0:
            raise RobotDescriptionError(f"{path}: joint_limits.{joint}.max_acceleration must be a positive number")
        out[str(joint)] = float(value)
    return out


def parse_urdf(
    urdf_text: str,
    acceleration_limits: Mapping[str, float] | None = None,
    tool_frame: str = DEFAULT_TOOL_FRAME,
) -> ArmDescription:
    """The chain from the URDF's root link to `tool_frame`, with acceleration limits merged in."""
    try:
        root = ET.fromstring(urdf_text)
    except ET.ParseError as exc:
        raise RobotDescriptionError(f"URDF is not well-formed XML: {exc}") from None
    joints = tuple(_parse_joint(j) for j in root.findall("joint"))
    links = {link.get("name") for link in root.findall("link")}
    if tool_frame not in links:
        raise RobotDescriptionError(f"URDF has no link named {tool_frame!r}")
    children = {j.child for j in joints}
    roots = sorted(links - children)
    if len(roots) != 1:
        raise RobotDescriptionError(f"URDF must have exactly one root link, found {roots}")
    accel = dict(acceleration_limits or {})
    unknown = sorted(set(accel) - {j.name for j in joints if j.actuated})
    if unknown:
        raise RobotDescriptionError(f"acceleration limits name joints the URDF does not actuate: {unknown}")
    joints = tuple(
        dataclasses.replace(j, max_acceleration=accel[j.name]) if j.name in accel else j for j in joints
    )
    by_child = {j.child: j for j in joints}
    chain: list[JointSpec] = []
    link = tool_frame
    while link != roots[0]:
        joint = by_child[link]
        chain.append(joint)
        link = joint.parent
    chain.reverse()
    return ArmDescription(
        robot_name=root.get("name", ""),
        root_frame=roots[0],
        tool_frame=tool_frame,
        chain=tuple(chain),
        all_joints=joints,
    )


def _config_path(*parts: str) -> pathlib.Path:
    from cookwala_ros.resources import share_path

    return share_path("config", "robot", *parts)


def load_arm(
    urdf_path: pathlib.Path | str | None = None,
    joint_limits_path: pathlib.Path | str | None = None,
    tool_frame: str = DEFAULT_TOOL_FRAME,
) -> ArmDescription:
    """Load the arm from a URDF (default config/robot/kitchen_arm.urdf) and a joint_limits file
    (default: joint_limits.yaml next to the URDF, if present)."""
    urdf = pathlib.Path(urdf_path) if urdf_path else _config_path("kitchen_arm.urdf")
    try:
        text = urdf.read_text(encoding="utf-8")
    except OSError as exc:
        raise RobotDescriptionError(f"cannot read URDF {urdf}: {exc.strerror}") from None
    limits_file = pathlib.Path(joint_limits_path) if joint_limits_path else urdf.with_name("joint_limits.yaml")
    accel = load_acceleration_limits(limits_file) if (joint_limits_path or limits_file.is_file()) else {}
    return parse_urdf(text, accel, tool_frame)


@functools.lru_cache(maxsize=1)
def default_arm() -> ArmDescription:
    """The packaged kitchen arm (cached)."""
    return load_arm()


def load_poses(path: pathlib.Path | str | None = None, arm: ArmDescription | None = None) -> dict[str, dict[str, float]]:
    """Named poses: pose name -> {joint name: position [rad]}. Checked against `arm` when given."""
    poses_file = pathlib.Path(path) if path else _config_path("poses.yaml")
    poses = _read_mapping(poses_file).get("poses")
    if not isinstance(poses, dict) or not poses:
        raise RobotDescriptionError(f"{poses_file}: expected a non-empty top-level 'poses' mapping")
    out: dict[str, dict[str, float]] = {}
    for key, joints in poses.items():
        name = str(key)
        if not isinstance(joints, dict):
            raise RobotDescriptionError(f"{poses_file}: poses.{name} must map joint names to positions")
        bad = next((j for j, v in joints.items() if not isinstance(v, (int, float)) or isinstance(v, bool)), None)
        if bad is not None:
            raise RobotDescriptionError(f"{poses_file}: poses.{name}.{bad} must be a number (radians or metres)")
        out[name] = {str(k): float(v) for k, v in joints.items()}
        if arm is not None:
            if set(out[name]) != set(arm.joint_names):
                raise RobotDescriptionError(
                    f"{poses_file}: poses.{name} names {sorted(out[name])}, the arm has {sorted(arm.joint_names)}"
                )
            if not arm.within_limits(out[name]):
                raise RobotDescriptionError(f"{poses_file}: poses.{name} is outside the joint limits")
    return out


def tool_position(
    joint_positions: Mapping[str, float] | Sequence[float], arm: ArmDescription | None = None
) -> np.ndarray:
    """xyz [m] of tool0 in the world frame for the given joint positions (default: packaged arm)."""
    return (arm or default_arm()).tool_position(joint_positions)
