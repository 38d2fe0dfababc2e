"""Bringup manifests: parsing, validation errors that name the bad key, overrides."""

from __future__ import annotations


import pytest
import yaml

from cookwala_ros import bringup, resources
from cookwala_ros.bringup import ManifestError, parse_manifest
from cookwala_ros.ros import names


def manifest(**top) -> dict:
    doc = {
        "format": 1,
        "scene": "kitchen",
        "use_sim_time": True,
        "arguments": {"real_time_factor": {"default": 2.0, "description": "speed"}},
        "nodes": [
            {"name": "clock", "package": "cookwala_ros", "executable": "sim_clock",
             "use_sim_time": False, "parameters": {"real_time_factor": "$(arg real_time_factor)"}},
            {"name": "arm", "package": "cookwala_ros", "executable": "arm_sim", "namespace": "kitchen",
             "parameters": {"rate_hz": 50, "joints": {"names": ["a", "b"], "limits": [1, 2.5]}},
             "remappings": {"/joint_states": "/arm/joint_states"}, "required": False},
        ],
    }
    doc.update(top)
    return doc


def node(**fields) -> dict:
    base = {"name": "n", "package": "cookwala_ros", "executable": "arm_sim"}
    base.update(fields)
    return base


def error_of(doc) -> str:
    with pytest.raises(ManifestError) as info:
        parse_manifest(doc).node_specs()
    return str(info.value)


def test_parses_nodes_with_defaults_and_argument_substitution():
    specs = parse_manifest(manifest()).node_specs()
    clock, arm = specs
    assert clock.name == "clock" and clock.namespace == "" and clock.fqn == "/clock"
    assert clock.parameters == {"real_time_factor": 2.0, "use_sim_time": False}
    assert clock.required is True  # the default
    assert arm.namespace == "/kitchen" and arm.fqn == "/kitchen/arm"
    assert arm.parameters == {
        "rate_hz": 50, "joints.names": ["a", "b"], "joints.limits": [1.0, 2.5], "use_sim_time": True,
    }
    assert arm.remappings == (("/joint_states", "/arm/joint_states"),)
    assert arm.required is False


def test_arguments_overrides_and_use_sim_time():
    m = parse_manifest(manifest())
    clock, arm = m.node_specs({"real_time_factor": 40.0}, {"arm": {"rate_hz": 10, "extra.deep": "x"}})
    assert clock.parameters["real_time_factor"] == 40.0
    assert arm.parameters["rate_hz"] == 10 and arm.parameters["extra.deep"] == "x"
    # an integer given for a float parameter keeps the parameter's type
    clock, arm = m.node_specs(overrides={"clock": {"real_time_factor": 5}, "arm": {"joints.limits": [3, 4]}})
    assert clock.parameters["real_time_factor"] == 5.0 and isinstance(clock.parameters["real_time_factor"], float)
    assert arm.parameters["joints.limits"] == [3.0, 4.0] and isinstance(arm.parameters["joints.limits"][0], float)
    clock, arm = m.node_specs(use_sim_time=False)
    assert clock.parameters["use_sim_time"] is False and arm.parameters["use_sim_time"] is False
    # the override replaces the scene default; a node that sets its own keeps it
    doc = manifest(use_sim_time=False)
    doc["nodes"][0]["use_sim_time"] = False
    clock, arm = parse_manifest(doc).node_specs(use_sim_time=True)
    assert clock.parameters["use_sim_time"] is False and arm.parameters["use_sim_time"] is True


def test_argument_inside_a_longer_string_is_text():
    doc = manifest()
    doc["nodes"][1]["parameters"] = {"label": "rtf=$(arg real_time_factor)", "list": ["$(arg real_time_factor)", 1.0]}
    arm = parse_manifest(doc).node_specs({"real_time_factor": 3.5})[1]
    assert arm.parameters["label"] == "rtf=3.5"
    assert arm.parameters["list"] == [3.5, 1.0]


