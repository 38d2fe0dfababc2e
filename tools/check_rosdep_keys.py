"""Check the rosdep keys of both package.xml files against a ros/rosdistro checkout.

    python tools/check_rosdep_keys.py ROSDISTRO_DIR [--distro kilted] [--write] [--commit SHA]

A key resolves when it is a package released in <distro>/distribution.yaml or a rule of
rosdep/base.yaml or rosdep/python.yaml; `cookwala_msgs` resolves locally (`rosdep install
--from-paths` names both package paths). Prints one line per key and exits 1 if any is missing.
`--write` records the result in tools/rosdep_keys.yaml, which test/foundation/test_rosdep_keys.py
checks the package.xml files against (CI has no rosdistro checkout and no network).
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE_FILES = (ROOT / "package.xml", ROOT / "cookwala_msgs" / "package.xml")
LOCAL_PACKAGES = ("cookwala_msgs", "cookwala_ros")
KEYS_FILE = ROOT / "tools" / "rosdep_keys.yaml"
DEPEND_TAGS = ("depend", "buildtool_depend", "build_depend", "build_export_depend", "exec_depend",
               "test_depend", "doc_depend")


def package_keys() -> dict[str, list[str]]:
    """package.xml file (relative) -> sorted rosdep keys it names."""
    out = {}
    for path in PACKAGE_FILES:
        root = ET.parse(path).getroot()
        keys = {el.text.strip() for tag in DEPEND_TAGS for el in root.findall(tag)}
        out[str(path.relative_to(ROOT))] = sorted(keys)
    return out


def resolve(rosdistro: pathlib.Path, distro: str) -> tuple[dict[str, str], str]:
    packages = {}
    dist = yaml.safe_load((rosdistro / distro / "distribution.yaml").read_text())
    for repo, spec in dist["repositories"].items():
        release = spec.get("release") or {}
        if release:
            for name in release.get("packages", [repo]):
                packages[name] = f"{distro} package ({repo})"
    rules = {}
    for name in ("base.yaml", "python.yaml"):
        for key in yaml.safe_load((rosdistro / "rosdep" / name).read_text()):
            rules[key] = f"rosdep/{name} rule"
    commit = subprocess.run(["git", "-C", str(rosdistro), "rev-parse", "HEAD"], capture_output=True, text=True)
    return {**rules, **packages}, commit.stdout.strip() if commit.returncode == 0 else "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rosdistro", type=pathlib.Path)
    parser.add_argument("--distro", default="kilted")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--commit", default="", help="rosdistro commit to record (when ROSDISTRO_DIR is no git checkout)")
    args = parser.parse_args(argv)
    known, commit = resolve(args.rosdistro, args.distro)
    commit = args.commit or commit
    keys = sorted({k for ks in package_keys().values() for k in ks})
    missing = []
    resolved = {}
    for key in keys:
        how = "local package (rosdep install --from-paths names both)" if key in LOCAL_PACKAGES else known.get(key)
        print(f"{key:32s} {how or 'MISSING'}")
        if how is None:
            missing.append(key)
        else:
            resolved[key] = how
    if args.write and not missing:
        header = (f"# rosdep keys of package.xml and cookwala_msgs/package.xml and how each resolves for\n"
                  f"# {args.distro}, checked by tools/check_rosdep_keys.py against ros/rosdistro at {commit}.\n"
                  f"# test/foundation/test_rosdep_keys.py fails when a package.xml names a key not listed here.\n")
        KEYS_FILE.write_text(header + yaml.safe_dump({"distro": args.distro, "rosdistro_commit": commit,
                                                      "keys": resolved}, sort_keys=True, width=120))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
