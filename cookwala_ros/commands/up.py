"""`cookwala-ros up SCENE`: start the nodes of a bringup manifest as child processes.

For machines without `launch` (pip installs, CI). Ctrl-C or SIGTERM stops every node in the
manifest's stop order; a node with `on_exit: shutdown` that dies takes the scene down and is named
with its exit code; any other node that dies is reported with the command that restarts it alone
(`--only NODE`, same scene arguments), and the rest of the scene keeps running.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from cookwala_ros import bringup
from cookwala_ros.supervisor import ProcessSpec, StopOnSignals, Supervisor

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_scene_arguments(parser)
    parser.add_argument("--startup-s", type=float, default=10.0, metavar="SECONDS",
                        help="a node that exits within this time after start is a failed start (default 10)")
    parser.add_argument("--grace-s", type=float, default=4.0, metavar="SECONDS",
                        help="time nodes get to stop on SIGINT/SIGTERM before SIGKILL (default 4)")
    parser.add_argument("--dry-run", action="store_true", help="print each node's command line and exit")
    parser.add_argument("--only", action="append", default=[], metavar="NODE",
                        help="start only this node of the scene (repeatable, or comma-separated), with the "
                        "parameters the scene gives it: restarts one node of a running scene")


def add_scene_arguments(parser: argparse.ArgumentParser, default_scene: str | None = None,
                        default_rtf: float | None = None) -> None:
    """Options shared with commands that start a scene (`demo`)."""
    if default_scene is None:
        parser.add_argument("scene", metavar="SCENE_OR_MANIFEST",
                            help="scene name in config/bringup (e.g. sim_kitchen) or a manifest file")
    else:
        parser.add_argument("--scene", default=default_scene, metavar="SCENE_OR_MANIFEST",
                            help=f"scene name or manifest file (default {default_scene})")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="NODE.PARAM=VALUE",
                        help="override a node parameter (repeatable); VALUE is typed like YAML")
    parser.add_argument("--arg", dest="scene_args", action="append", default=[], metavar="NAME=VALUE",
                        help="set a scene argument declared in the manifest (repeatable)")
    parser.add_argument("--rtf", type=float, metavar="FACTOR", default=default_rtf,
                        help="real-time factor of simulated time (sets the real_time_factor argument)"
                        + (f"; default {default_rtf:g}" if default_rtf else ""))
    if default_scene is not None:
        return  # a command that runs a fixed kind of scene decides use_sim_time itself
    sim_time = parser.add_mutually_exclusive_group()
    sim_time.add_argument("--use-sim-time", dest="use_sim_time", action="store_const", const=True,
                          help="nodes use /clock unless the manifest sets otherwise for them")
    sim_time.add_argument("--no-use-sim-time", dest="use_sim_time", action="store_const", const=False,
                          help="nodes use the system clock unless the manifest sets otherwise for them")


def resolve_scene(args) -> tuple[bringup.Manifest, list[bringup.NodeSpec]]:
    """Manifest + resolved node specs from the parsed options. Raises ManifestError."""
    manifest = bringup.load_manifest(args.scene)
    scene_args = {}
    for item in args.scene_args:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise bringup.ManifestError(f"--arg {item!r}: expected NAME=VALUE")
        scene_args[name] = bringup.parse_value(value)
    if args.rtf is not None:
        if "real_time_factor" not in manifest.arguments:
            raise bringup.ManifestError(f"--rtf: scene {manifest.scene!r} has no real_time_factor argument")
        if not args.rtf > 0:
            raise bringup.ManifestError(f"--rtf: must be > 0, got {args.rtf}")
        scene_args["real_time_factor"] = float(args.rtf)
    overrides = bringup.parse_set_options(args.sets)
    specs = manifest.node_specs(scene_args, overrides, args.use_sim_time)
    return manifest, specs


def select_nodes(specs: list[bringup.NodeSpec], only: list[str]) -> list[bringup.NodeSpec]:
    """The nodes named by `--only` (all when none is named). Raises ManifestError."""
    names = [name.strip() for item in only for name in item.split(",") if name.strip()]
    if not names:
        return specs
    known = [s.name for s in specs]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise bringup.ManifestError(f"--only: the scene has no node {unknown[0]!r} (nodes: {', '.join(known)})")
    return [s for s in specs if s.name in names]


def restart_hints(args, manifest: bringup.Manifest) -> dict[str, str]:
    """Per node: the `cookwala-ros up --only` line that restarts it with this scene's settings."""
    arguments = {}
    for item in args.scene_args:
        name, _, value = item.partition("=")
        arguments[name] = bringup.parse_value(value)
    if args.rtf is not None:
        arguments["real_time_factor"] = float(args.rtf)
    scene = str(manifest.path) if pathlib.Path(args.scene).is_file() else args.scene
    return {name: bringup.restart_command(scene, name, arguments, args.sets, args.use_sim_time)
            for name in manifest.node_names()}


def process_specs(specs: list[bringup.NodeSpec], hints: dict[str, str] | None = None) -> list[ProcessSpec]:
    """Command lines for every node. Raises ExecutableNotFound naming the node."""
    out = []
    for spec in specs:
        try:
            argv = bringup.node_command(spec)
        except bringup.ExecutableNotFound as exc:
            raise bringup.ExecutableNotFound(f"node {spec.name!r}: {exc}") from None
        out.append(ProcessSpec(spec.name, argv, spec.required, stop_order=spec.stop_order,
                               restart_hint=(hints or {}).get(spec.name)))
    return out


def run(args) -> int:
    try:
        manifest, specs = resolve_scene(args)
        specs = select_nodes(specs, args.only)
        procs = process_specs(specs, restart_hints(args, manifest))
    except (bringup.ManifestError, bringup.ExecutableNotFound) as exc:
        print(f"cookwala-ros up: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.dry_run:
        for proc in procs:
            print(f"{proc.name}: {' '.join(proc.argv)}")
        return EXIT_OK
    return run_scene(manifest.scene, procs, args.startup_s, args.grace_s)


def run_scene(scene: str, procs: list[ProcessSpec], startup_s: float, grace_s: float) -> int:
    supervisor = Supervisor(procs, grace_s=grace_s)
    with StopOnSignals(supervisor):
        try:
            supervisor.start()
        except OSError as exc:
            print(f"cookwala-ros up: {exc}", file=sys.stderr)
            return EXIT_FAILED
        try:
            failed = supervisor.wait_started(startup_s)
            if failed is not None:
                supervisor.log(f"failed to start scene {scene!r}: {failed.describe()}")
                return EXIT_FAILED
            if not supervisor.stop_requested:
                names = ", ".join(f"{n} (pid {p})" for n, p in supervisor.pids.items())
                supervisor.log(f"scene {scene!r} up: {names}; Ctrl-C to stop")
            died = supervisor.watch()
            if died is not None and died.required:
                supervisor.log(f"stopping scene {scene!r}: {died.describe()}")
                return EXIT_FAILED
            if died is not None:  # the last node left has exited
                supervisor.log(f"no node of scene {scene!r} is left running")
                return EXIT_OK if all(e.returncode == 0 for e in supervisor.exits) else EXIT_FAILED
            return EXIT_OK
        finally:
            codes = supervisor.stop()
            supervisor.log("stopped: " + ", ".join(f"{n} ({c})" for n, c in codes.items()))
