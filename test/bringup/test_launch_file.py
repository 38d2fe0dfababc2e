"""launch/sim_kitchen.launch.py builds launch_ros Nodes from the same manifest as `up`.

Needs `launch` and `launch_ros`, which exist in ROS 2 workspaces but not as PyPI wheels: here
the test skips, and the manifest -> node logic it relies on is covered by test_manifest.py.
"""

from __future__ import annotations

import importlib.util
import pathlib

import pytest
import yaml

# launch_ros first: from a checkout, the repo's own launch/ folder imports as an empty
# namespace package called `launch`, so importorskip("launch") alone proves nothing.
launch_ros = pytest.importorskip(
    "launch_ros", reason="`launch_ros` is not installed (no PyPI wheel; available in ROS 2 workspaces)")

import launch  # noqa: E402
from launch.actions import DeclareLaunchArgument, OpaqueFunction  # noqa: E402

from cookwala_ros import bringup  # noqa: E402

UNSPECIFIED_NS = launch_ros.actions.Node.UNSPECIFIED_NODE_NAMESPACE
LAUNCH_FILE = pathlib.Path(__file__).resolve().parents[2] / "launch" / "sim_kitchen.launch.py"


def load_launch_file():
    spec = importlib.util.spec_from_file_location("sim_kitchen_launch", LAUNCH_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def nodes_for(**launch_arguments):
    description = load_launch_file().generate_launch_description()
    context = launch.LaunchContext()
    for name, value in launch_arguments.items():
        context.launch_configurations[name] = value
    for entity in description.entities:
        if isinstance(entity, DeclareLaunchArgument):
            entity.visit(context)
    (opaque,) = [e for e in description.entities if isinstance(e, OpaqueFunction)]
    nodes = opaque.execute(context)
    for node in nodes:
        node._perform_substitutions(context)  # expands name, namespace, parameters, remaps
    return nodes


def node_parameters(node) -> dict:
    """Parameters a launched node would get: its generated parameter files, merged in order."""
    merged = {}
    for path, is_file in node._Node__expanded_parameter_arguments:
        assert is_file
        data = yaml.safe_load(pathlib.Path(path).read_text())
        for section in data.values():
            merged.update(section["ros__parameters"])
    return merged


def test_show_args_lists_every_argument_of_every_shipped_scene():
    description = load_launch_file().generate_launch_description()
    declared = {arg.name: arg for arg in description.get_launch_arguments()}
    assert {"scene", "manifest", "use_sim_time"} <= set(declared)
    for scene in bringup.available_scenes():
        for name in bringup.load_manifest(scene).arguments:
            assert name in declared, f"{scene}: {name} not in --show-args"
            assert declared[name].default_value and declared[name].description
    assert "kitchen: 8080" in declared["http_port"].description  # which scene has it, with its default


@pytest.mark.parametrize("given, message", [
    ({"scene": "kitchen", "htp_port": "1234"}, "unknown argument 'htp_port' for scene 'kitchen': did you mean 'http_port'?"),
    ({"real_time_factr": "5"}, "did you mean 'real_time_factor'?"),
    ({"http_port": "8081"}, "argument 'http_port' is not one of scene 'sim_kitchen'"),  # the kitchen's, not this one's
])
def test_a_misspelt_or_foreign_argument_stops_the_launch_naming_it(given, message):
    with pytest.raises(bringup.ManifestError) as caught:
        nodes_for(**given)
    assert message in str(caught.value)
    assert "its arguments: " in str(caught.value)


def test_configurations_of_an_including_launch_file_are_left_alone():
    assert nodes_for(scene="kitchen", robot_model="ur5e", gui="false")  # nothing like a scene argument


def test_builds_one_node_per_manifest_entry():
    nodes = nodes_for(real_time_factor="40.0")
    expected = bringup.load_manifest("sim_kitchen").node_specs({"real_time_factor": 40.0})
    # no namespace given: launch_ros leaves it to an enclosing PushRosNamespace (root by default)
    assert [(n.node_package, n.node_executable, n.node_name.replace(UNSPECIFIED_NS, "")) for n in nodes] == [
        (s.package, s.executable, s.fqn) for s in expected
    ]
    by_name = {n.node_name.replace(UNSPECIFIED_NS, ""): n for n in nodes}
    assert node_parameters(by_name["/sim_clock"])["use_sim_time"] is False
    assert node_parameters(by_name["/arm_sim"])["use_sim_time"] is True
    assert 40.0 in node_parameters(by_name["/sim_clock"]).values()


def test_use_sim_time_argument_overrides_the_manifest():
    nodes = nodes_for(use_sim_time="false")
    assert all(node_parameters(n)["use_sim_time"] is False for n in nodes)


def test_other_manifests_namespaces_and_remaps(tmp_path):
    manifest = tmp_path / "scene.yaml"
    manifest.write_text(yaml.safe_dump({
        "format": 1, "arguments": {"rate": 5.0},
        "nodes": [{"name": "arm", "package": "cookwala_ros", "executable": "arm_sim", "namespace": "robot1",
                   "parameters": {"rate_hz": "$(arg rate)"}, "remappings": {"/joint_states": "joint_states"}}],
    }))
    (node,) = nodes_for(manifest=str(manifest), rate="7.5")
    assert node.node_name == "/robot1/arm"
    assert node.expanded_remapping_rules == [("/joint_states", "joint_states")]
    assert node_parameters(node)["rate_hz"] == 7.5


def test_the_namespace_argument_reaches_every_node():
    nodes = nodes_for(scene="kitchen", namespace="robot_a", with_clock="false")
    assert nodes and all(node.expanded_node_namespace == "/robot_a" for node in nodes)
    assert "sim_clock" not in {node.node_executable for node in nodes}
