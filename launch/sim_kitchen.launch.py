"""Launch a cookwala_ros scene from its bringup manifest (default: the simulated kitchen).

    ros2 launch cookwala_ros sim_kitchen.launch.py [scene:=NAME | manifest:=PATH]
        [real_time_factor:=20.0] [use_sim_time:=true|false] [device_file:=FILE] [namespace:=NS]
        [ARGUMENT:=VALUE ...]

The nodes, parameters and remappings come from config/bringup/<scene>.yaml, read by
`cookwala_ros.bringup` exactly as `cookwala-ros up` reads them. Any argument the manifest
declares can be given as `NAME:=VALUE`; `--show-args` lists every argument of the shipped scenes
(empty = the scene's default). An argument the chosen scene does not have, or a near miss of one
(`htp_port:=8080`), stops the launch with a message naming it and the scene's arguments; other
launch configurations (those of a launch file that includes this one) are left alone. A node
with `on_exit: shutdown` shuts the launch down when it exits; one with `on_exit: continue` is
only logged, with the `cookwala-ros up --only` line that restarts it, and the rest of the scene
keeps running (so the safety monitor outlives the executor it guards).

`stop_order` is not mirrored: launch sends SIGINT to every node at once on shutdown. Where the
order matters (the monitor's halt reaching live controllers), use `cookwala-ros up`, or stop the
guarded nodes first.
"""

from __future__ import annotations

import difflib

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction, Shutdown
from launch_ros.actions import Node

from cookwala_ros import bringup

DEFAULT_SCENE = "sim_kitchen"
OWN_ARGUMENTS = ("scene", "manifest", "use_sim_time")  # this file's; the rest are the scenes'


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


def scene_arguments() -> dict[str, str]:
    """Every argument of the shipped scenes: name -> description, with the scenes that have it."""
    found: dict[str, tuple[str, list[str]]] = {}
    for scene in bringup.available_scenes():
        manifest = bringup.load_manifest(scene)
        for name, argument in manifest.arguments.items():
            description, scenes = found.setdefault(name, (" ".join(argument.description.split()), []))
            scenes.append(f"{scene}: {argument.default!r}")
    return {name: f"{description} [empty = the scene's default; {', '.join(scenes)}]"
            for name, (description, scenes) in sorted(found.items())}


def check_arguments(config: dict, manifest: bringup.Manifest, shipped: list[str]) -> None:
    """A shipped scene's argument that this scene lacks, or a near miss of an argument, is refused."""
    known = sorted(set(OWN_ARGUMENTS) | set(manifest.arguments))
    listed = ", ".join(sorted(manifest.arguments)) or "none"
    for name, value in sorted(config.items()):
        if name in known:
            continue
        if name in shipped:
            if value != "":
                raise bringup.ManifestError(f"argument {name!r} is not one of scene {manifest.scene!r} "
                                            f"(its arguments: {listed})")
            continue
        near = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
        if near:
            raise bringup.ManifestError(f"unknown argument {name!r} for scene {manifest.scene!r}: did you mean "
                                        f"{near[0]!r}? (its arguments: {listed})")


def scene_nodes(context, *_args, **_kwargs) -> list[Node]:
    """Reads the manifest once the launch arguments are known."""
    config = context.launch_configurations
    manifest = bringup.load_manifest(config.get("manifest") or config.get("scene") or DEFAULT_SCENE)
    check_arguments(dict(config), manifest, list(scene_arguments()))
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
    own = [
        DeclareLaunchArgument("scene", default_value=DEFAULT_SCENE,
                              description=f"scene name: config/bringup/<scene>.yaml "
                                          f"({', '.join(bringup.available_scenes())})"),
        DeclareLaunchArgument("manifest", default_value="",
                              description="path of a bringup manifest; wins over scene"),
        DeclareLaunchArgument("use_sim_time", default_value="",
                              description="true/false: the scene default (nodes that set their own keep it); empty keeps the manifest's"),
    ]
    scenes = [DeclareLaunchArgument(name, default_value="", description=description)
              for name, description in scene_arguments().items() if name not in OWN_ARGUMENTS]
    return LaunchDescription([*own, *scenes, OpaqueFunction(function=scene_nodes)])
