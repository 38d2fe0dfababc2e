"""`cookwala-ros recipes add FILE... | list`: manage the executor's recipe library (decision 5).

The library is a folder of `*.cookwala.json` files: `--library DIR`, else the device file's
`executor.recipe_library`, else `<executor.data_dir>/recipes`. `add` checks each file (Recipe
schema, its own `cookwala` version is 0.2.x, embedded hash; the signature too when the device
requires signed recipes) before it is installed; `list` shows id, revision and hash of every
usable recipe and the files skipped.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from cookwala_ros.device import DeviceConfigError, load_device_config, load_trusted_keys
from cookwala_ros.executor.library import LibraryError, RecipeLibrary, check_recipe_file, require_supported


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--library", metavar="DIR", help="recipe library folder (default: from the device file)")
    parser.add_argument("--device", metavar="FILE", help="device file (default: the package's config/device.yaml)")
    sub = parser.add_subparsers(dest="action", required=True)
    add = sub.add_parser("add", help="check recipe files and install them into the library")
    add.add_argument("files", nargs="+", metavar="FILE")
    sub.add_parser("list", help="list the recipes in the library")


def _library_dir(args: argparse.Namespace, device) -> pathlib.Path:
    if args.library:
        return pathlib.Path(args.library).expanduser()
    section = device.executor
    if section.get("recipe_library"):
        return device.resolve(section["recipe_library"])
    return pathlib.Path(section.get("data_dir") or "~/.local/share/cookwala_ros").expanduser() / "recipes"


def run(args: argparse.Namespace) -> int:
    try:
        device = load_device_config(args.device)
        keys = load_trusted_keys(device)
    except DeviceConfigError as exc:
        print(f"recipes: {exc}", file=sys.stderr)
        return 2
    library = RecipeLibrary(_library_dir(args, device))
    if args.action == "list":
        for recipe in sorted(library.recipes(), key=lambda r: (r.id, r.revision)):
            print(f"{recipe.id}\trev {recipe.revision}\t{recipe.hash}\t{recipe.path.name}")
        for problem in library.problems:
            print(f"skipped: {problem}", file=sys.stderr)
        return 0
    status = 0
    for name in args.files:
        try:
            checked = require_supported(check_recipe_file(name))
            if device.executor.get("require_signed_recipes"):
                from cookwala_ros.core.trust import verify_document

                verdict = verify_document(checked.document, keys)
                if not verdict:
                    print(f"{name}: not installed: the device requires signed recipes and the signature"
                          f" does not verify ({verdict.reason}: {verdict.detail})", file=sys.stderr)
                    status = 1
                    continue
            installed = library.add(name)
        except LibraryError as exc:
            print(f"not installed: {exc}", file=sys.stderr)
            status = max(status, 2 if "cannot read" in str(exc) else 1)
            continue
        print(f"installed {installed.id} {installed.hash} -> {installed.path}")
    return status
