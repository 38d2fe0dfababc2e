"""`cookwala-ros demo`: the simulated kitchen end to end, on sim time.

`cookwala-ros demo --recipe [FILE]` (what `make demo` runs) brings up the kitchen scene with
the executor and the safety monitor and cooks a recipe (default: the sample soup) through the
Core HTTP API, with a progress bar per step, the log summary and a plot.

Without --recipe it runs the hardware-only tour: the sim_kitchen scene (same manifest as
`cookwala-ros up`) driven by the demo driver (arm pose tour, 1 L of water brought to a simmer
and held), then a temperature-vs-time plot.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

from cookwala_ros import bringup, resources
from cookwala_ros.commands import up
from cookwala_ros.supervisor import StopOnSignals, Supervisor

DEFAULT_OUTPUT = pathlib.Path("out", "demo", "sim_kitchen.png")
DEFAULT_RTF = 30.0
EXIT_INTERRUPTED = 130


def add_arguments(parser: argparse.ArgumentParser) -> None:
    up.add_scene_arguments(parser, default_scene="sim_kitchen", default_rtf=DEFAULT_RTF)
    parser.add_argument("--hold-s", type=float, default=120.0, metavar="SECONDS",
                        help="simulated seconds to hold the simmer (default 120)")
    parser.add_argument("--target-c", type=float, default=90.0, metavar="DEGC",
                        help="water temperature to hold, inside the simmer band 85-96 °C (default 90)")
    parser.add_argument("--poses", default=",".join(_default_tour()), metavar="NAME,NAME,...",
                        help="arm poses to visit in order (default: %(default)s)")
    parser.add_argument("--output", type=pathlib.Path, metavar="PNG",
                        help=f"where to write the plot (default: {DEFAULT_OUTPUT} in the repository or here)")
    parser.add_argument("--timeout-s", type=float, default=30.0, metavar="SECONDS",
                        help="wall seconds the scene's topics may take to appear (default 30)")
    parser.add_argument("--quiet-nodes", action="store_true", help="hide the nodes' own log lines")
    parser.add_argument("--recipe", nargs="?", const="", metavar="FILE",
                        help="cook a recipe (default: the sample soup) through the executor's HTTP API")
    parser.add_argument("--clock", choices=("lockstep", "rtf"), default="lockstep",
                        help="with --recipe: lockstep (default; the same cook at any load, --rtf is its ceiling) "
                             "or rtf (/clock = wall time x --rtf)")


def _default_tour() -> tuple[str, ...]:
    from cookwala_ros.ros.sim_demo import DEFAULT_TOUR

    return DEFAULT_TOUR


def output_path(given: pathlib.Path | None) -> pathlib.Path:
    if given is not None:
        return given
    root = resources.share_dir()
    base = root if (root / "setup.py").is_file() and os.access(root, os.W_OK) else pathlib.Path.cwd()
    return base / DEFAULT_OUTPUT


def run(args) -> int:
    if args.recipe is not None:
        from cookwala_ros.ros.recipe_demo import run_recipe_demo

        output = args.output or output_path(None).with_name("recipe.png")
        return run_recipe_demo(rtf=args.rtf if args.rtf and args.rtf != DEFAULT_RTF else 50.0,
                               recipe=args.recipe or None, output=output, quiet_nodes=args.quiet_nodes,
                               clock=args.clock)
    return run_tour(args)


def run_tour(args) -> int:
    from cookwala_ros.ros.sim_demo import DemoError, DemoSettings, run_demo

    try:
        manifest, specs = up.resolve_scene(argparse.Namespace(**{**vars(args), "use_sim_time": True}))
        procs = up.process_specs(specs)
    except (bringup.ManifestError, bringup.ExecutableNotFound) as exc:
        print(f"cookwala-ros demo: {exc}", file=sys.stderr)
        return up.EXIT_USAGE
    settings = DemoSettings(
        tour=tuple(p.strip() for p in args.poses.split(",") if p.strip()),
        target_c=args.target_c,
        hold_s=args.hold_s,
        startup_timeout_s=args.timeout_s,
    )
    low, high = settings.band_c
    if not low < settings.target_c < high:
        print(f"cookwala-ros demo: --target-c must lie inside the simmer band {low}-{high} °C", file=sys.stderr)
        return up.EXIT_USAGE
    output = output_path(args.output)

    def say(line: str) -> None:
        print(f"[demo] {line}", flush=True)

    sink = open(os.devnull, "w") if args.quiet_nodes else None  # noqa: SIM115 - closed below
    supervisor = Supervisor(procs, output=sink)
    started = time.monotonic()
    say(f"starting scene {manifest.scene!r} at real-time factor {args.rtf:g}: {', '.join(p.name for p in procs)}")
    try:
        with StopOnSignals(supervisor):
            supervisor.start()

            def abort() -> str | None:
                if supervisor.stop_requested:
                    return "interrupted"
                for exit_ in supervisor.poll():
                    if exit_.required:
                        return exit_.describe()
                return None

            try:
                result = run_demo(settings, say=say, abort=abort)
            except DemoError as exc:
                if supervisor.stop_requested:
                    say("interrupted")
                    return EXIT_INTERRUPTED
                say(f"FAILED: {exc}")
                return up.EXIT_FAILED
            finally:
                codes = supervisor.stop()
                say("scene stopped: " + ", ".join(f"{n} ({c})" for n, c in codes.items()))
    except OSError as exc:
        say(f"FAILED: {exc}")
        return up.EXIT_FAILED
    finally:
        if sink is not None:
            sink.close()
    write_plot(result, settings, output)
    say(f"arm visited {len(result.poses)} poses: {' -> '.join(p[0] for p in result.poses)}")
    say(f"water reached the simmer after {result.simmer_reached_s - result.heat_start_s:.0f} s of heating and stayed "
        f"at {result.hold_min_c:.1f}-{result.hold_max_c:.1f} °C for {result.hold_end_s - result.simmer_reached_s:.0f} s")
    say(f"scene up in {result.startup_wall_s:.1f} s; then {result.sim_s:.0f} s of sim time in {result.wall_s:.1f} s "
        f"of wall time (effective real-time factor {result.sim_s / result.wall_s:.1f}); total {time.monotonic() - started:.1f} s")
    say(f"plot written to {output}")
    return up.EXIT_OK


def write_plot(result, settings, path: pathlib.Path) -> None:
    """Medium temperature and heater power against sim time, with the simmer band shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t0 = result.heat_start_s
    times = [t - t0 for t, _, _ in result.samples]
    temps = [c for _, c, _ in result.samples]
    powers = [w for _, _, w in result.samples]
    fig, ax = plt.subplots(figsize=(9, 5), dpi=100)
    low, high = settings.band_c
    ax.axhspan(low, high, color="tab:green", alpha=0.12, label=f"simmer band {low:.0f}-{high:.0f} °C")
    ax.axhline(settings.target_c, color="tab:green", linestyle="--", linewidth=0.8, label=f"target {settings.target_c:.0f} °C")
    ax.plot(times, temps, color="tab:red", linewidth=1.8, label="water temperature")
    ax.axvline(result.simmer_reached_s - t0, color="grey", linestyle=":", linewidth=0.8)
    ax.axvline(result.hold_end_s - t0, color="grey", linestyle=":", linewidth=0.8)
    ax.set_xlabel("simulated time since heat on [s]")
    ax.set_ylabel("temperature [°C]")
    ax.set_ylim(min(temps + [low]) - 5, max(temps + [high]) + 5)
    power_ax = ax.twinx()
    power_ax.plot(times, powers, color="tab:blue", linewidth=1.0, alpha=0.7, label="heater power")
    power_ax.set_ylabel("heater power [W]")
    power_ax.set_ylim(0, settings.max_power_w * 1.1)
    lines = ax.get_legend_handles_labels()
    more = power_ax.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], loc="lower right")
    ax.set_title("cookwala_ros simulated kitchen: 1 L of water brought to a simmer")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