def test_scene_use_sim_time_from_an_argument():
    doc = manifest(use_sim_time="$(arg sim)")
    doc["arguments"]["sim"] = False
    assert parse_manifest(doc).node_specs()[1].parameters["use_sim_time"] is False
    assert parse_manifest(doc).node_specs({"sim": True})[1].parameters["use_sim_time"] is True
    with pytest.raises(ManifestError, match=r"nodes\[1\]\.use_sim_time: expected true or false"):
        parse_manifest(doc).node_specs({"sim": "maybe"})


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda d: d["nodes"][1].pop("executable"), r"^nodes\[1\]\.executable: missing$"),
        (lambda d: d["nodes"][0].pop("name"), r"^nodes\[0\]\.name: missing$"),
        (lambda d: d["nodes"][1].pop("package"), r"^nodes\[1\]\.package: missing$"),
        (lambda d: d["nodes"][1].update(paramters={}), r"^nodes\[1\]\.paramters: unknown key"),
        (lambda d: d["nodes"][1].update(name="bad-name"), r"^nodes\[1\]\.name: 'bad-name' is not a valid ROS node name"),
        (lambda d: d["nodes"][1].update(package="Bad"), r"^nodes\[1\]\.package: 'Bad' is not a valid ROS package"),
        (lambda d: d["nodes"][1].update(executable="bin/arm"), r"^nodes\[1\]\.executable: .* bare name"),
        (lambda d: d["nodes"][1].update(namespace="a//b"), r"^nodes\[1\]\.namespace: 'a//b' is not a valid"),
        (lambda d: d["nodes"][1].update(required="yes"), r"^nodes\[1\]\.required: expected true or false"),
        (lambda d: d["nodes"][1].update(on_exit="respawn"), r"^nodes\[1\]\.on_exit: expected shutdown or continue, got 'respawn'"),
        (lambda d: d["nodes"][1].update(on_exit="shutdown"), r"^nodes\[1\]\.required: False contradicts on_exit: shutdown"),
        (lambda d: d["nodes"][1].update(stop_order="last"), r"^nodes\[1\]\.stop_order: expected an integer, got 'last'"),
        (lambda d: d["nodes"][1].update(stop_order=1.5), r"^nodes\[1\]\.stop_order: expected an integer"),
        (lambda d: d["nodes"][1].update(parameters=[1]), r"^nodes\[1\]\.parameters: expected a mapping, got a list"),
        (lambda d: d["nodes"][1]["parameters"].update(x=None), r"^nodes\[1\]\.parameters\.x: null is not a parameter value"),
        (lambda d: d["nodes"][1]["parameters"].update(x=[]), r"^nodes\[1\]\.parameters\.x: an empty list"),
        (lambda d: d["nodes"][1]["parameters"].update(x=[1, "a"]), r"^nodes\[1\]\.parameters\.x: list mixes int and str"),
        (lambda d: d["nodes"][1]["parameters"].update(x=[[1]]), r"^nodes\[1\]\.parameters\.x\[0\]: a list is not allowed"),
        (lambda d: d["nodes"][1]["parameters"].update({"bad key": 1}), r"^nodes\[1\]\.parameters\.bad key: not a valid parameter name"),
        (lambda d: d["nodes"][1]["parameters"].update(use_sim_time=True), r"^nodes\[1\]\.parameters\.use_sim_time: set use_sim_time on the node"),
        (lambda d: d["nodes"][1]["parameters"].update(x="$(arg nope)"), r"^nodes\[1\]\.parameters\.x: unknown argument \$\(arg nope\)"),
        (lambda d: d["nodes"][1].update(param_files=["/no/such/file.yaml"]), r"^nodes\[1\]\.param_files\[0\]: file not found: /no/such/file.yaml"),
        (lambda d: d["nodes"][1].update(param_files=[3]), r"^nodes\[1\]\.param_files\[0\]: expected a file path string"),
        (lambda d: d["nodes"][1].update(remappings=["a:=b"]), r"^nodes\[1\]\.remappings: expected a mapping"),
        (lambda d: d["nodes"][1].update(use_sim_time="sometimes"), r"^nodes\[1\]\.use_sim_time: expected true, false or \$\(arg NAME\)"),
        (lambda d: d["nodes"].append(node(name="arm", namespace="/kitchen/")), r"^nodes\[2\]\.name: duplicate node '/kitchen/arm' \(also nodes\[1\]\)"),
        (lambda d: d["nodes"].append("arm"), r"^nodes\[2\]: expected a mapping, got str"),
        (lambda d: d.pop("nodes"), r"^nodes: missing$"),
        (lambda d: d.update(nodes=[]), r"^nodes: expected a non-empty list"),
        (lambda d: d.pop("format"), r"^format: missing"),
        (lambda d: d.update(format=2), r"^format: unsupported version 2"),
        (lambda d: d.update(launch=[]), r"^launch: unknown key"),
        (lambda d: d["arguments"].update(x={"description": "no default"}), r"^arguments\.x\.default: missing"),
        (lambda d: d.update(use_sim_time="yes"), r"^use_sim_time: expected true, false"),
    ],
)
def test_errors_name_the_bad_key(mutate, expected):
    doc = manifest()
    mutate(doc)
    with pytest.raises(ManifestError, match=expected):
        parse_manifest(doc)


