"""The `cookwala-ros` command line.

Each sub-command lives in the module of the same name under `cookwala_ros.commands` and
exposes `add_arguments(parser)` and `run(args) -> int`. Modules are imported only
when their command runs, so `cookwala-ros --help` stays fast and a command that needs rclpy
does not slow down one that does not.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# command name (= module name under cookwala_ros.commands) -> one-line help
COMMANDS: dict[str, str] = {
    "capabilities": "print the device capabilities document built from a device file",
    "validate": "validate Cookwala documents against the Core 0.2 schemas",
    "hash": "print the sha256 hash of a Cookwala document",
    "sign": "sign a Cookwala document with an Ed25519 key",
    "verify": "verify a document's hash and signature against trusted key records",
    "dryrun": "pre-start check of a recipe against a device: who does each step, or why it is refused",
    "team": "teaming (plan: who of several robots does each step of a recipe, and when)",
    "conformance": "run conformance vector files and print a table per file",
    "schemas": "schema tools (bundle: write the offline schema bundle)",
    "log": "execution logs (plot: render a temperature plot)",
    "recipes": "install and list recipes in the executor's recipe library",
    "up": "start the nodes of a bringup manifest as processes (no `launch` needed)",
    "safety": "the safety monitor: status, stop, and the local reset that re-arms it",
    "demo": "run the simulated kitchen demo",
}


def _load(name: str):
    return importlib.import_module(f"cookwala_ros.commands.{name}")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cookwala-ros",
        description="Cookwala Core 0.2 on ROS 2: validate, sign and dry-run recipes, run the kitchen.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if only is not None and name != only:
            # Register a placeholder so `--help` lists every command without importing them all.
            sub.add_parser(name, help=COMMANDS[name], add_help=False)
            continue
        p = sub.add_parser(name, help=COMMANDS[name], description=COMMANDS[name])
        _load(name).add_arguments(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    if command not in COMMANDS:
        parser = build_parser(only="")
        if command is not None:
            parser.error(f"unknown command {command!r}; choose from {', '.join(COMMANDS)}")
        parser.print_help()
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    parser = build_parser(only=command)
    args = parser.parse_args(argv)
    try:
        return int(_load(command).run(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
