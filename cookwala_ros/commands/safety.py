"""`cookwala-ros safety status|stop|reset`: see why the kitchen is stopped, stop it, re-arm it.

The reset is the local ResetSafety of the safety monitor: it is refused while a trigger still
holds (e.g. the e-stop is still pressed), and it is the only way to clear a latch the monitor
persisted across a restart. Exit codes: 0 done (status: armed), 1 refused (status: not armed),
2 no monitor answered or bad usage.
"""

from __future__ import annotations

import argparse
import getpass
import math
import sys

EXIT_OK, EXIT_REFUSED, EXIT_UNREACHABLE = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--namespace", default="", metavar="NS",
                        help="the robot's ROS namespace (default: the root); its monitor and status are in it")
    parser.add_argument("--monitor", default="safety_monitor", metavar="NODE",
                        help="the safety monitor node, relative to --namespace or absolute (default safety_monitor)")
    parser.add_argument("--timeout", type=float, default=5.0, metavar="SECONDS",
                        help="how long to wait for the monitor (default 5)")
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("status", help="print the monitor's state, its active triggers and the last stop")
    stop = sub.add_parser("stop", help="stop the kitchen through the monitor (latched until a reset)")
    stop.add_argument("--reason", default="stopped from the command line")
    reset = sub.add_parser("reset", help="re-arm the monitor (local reset; refused while a trigger holds)")
    reset.add_argument("--by", default="", metavar="WHO", help="who resets (default: the user name)")


def _latency(value: float) -> str:
    return "-" if value is None or math.isnan(value) else f"{value * 1000:.0f} ms"


def run(args: argparse.Namespace) -> int:
    if not args.timeout > 0:
        print("cookwala-ros safety: --timeout must be > 0", file=sys.stderr)
        return EXIT_UNREACHABLE
    from cookwala_ros.ros import safety_client

    who = getattr(args, "by", "") or f"cli:{getpass.getuser()}"
    try:
        if args.action == "status":
            status = safety_client.read_status(args.timeout, args.namespace)
            print(f"state: {status.state_label}")
            print(f"active triggers: {', '.join(status.active_triggers) or '-'}")
            if status.last_trigger:
                print(f"last stop: {status.last_trigger}: {status.last_trigger_detail}")
                print(f"  halt sent after {_latency(status.last_halt_command_latency_s)}, standstill after "
                      f"{_latency(status.last_standstill_latency_s)}, 0 W after {_latency(status.last_heat_off_latency_s)}")
            print(f"limits: {status.limits_pack_id} ({len(status.active_limit_ids)} limits)")
            return EXIT_OK if status.state == status.STATE_ARMED else EXIT_REFUSED
        if args.action == "stop":
            answer = safety_client.stop(args.monitor, who, args.reason, args.timeout, args.namespace)
        else:
            answer = safety_client.reset(args.monitor, who, args.timeout, args.namespace)
    except safety_client.SafetyClientError as exc:
        print(f"cookwala-ros safety: {exc}", file=sys.stderr)
        return EXIT_UNREACHABLE
    print(f"{answer.state}: {answer.message}")
    if answer.active_triggers:
        print(f"still holding: {', '.join(answer.active_triggers)}")
    return EXIT_OK if answer.accepted else EXIT_REFUSED