def test_unknown_argument_and_override_target_are_errors():
    m = parse_manifest(manifest())
    with pytest.raises(ManifestError, match=r"unknown argument 'speed' for scene 'kitchen' \(arguments: real_time_factor\)"):
        m.node_specs({"speed": 3})
    with pytest.raises(ManifestError, match=r"override for unknown node 'gripper' \(nodes: clock, arm\)"):
        m.node_specs(overrides={"gripper": {"x": 1}})
    with pytest.raises(ManifestError, match=r"nodes\[1\]\.parameters\.x: null"):
        m.node_specs(overrides={"arm": {"x": None}})


def test_param_files_resolve_relative_to_the_share_dir(tmp_path, monkeypatch):
    (tmp_path / "package.xml").write_text("<package/>")
    (tmp_path / "config" / "robot").mkdir(parents=True)
    params = tmp_path / "config" / "robot" / "arm.yaml"
    params.write_text("/**:\n  ros__parameters:\n    rate_hz: 10\n")
    monkeypatch.setenv("COOKWALA_ROS_SHARE", str(tmp_path))
    resources.share_dir.cache_clear()
    try:
        doc = manifest()
        doc["nodes"][1]["param_files"] = ["config/robot/arm.yaml"]
        assert parse_manifest(doc).node_specs()[1].param_files == (params,)
    finally:
        resources.share_dir.cache_clear()


def test_overrides_keep_the_type_a_parameter_file_gives(tmp_path):
    params = tmp_path / "arm.yaml"
    params.write_text("arm:\n  ros__parameters:\n    gain: 2.0\n    limits: [1.0, 2.0]\n    count: 3\n")
    doc = manifest()
    doc["nodes"][1]["param_files"] = [str(params)]
    arm = parse_manifest(doc).node_specs(overrides={"arm": {"gain": 5, "limits": [3, 4], "count": 4}})[1]
    assert arm.parameters["gain"] == 5.0 and isinstance(arm.parameters["gain"], float)
    assert arm.parameters["limits"] == [3.0, 4.0] and isinstance(arm.parameters["limits"][0], float)
    assert arm.parameters["count"] == 4 and isinstance(arm.parameters["count"], int)


def test_load_manifest_by_path_and_errors_name_the_file(tmp_path):
    path = tmp_path / "scene.yaml"
    doc = manifest()
    del doc["scene"]
    path.write_text(yaml.safe_dump(doc))
    m = bringup.load_manifest(str(path))
    assert m.scene == "scene" and m.node_names() == ["clock", "arm"]
    del doc["nodes"][0]["executable"]
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ManifestError, match=rf"^{path}: nodes\[0\]\.executable: missing$"):
        bringup.load_manifest(path)
    path.write_text("nodes: [\n")
    with pytest.raises(ManifestError, match="not valid YAML"):
        bringup.load_manifest(path)
    with pytest.raises(ManifestError, match="manifest file not found"):
        bringup.load_manifest(tmp_path / "missing.yaml")


def test_unknown_scene_lists_the_known_ones():
    with pytest.raises(ManifestError, match=r"unknown scene 'nowhere' \(scenes: .*sim_kitchen"):
        bringup.load_manifest("nowhere")


def test_parse_set_options_types_values_like_yaml():
    assert bringup.parse_set_options(["arm.rate_hz=20", "arm.name=x", "heater.gain.p=1.5", "heater.on=true"]) == {
        "arm": {"rate_hz": 20, "name": "x"}, "heater": {"gain.p": 1.5, "on": True},
    }
    assert bringup.parse_set_options(["a.s="]) == {"a": {"s": ""}}
    for bad in ("arm=1", "rate_hz", ".x=1", "arm.=1"):
        with pytest.raises(ManifestError, match="expected NODE.PARAM=VALUE"):
            bringup.parse_set_options([bad])


