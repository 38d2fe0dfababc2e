"""`cookwala-ros up SCENE`: start the nodes of a bringup manifest as child processes.

For machines without `launch` (pip installs, CI). Ctrl-C or SIGTERM stops every node; a
required node that dies takes the scene down and is named with its exit code.
"""

from __future__ import annotations

import argparse
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


def process_specs(specs: list[bringup.NodeSpec]) -> list[ProcessSpec]:
    """Command lines for every node. Raises ExecutableNotFound naming the node."""
    out = []
    for spec in specs:
        try:
            argv = bringup.node_command(spec)
        except bringup.ExecutableNotFound as exc:
            raise bringup.ExecutableNotFound(f"node {spec.name!r}: {exc}") from None
        out.append(ProcessSpec(spec.name, argv, spec.required))
    return out


def run(args) -> int:
    try:
        manifest, specs = resolve_scene(args)
        procs = process_specs(specs)
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
            if died is not None:
                supervisor.log(f"stopping scene {scene!r}: {died.describe()}")
                return EXIT_FAILED
            return EXIT_OK
        finally:
            codes = supervisor.stop()
            supervisor.log("stopped: " + ", ".join(f"{n} ({c})" for n, c in codes.items()))
