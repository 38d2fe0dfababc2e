"""The arm's xacro (issue 13): renders for mock and gz, is the committed URDF, and agrees with every
file that names its joints (controllers, joint limits, poses, the ros2_control block)."""

from __future__ import annotations

import pathlib
import xml.etree.ElementTree as ET

import pytest
import yaml

xacro = pytest.importorskip("xacro", reason="xacro (requirements/python.txt) is not installed")

from cookwala_ros.robot.description import load_arm, load_poses  # noqa: E402

ROBOT = pathlib.Path(__file__).resolve().parents[2] / "config" / "robot"
XACRO = ROBOT / "kitchen_arm.urdf.xacro"
RENDER = f"xacro {XACRO.relative_to(ROBOT.parents[1])} sim_mode:=mock > config/robot/kitchen_arm.urdf"


def render(sim_mode: str, **args: str) -> ET.Element:
    document = xacro.process_file(str(XACRO), mappings={"sim_mode": sim_mode, **args})
    return ET.fromstring(document.toxml())


def canonical(element: ET.Element) -> tuple:
    """Tag, attributes, text and children: what a URDF reader sees (no comments, no layout)."""
    return (element.tag, tuple(sorted(element.attrib.items())), (element.text or "").strip(),
            tuple(canonical(child) for child in element))


def control_joints(robot: ET.Element) -> dict[str, dict]:
    out = {}
    for joint in robot.find("ros2_control").findall("joint"):
        command = joint.find("command_interface")
        params = {p.get("name"): float(p.text) for p in command.findall("param")}
        initial = joint.find("state_interface[@name='position']/param[@name='initial_value']")
        out[joint.get("name")] = {"min": params["min"], "max": params["max"], "initial": float(initial.text)}
    return out


def limits(robot: ET.Element) -> dict[str, tuple[float, float, float, float]]:
    return {j.get("name"): tuple(float(j.find("limit").get(k)) for k in ("lower", "upper", "velocity", "effort"))
            for j in robot.findall("joint") if j.get("type") != "fixed"}


def test_the_committed_urdf_is_the_mock_rendering():
    committed = ET.parse(ROBOT / "kitchen_arm.urdf").getroot()
    assert canonical(render("mock")) == canonical(committed), f"kitchen_arm.urdf is stale: run `{RENDER}`"


def test_gz_swaps_the_hardware_and_loads_the_controllers_file():
    mock, gz = render("mock"), render("gz")
    assert mock.find("ros2_control/hardware/plugin").text == "mock_components/GenericSystem"
    assert gz.find("ros2_control/hardware/plugin").text == "gz_ros2_control/GazeboSimSystem"
    assert mock.find("gazebo") is None
    plugin = gz.find("gazebo/plugin")
    assert plugin.get("filename") == "gz_ros2_control-system"
    assert pathlib.Path(plugin.find("parameters").text) == ROBOT / "controllers.yaml"
    chosen = render("gz", controllers_file="/opt/kitchen/my_controllers.yaml")
    assert chosen.find("gazebo/plugin/parameters").text == "/opt/kitchen/my_controllers.yaml"
    # the arm itself is the same in both modes
    assert limits(mock) == limits(gz) and control_joints(mock) == control_joints(gz)


def test_an_unknown_sim_mode_is_refused_by_name():
    with pytest.raises(xacro.XacroException, match="sim_mode:=gazebo is not one of mock, gz"):
        render("gazebo")


@pytest.mark.parametrize("sim_mode", ["mock", "gz"])
def test_every_file_names_the_same_joints_with_the_same_limits(sim_mode, tmp_path):
    robot = render(sim_mode)
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(ET.tostring(robot, encoding="unicode"))
    arm = load_arm(urdf, ROBOT / "joint_limits.yaml")  # the sims', executor's and monitor's reader
    joint_limits = limits(robot)
    assert list(joint_limits) == list(arm.joint_names)
    control = control_joints(robot)
    assert list(control) == list(arm.joint_names)
    home = load_poses(ROBOT / "poses.yaml", arm)["home"]
    for i, name in enumerate(arm.joint_names):
        lower, upper, velocity, _ = joint_limits[name]
        assert (control[name]["min"], control[name]["max"]) == (lower, upper)
        assert control[name]["initial"] == pytest.approx(home[name])
        assert (arm.lower[i], arm.upper[i], arm.max_velocity[i]) == (lower, upper, velocity)
    controllers = yaml.safe_load((ROBOT / "controllers.yaml").read_text())
    assert controllers["arm_controller"]["ros__parameters"]["joints"] == list(arm.joint_names)
    accel = yaml.safe_load((ROBOT / "joint_limits.yaml").read_text())["joint_limits"]
    assert list(accel) == list(arm.joint_names)