def test_shipped_sim_kitchen_manifest_is_valid():
    m = bringup.load_manifest("sim_kitchen")
    assert m.scene == "sim_kitchen"
    specs = {s.name: s for s in m.node_specs({"real_time_factor": 25.0})}
    assert {"sim_clock", "arm_sim", "heater_sim", "cookwala_capabilities"} <= set(specs)
    assert specs["sim_clock"].parameters["use_sim_time"] is False
    assert specs["arm_sim"].parameters["use_sim_time"] is True
    assert specs["heater_sim"].parameters["use_sim_time"] is True
    assert 25.0 in specs["sim_clock"].parameters.values()
    for spec in specs.values():
        assert all(path.is_file() for path in spec.param_files)


def test_every_shipped_manifest_is_valid():
    scenes = bringup.available_scenes()
    assert "sim_kitchen" in scenes
    for scene in scenes:
        assert bringup.load_manifest(scene).node_specs()


def test_on_exit_and_stop_order_default_and_the_older_required_spelling():
    doc = manifest()
    doc["nodes"].append(node(name="guarded", on_exit="continue", stop_order=-1))
    doc["nodes"].append(node(name="plant", on_exit="shutdown", required=True, stop_order=2))
    specs = {s.name: s for s in parse_manifest(doc).node_specs()}
    assert (specs["clock"].on_exit, specs["clock"].stop_order, specs["clock"].required) == ("shutdown", 0, True)
    assert (specs["arm"].on_exit, specs["arm"].required) == ("continue", False)  # required: false
    assert (specs["guarded"].on_exit, specs["guarded"].stop_order) == ("continue", -1)
    assert (specs["plant"].on_exit, specs["plant"].stop_order) == ("shutdown", 2)


def test_the_kitchen_keeps_its_stop_path():
    """Only the plant and the clock end the kitchen; the monitor stops after what it guards and
    before the plant it halts; its latch lives in the scene's state_dir."""
    m = bringup.load_manifest("kitchen")
    specs = {s.name: s for s in m.node_specs({"state_dir": "/srv/kitchen/latch"})}
    assert {n for n, s in specs.items() if s.on_exit == "shutdown"} == {"sim_clock", "arm_sim", "heater_sim"}
    assert specs["executor"].on_exit == "continue" and specs["safety_monitor"].on_exit == "continue"
    order = {n: s.stop_order for n, s in specs.items()}
    assert order["executor"] < order["safety_monitor"] < order["arm_sim"] == order["heater_sim"] < order["sim_clock"]
    monitor = specs["safety_monitor"].parameters
    assert monitor["state_dir"] == "/srv/kitchen/latch" and monitor["executor_node"] == "executor"
    assert names.qualify(specs["safety_monitor"].namespace, monitor["executor_node"]) == specs["executor"].fqn
    assert m.arguments["state_dir"].default == "~/.local/state/cookwala_ros"
    assert specs["executor"].parameters["heartbeat_lease_s"] == monitor["heartbeat_lease_s"]


def test_the_namespace_argument_puts_the_whole_robot_under_it_and_with_clock_leaves_the_clock_out():
    m = bringup.load_manifest("kitchen")
    specs = {s.name: s for s in m.node_specs({"namespace": "robot_b", "with_clock": False,
                                               "device_file": "/etc/robot_b.yaml"})}
    assert "sim_clock" not in specs
    assert {s.namespace for s in specs.values()} == {"/robot_b"}
    assert all(s.parameters["device_file"] == "/etc/robot_b.yaml" for s in specs.values())
    default = {s.name: s for s in m.node_specs()}
    assert {s.namespace for s in default.values()} == {""} and "sim_clock" in default


def test_a_bad_namespace_or_enabled_value_is_named():
    m = bringup.load_manifest("kitchen")
    with pytest.raises(ManifestError, match=r"nodes\[\d\]\.namespace: 'robot a' is not a valid ROS namespace"):
        m.node_specs({"namespace": "robot a"})
    with pytest.raises(ManifestError, match=r"nodes\[0\]\.enabled: expected true or false"):
        m.node_specs({"with_clock": "maybe"})
