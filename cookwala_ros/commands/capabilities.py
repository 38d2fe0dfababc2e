"""`cookwala-ros capabilities [--device FILE]`: print the capabilities document of a device file."""

from __future__ import annotations

import argparse
import json
import sys

from cookwala_ros.capabilities import capabilities_document
from cookwala_ros.device import DeviceConfigError, load_device_config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", metavar="FILE", help="device file (default: the package's config/device.yaml)")


def run(args: argparse.Namespace) -> int:
    try:
        config = load_device_config(args.device)
    except DeviceConfigError as exc:
        print(f"cookwala-ros capabilities: {exc}", file=sys.stderr)
        return 2
    json.dump(capabilities_document(config), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0
