"""Launch a cookwala_ros scene from its bringup manifest (default: the simulated kitchen).

    ros2 launch cookwala_ros sim_kitchen.launch.py [scene:=NAME | manifest:=PATH]
        [real_time_factor:=20.0] [use_sim_time:=true|false] [device_file:=FILE] [namespace:=NS]
        [ARGUMENT:=VALUE ...]

The nodes, parameters and remappings come from config/bringup/<scene>.yaml, read by
`cookwala_ros.bringup` exactly as `cookwala-ros up` reads them. Any argument the manifest
declares can be given as `NAME:=VALUE`. A node with `on_exit: shutdown` shuts the launch down
when it exits; one with `on_exit: continue` is only logged, with the `cookwala-ros up --only`
line that restarts it, and the rest of the scene keeps running (so the safety monitor outlives
the executor it guards).

`stop_order` is not mirrored: launch sends SIGINT to every node at once on shutdown. Where the
order matters (the monitor's halt reaching live controllers), use `cookwala-ros up`, or stop the
guarded nodes first.
"""

from __future__ import annotations

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction, Shutdown
from launch_ros.actions import Node

from cookwala_ros import bringup

DEFAULT_SCENE = "sim_kitchen"


def node_actions(specs: list[bringup.NodeSpec], scene: str, arguments: dict | None = None) -> list[Node]:
    """One launch_ros Node per spec; parameter files first so inline parameters win."""
    actions = []
    for spec in specs:
        kwargs = {}
        if spec.on_exit == "shutdown":
            kwargs["on_exit"] = Shutdown(reason=f"required node {spec.name!r} of scene {scene!r} exited")
        else:
            hint = bringup.restart_command(scene, spec.name, arguments)
            kwargs["on_exit"] = LogInfo(msg=f"node {spec.name!r} of scene {scene!r} exited; the rest of the "
                                        f"scene keeps running; restart it with: {hint}")
        actions.append(
            Node(
                package=spec.package,
                executable=spec.executable,
                name=spec.name,
                namespace=spec.namespace or None,
                parameters=[str(path) for path in spec.param_files] + [dict(spec.parameters)],
                remappings=list(spec.remappings),
                output="screen",
                **kwargs,
            )
        )
    return actions


def scene_nodes(context, *_args, **_kwargs) -> list[Node]:
    """Reads the manifest once the launch arguments are known."""
    config = context.launch_configurations
    manifest = bringup.load_manifest(config.get("manifest") or config.get("scene") or DEFAULT_SCENE)
    arguments = {
        name: bringup.parse_value(config[name])
        for name in manifest.arguments
        if config.get(name, "") != ""
    }
    use_sim_time = None
    if config.get("use_sim_time", "") != "":
        use_sim_time = bringup.parse_value(config["use_sim_time"])
        if not isinstance(use_sim_time, bool):
            raise bringup.ManifestError(f"use_sim_time: expected true or false, got {config['use_sim_time']!r}")
    return node_actions(manifest.node_specs(arguments, None, use_sim_time), manifest.scene, arguments)


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        DeclareLaunchArgument("scene", default_value=DEFAULT_SCENE,
                              description="scene name: config/bringup/<scene>.yaml"),
        DeclareLaunchArgument("manifest", default_value="",
                              description="path of a bringup manifest; wins over scene"),
        DeclareLaunchArgument("use_sim_time", default_value="",
                              description="true/false: the scene default (nodes that set their own keep it); empty keeps the manifest's"),
        DeclareLaunchArgument("real_time_factor", default_value="",
                              description="simulated seconds per wall second; empty keeps the manifest's default"),
        DeclareLaunchArgument("device_file", default_value="",
                              description="the robot's device file, read by every node of the scene (scenes with a "
                                          "device_file argument); empty keeps the manifest's default"),
        DeclareLaunchArgument("namespace", default_value="",
                              description="ROS namespace of the whole robot (scenes with a namespace argument); "
                                          "kitchen-wide names stay absolute"),
        OpaqueFunction(function=scene_nodes),
    ])
