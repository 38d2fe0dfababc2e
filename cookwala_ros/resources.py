"""Where the package's shared data (config/, schemas/, conformance/, examples/, launch/) lives.

From a source checkout (editable install, tests) it is the repository root; from a colcon or
pip install it is `<prefix>/share/cookwala_ros`, as setup.py's data_files put it there.
`COOKWALA_ROS_SHARE` overrides both.
"""

from __future__ import annotations

import functools
import os
import pathlib
import sys

PACKAGE_NAME = "cookwala_ros"
_MARKER = "package.xml"


@functools.lru_cache(maxsize=1)
def share_dir() -> pathlib.Path:
    override = os.environ.get("COOKWALA_ROS_SHARE")
    if override:
        return pathlib.Path(override)
    source_root = pathlib.Path(__file__).resolve().parent.parent
    if (source_root / _MARKER).is_file() and (source_root / "config").is_dir():
        return source_root
    # The install this code was loaded from comes first (colcon puts the package under
    # <install>/<pkg>/lib/pythonX.Y/site-packages/cookwala_ros), then ament prefixes, then the venv.
    candidates = [parent / "share" / PACKAGE_NAME for parent in pathlib.Path(__file__).resolve().parents]
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if prefix:
            candidates.append(pathlib.Path(prefix) / "share" / PACKAGE_NAME)
    candidates.append(pathlib.Path(sys.prefix) / "share" / PACKAGE_NAME)
    for candidate in candidates:
        if (candidate / _MARKER).is_file():
            return candidate
    raise FileNotFoundError(
        f"cannot find the {PACKAGE_NAME} share directory (looked in {', '.join(sorted(set(map(str, candidates))))});"
        " set COOKWALA_ROS_SHARE"
    )


def share_path(*parts: str) -> pathlib.Path:
    """A path inside the share directory, e.g. share_path('config', 'device.yaml')."""
    return share_dir().joinpath(*parts)
