"""ament_python package cookwala_ros (also pip-installable into a venv)."""

import os
import runpy
from glob import glob

from setuptools import find_packages, setup

package_name = "cookwala_ros"

# Shared data installed under share/cookwala_ros, keeping the folder structure
# (cookwala_ros.resources finds it there when not running from a checkout).
SHARED_DIRS = ("launch", "config", "schemas", "conformance", "examples")


def shared_data_files():
    entries = {}
    for top in SHARED_DIRS:
        for path in glob(os.path.join(top, "**", "*"), recursive=True):
            if os.path.isfile(path) and "__pycache__" not in path:
                target = os.path.join("share", package_name, os.path.dirname(path))
                entries.setdefault(target, []).append(path)
    return sorted(entries.items())


# ROS executables: `ros2 run cookwala_ros <name>` in a workspace, `<name>` on PATH in the venv.
# The table lives in the package (the scene runner reads it too); read here without importing it.
NODE_EXECUTABLES = runpy.run_path(os.path.join("cookwala_ros", "bringup", "executables.py"))["NODE_EXECUTABLES"]

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(include=["cookwala_ros", "cookwala_ros.*"]),
    package_data={"cookwala_ros": ["core/vocabulary/*.json", "core/vocabulary/*.yaml"]},
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        *shared_data_files(),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="cookwala_ros maintainers",
    maintainer_email="maintainers@cookwala-ros.org",
    description="Cookwala Core 0.2 robot cooking on ROS 2: executor, safety monitor, teaming, simulated kitchen.",
    license="Apache-2.0",
    python_requires=">=3.10",
    entry_points={
        "console_scripts": [
            "cookwala-ros = cookwala_ros.cli:main",
            *(f"{name} = {target}" for name, target in NODE_EXECUTABLES.items()),
        ],
    },
)
