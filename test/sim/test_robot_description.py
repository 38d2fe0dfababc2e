"""The robot description files agree with each other, and our kinematics with yourdfpy's."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
import yourdfpy

from cookwala_ros.robot.description import (
    RobotDescriptionError,
    load_acceleration_limits,
    load_arm,
    load_poses,
    parse_urdf,
    tool_position,
)


@pytest.fixture(scope="module")
def robot_dir(repo_root):
    return repo_root / "config" / "robot"


@pytest.fixture(scope="module")
def arm(robot_dir):
    return load_arm(robot_dir / "kitchen_arm.urdf", robot_dir / "joint_limits.yaml")


@pytest.fixture(scope="module")
def urdf(robot_dir):
    return yourdfpy.URDF.load(str(robot_dir / "kitchen_arm.urdf"), load_meshes=False, build_collision_scene_graph=False)


def test_six_actuated_joints_with_limits_from_the_urdf(arm, urdf):
    assert len(arm.joint_names) == 6
    assert list(arm.joint_names) == list(urdf.actuated_joint_names)
    for spec in arm.joints:
        limit = urdf.joint_map[spec.name].limit
        assert (spec.lower, spec.upper, spec.max_velocity, spec.max_effort) == (
            limit.lower, limit.upper, limit.velocity, limit.effort,
        ), spec.name
        assert spec.lower < spec.upper and spec.max_velocity > 0 and spec.max_effort > 0
    assert arm.tool_frame == "tool0" and "tool0" in urdf.link_map
    assert arm.root_frame == urdf.base_link


def test_acceleration_limits_cover_exactly_the_urdf_joints(arm, robot_dir):
    accel = load_acceleration_limits(robot_dir / "joint_limits.yaml")
    assert set(accel) == set(arm.joint_names)
    assert np.all(np.isfinite(arm.max_acceleration)) and np.all(arm.max_acceleration > 0)


def test_controllers_yaml_drives_the_urdf_joints(arm, robot_dir):
    config = yaml.safe_load((robot_dir / "controllers.yaml").read_text())
    manager = config["controller_manager"]["ros__parameters"]
    assert manager["arm_controller"]["type"] == "joint_trajectory_controller/JointTrajectoryController"
    controller = config["arm_controller"]["ros__parameters"]
    assert controller["joints"] == list(arm.joint_names)
    assert "position" in controller["command_interfaces"]
    per_joint = {k for k, v in controller["constraints"].items() if isinstance(v, dict)}
    assert per_joint == set(arm.joint_names)


def test_ros2_control_tag_matches_joints_limits_and_home_pose(arm, robot_dir):
    import xml.etree.ElementTree as ET

    root = ET.parse(robot_dir / "kitchen_arm.urdf").getroot()
    systems = root.findall("ros2_control")
    assert len(systems) == 1 and systems[0].get("type") == "system"
    joints = systems[0].findall("joint")
    assert [j.get("name") for j in joints] == list(arm.joint_names)
    home = load_poses(robot_dir / "poses.yaml", arm)["home"]
    for element, spec in zip(joints, arm.joints):
        command = {c.get("name"): c for c in element.findall("command_interface")}
        assert "position" in command
        params = {p.get("name"): float(p.text) for p in command["position"].findall("param")}
        assert (params["min"], params["max"]) == (spec.lower, spec.upper)
        states = {s.get("name"): s for s in element.findall("state_interface")}
        assert {"position", "velocity"} <= set(states)
        initial = float(states["position"].find("param[@name='initial_value']").text)
        assert initial == home[spec.name]


def test_named_poses_name_every_joint_within_limits(arm, robot_dir):
    poses = load_poses(robot_dir / "poses.yaml", arm)
    assert {"home", "above_hob", "stir", "pour", "dispense"} <= set(poses)
    for name, pose in poses.items():
        assert set(pose) == set(arm.joint_names), name
        assert arm.within_limits(pose), name


def test_forward_kinematics_agrees_with_yourdfpy(arm, urdf):
    rng = np.random.default_rng(7)
    for _ in range(20):
        q = rng.uniform(arm.lower, arm.upper)
        urdf.update_cfg(q)
        expected = urdf.get_transform("tool0", urdf.base_link)
        np.testing.assert_allclose(arm.tool_pose(q), expected, atol=1e-9)
        np.testing.assert_allclose(tool_position(dict(zip(arm.joint_names, q)), arm), expected[:3, 3], atol=1e-9)


def test_hob_poses_put_the_tool_above_the_hob_pointing_down(arm, robot_dir):
    poses = load_poses(robot_dir / "poses.yaml", arm)
    hob = arm.frame_pose("hob_link")[:3, 3]
    for name, height in (("above_hob", 0.30), ("stir", 0.17)):
        pose = arm.tool_pose(poses[name])
        np.testing.assert_allclose(pose[:3, 3], hob + [0, 0, height], atol=0.005, err_msg=name)
        assert pose[2, 2] < -0.999, f"{name}: tool z axis should point down"


def test_default_arm_is_the_packaged_one(arm):
    packaged = load_arm()
    assert packaged.joint_names == arm.joint_names
    np.testing.assert_array_equal(packaged.max_acceleration, arm.max_acceleration)


def test_bad_descriptions_are_refused_with_the_reason(tmp_path, robot_dir):
    text = (robot_dir / "kitchen_arm.urdf").read_text()
    with pytest.raises(RobotDescriptionError, match="no link named 'gripper'"):
        parse_urdf(text, tool_frame="gripper")
    with pytest.raises(RobotDescriptionError, match="does not actuate.*nope_joint"):
        parse_urdf(text, {"nope_joint": 1.0})
    with pytest.raises(RobotDescriptionError, match="not well-formed"):
        parse_urdf("<robot>")
    limits = tmp_path / "limits.yaml"
    limits.write_text("joint_limits:\n  elbow_joint: {has_acceleration_limits: true, max_acceleration: -1}\n")
    with pytest.raises(RobotDescriptionError, match="elbow_joint.max_acceleration"):
        load_acceleration_limits(limits)


@pytest.mark.parametrize("content, message", [
    (b"- elbow_joint\n", "expected a mapping at the top level"),
    (b"- " * 3000 + b"x\n", "nested more than 64 levels deep"),
    (b"joint_limits: {elbow_joint: \xff}\n", "not UTF-8"),
])
def test_hostile_robot_yaml_is_a_description_error_naming_the_file(tmp_path, content, message):
    """Issue 15: once an AttributeError or RecursionError that the nodes' start-up did not catch."""
    path = tmp_path / "robot.yaml"
    path.write_bytes(content)
    for load in (load_acceleration_limits, load_poses):
        with pytest.raises(RobotDescriptionError) as caught:
            load(path)
        assert str(path) in str(caught.value) and message in str(caught.value), caught.value
