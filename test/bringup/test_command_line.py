"""Command lines built from node specs: what rcl makes of them, and how executables resolve."""

from __future__ import annotations

import math
import pathlib
import sys

import pytest

from cookwala_ros import bringup
from cookwala_ros.bringup import NodeSpec


def spec(**fields) -> NodeSpec:
    base = dict(package="cookwala_ros", executable="arm_sim", name="arm", namespace="", parameters={},
                param_files=(), remappings=())
    base.update(fields)
    return NodeSpec(**base)


def test_ros_arguments_order_and_shape(tmp_path):
    params = tmp_path / "p.yaml"
    params.write_text("/**:\n  ros__parameters:\n    rate_hz: 1\n")
    args = bringup.ros_arguments(spec(
        namespace="/kitchen", param_files=(params,), parameters={"rate_hz": 50.0, "use_sim_time": True},
        remappings=(("/joint_states", "/arm/joint_states"),),
    ))
    assert args == [
        "--ros-args", "-r", "__node:=arm", "-r", "__ns:=/kitchen", "--params-file", str(params),
        "-p", "rate_hz:=50.0", "-p", "use_sim_time:=true", "-r", "/joint_states:=/arm/joint_states",
    ]


@pytest.mark.parametrize("value, text", [
    (True, "true"), (False, "false"), (3, "3"), (-2, "-2"), (2.0, "2.0"), (1e-5, "1e-05"),
    (math.inf, ".inf"), (-math.inf, "-.inf"), ("on", "'on'"), ("it's", "'it''s'"),
    ([1.0, 2.5], "[1.0, 2.5]"), (["a", "b c"], "['a', 'b c']"), ([True, False], "[true, false]"),
])
def test_format_param_value(value, text):
    assert bringup.format_param_value(value) == text


def test_rcl_reads_back_names_types_and_remaps(tmp_path):
    """The arguments go through the real rcl parser: every value keeps its ROS type."""
    rclpy = pytest.importorskip("rclpy", reason="rclpy (ROS 2 wheels) is not installed")
    from rclpy.parameter import Parameter

    params = tmp_path / "p.yaml"
    params.write_text("/**:\n  ros__parameters:\n    rate_hz: 1.0\n    from_file: 7\n")
    values = {
        "rate_hz": 50.0, "count": 3, "flag": True, "word": "on", "quote": "it's", "number_text": "1.5",
        "doubles": [1.0, 2.5], "ints": [1, 2], "strings": ["a", "b c"], "bools": [True, False],
        "nested.gain": 0.5, "use_sim_time": False,
    }
    args = bringup.ros_arguments(spec(namespace="/kitchen", parameters=values, param_files=(params,),
                                      remappings=(("chatter", "/remapped"),)))
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("placeholder", context=context, cli_args=args,
                                 automatically_declare_parameters_from_overrides=True)
        try:
            assert node.get_fully_qualified_name() == "/kitchen/arm"
            got = {name: node.get_parameter(name) for name in values}
            for name, expected in values.items():
                assert got[name].value == expected, name
            assert got["rate_hz"].type_ == Parameter.Type.DOUBLE
            assert got["count"].type_ == Parameter.Type.INTEGER
            assert got["word"].type_ == Parameter.Type.STRING
            assert got["number_text"].type_ == Parameter.Type.STRING
            assert got["doubles"].type_ == Parameter.Type.DOUBLE_ARRAY
            assert got["bools"].type_ == Parameter.Type.BOOL_ARRAY
            assert node.get_parameter("from_file").value == 7  # files apply, -p wins over them
            assert node.resolve_topic_name("chatter") == "/remapped"
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=context)


def test_console_scripts_resolve_to_this_interpreter():
    argv = bringup.resolve_executable("cookwala_ros", "arm_sim")
    assert argv[0] == sys.executable
    if argv[1] != "-c":
        script = pathlib.Path(argv[1])
        assert script.is_file() and script.name == "arm_sim"
    full = bringup.node_command(spec(parameters={"use_sim_time": True}))
    assert full[: len(argv)] == argv
    assert full[len(argv):] == ["--ros-args", "-r", "__node:=arm", "-p", "use_sim_time:=true"]


def test_unknown_executable_lists_what_the_package_has():
    with pytest.raises(bringup.ExecutableNotFound, match=r"package 'cookwala_ros' has no executable 'nope' \(its console scripts: .*arm_sim"):
        bringup.resolve_executable("cookwala_ros", "nope")
    with pytest.raises(bringup.ExecutableNotFound, match="no installed console scripts or ament executables"):
        bringup.resolve_executable("no_such_package", "x")


def test_ament_index_executables_are_found(tmp_path, monkeypatch):
    prefix = tmp_path / "install"
    folder = prefix / "lib" / "some_pkg"
    folder.mkdir(parents=True)
    script = folder / "py_tool"
    script.write_text("#!/usr/bin/env python3\nprint('hi')\n")
    script.chmod(0o755)
    binary = folder / "native_tool"
    binary.write_bytes(b"\x7fELF")
    binary.chmod(0o755)
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    assert bringup.resolve_executable("some_pkg", "py_tool") == [sys.executable, str(script)]
    assert bringup.resolve_executable("some_pkg", "native_tool") == [str(binary)]


def test_restart_command_gives_the_node_what_the_scene_gave_it():
    """The supervisor's restart line, parsed as `cookwala-ros up` parses it, resolves to the same node."""
    import shlex

    from cookwala_ros import cli
    from cookwala_ros.commands import up

    arguments = {"real_time_factor": 30.0, "http_port": 8099, "state_dir": "/srv/kitchen/a dir", "disabled_sensors": "",
                 "heartbeat_lease_s": 0.3, "data_dir": "/srv/kitchen/d"}
    sets = ["executor.tick_hz=20.0", "arm_sim.publish_rate_hz=20.0"]
    line = bringup.restart_command("kitchen", "executor", arguments, sets, use_sim_time=True)
    words = shlex.split(line)
    assert words[:5] == ["cookwala-ros", "up", "kitchen", "--only", "executor"]
    assert "arm_sim.publish_rate_hz=20.0" not in words
    args = cli.build_parser(only="up").parse_args(words[1:])
    _, specs = up.resolve_scene(args)
    (restarted,) = up.select_nodes(specs, args.only)
    manifest = bringup.load_manifest("kitchen")
    (original,) = [s for s in manifest.node_specs(arguments, bringup.parse_set_options(sets), True)
                   if s.name == "executor"]
    assert restarted == original
