"""The safety monitor reads its robot's device file: id, packs, URDF, topics and its own section,
as parameter defaults that a parameter given to the node overrides (real node, in process)."""

from __future__ import annotations

import pytest
import rclpy
import yaml
from rclpy.parameter import Parameter

from cookwala_ros.ros.params import ParameterError
from cookwala_ros.ros.safety_monitor_node import SafetyMonitorNode

REPO_DEVICE = "config/device.yaml"


@pytest.fixture()
def context():
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    yield ctx
    rclpy.try_shutdown(context=ctx)


def device_file(repo_root, tmp_path, **monitor) -> str:
    device = yaml.safe_load((repo_root / REPO_DEVICE).read_text())
    device["device"]["id"] = "cwros:test-robot-7"
    device["heaters"][0]["command_topic"] = "hob_7/command"
    device["safety_monitor"].update(monitor)
    device["safety_limits"] = [str(repo_root / "config" / "safety" / "device-pack.json"),
                               str(repo_root / "test" / "e2e" / "data" / "site-limits.json")]
    path = tmp_path / "device.yaml"
    path.write_text(yaml.safe_dump(device))
    return str(path)


def make(context, **params):
    node = SafetyMonitorNode(argv=[], context=context,
                             parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
    return node


def test_the_device_file_gives_the_defaults_and_a_parameter_wins(repo_root, tmp_path, context):
    path = device_file(repo_root, tmp_path, heater_state_timeout_s=0.7, joint_state_timeout_s=1, autostart=False)
    node = make(context, device_file=path, joint_state_timeout_s=0.9)
    try:
        value = lambda name: node.get_parameter(name).value  # noqa: E731
        assert value("device_id") == "cwros:test-robot-7"
        assert value("heater_state_timeout_s") == 0.7          # from the file
        assert value("joint_state_timeout_s") == 0.9           # the parameter given wins
        assert value("autostart") is False
        assert any(p.endswith("site-limits.json") for p in value("device_packs"))
        assert value("urdf_path").endswith("kitchen_arm.urdf")
        assert node.names.heater_command == "hob_7/command"
    finally:
        node.stop_inputs.destroy_node()
        node.destroy_node()


@pytest.mark.parametrize("monitor, name", [
    ({"heat_deadline_s": 2.0}, "heat_deadline_s"),       # CORE §6.2: at most 1 s, also from the file
    ({"workspace_min": [0.0, 1.0]}, "workspace_min"),
    ({"workspace_max": [0.0, float("nan"), 1.0]}, "workspace_max"),
])
def test_a_bad_value_in_the_file_names_the_parameter_and_the_key(repo_root, tmp_path, context, monitor, name):
    path = device_file(repo_root, tmp_path, **monitor)
    with pytest.raises(ParameterError) as excinfo:
        make(context, device_file=path)
    assert excinfo.value.name == name and f"safety_monitor.{name}" in str(excinfo.value)


def test_a_broken_device_file_names_device_file(tmp_path, context):
    with pytest.raises(ParameterError) as excinfo:
        make(context, device_file=str(tmp_path / "absent.yaml"))
    assert excinfo.value.name == "device_file" and "cannot read device file" in str(excinfo.value)


def test_a_hostile_pack_stops_the_configure_naming_the_file(repo_root, tmp_path, context):
    """Issue 15: 2,000 nested brackets in a pack once ended the configure in a RecursionError traceback."""
    from rclpy.lifecycle import TransitionCallbackReturn

    deep = tmp_path / "deep-pack.json"
    deep.write_text("[" * 2000 + "]" * 2000)
    node = make(context, device_file=device_file(repo_root, tmp_path, autostart=False), device_packs=[str(deep)])
    try:
        assert node.trigger_configure() == TransitionCallbackReturn.FAILURE
        assert str(deep) in node.config_error and "nested 2000 levels deep" in node.config_error, node.config_error
        assert "RecursionError" not in node.config_error
    finally:
        node.stop_inputs.destroy_node()
        node.destroy_node()
