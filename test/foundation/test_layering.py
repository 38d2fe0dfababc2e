"""The one rule between layers: only cookwala_ros/ros/ imports rclpy.

Checked on the syntax tree, so an import inside a function or under `if TYPE_CHECKING` counts,
and a string that merely mentions rclpy does not.
"""

from __future__ import annotations

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "cookwala_ros"
ROS_DIR = PACKAGE / "ros"
FORBIDDEN_OUTSIDE_ROS = ("rclpy",)
# Pure layers must not reach for I/O frameworks either (ARCHITECTURE.md).
PURE_LAYERS = ("core", "robot", "safety", "teaming", "sim")
# ... nor up into the adapters that use them
ADAPTERS = ("cookwala_ros.executor", "cookwala_ros.http", "cookwala_ros.ros", "cookwala_ros.commands",
            "cookwala_ros.bringup", "cookwala_ros.supervisor", "cookwala_ros.cli")
FORBIDDEN_IN_PURE = ("rclpy", "fastapi", "uvicorn", "httpx", "socket", "asyncio", "sqlite3", "subprocess")


def imported_modules(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.add(node.args[0].value)
    return names


def top_level(name: str) -> str:
    return name.split(".")[0]


def test_no_rclpy_outside_ros_package():
    offenders = [
        str(path.relative_to(PACKAGE.parent))
        for path in sorted(PACKAGE.rglob("*.py"))
        if ROS_DIR not in path.parents
        and any(top_level(m) in FORBIDDEN_OUTSIDE_ROS for m in imported_modules(path))
    ]
    assert offenders == [], f"rclpy imported outside cookwala_ros/ros/: {offenders}"


def test_pure_layers_do_no_io_frameworks():
    offenders = {}
    for layer in PURE_LAYERS:
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            bad = sorted(m for m in imported_modules(path) if top_level(m) in FORBIDDEN_IN_PURE)
            if bad:
                offenders[str(path.relative_to(PACKAGE.parent))] = bad
    assert offenders == {}, f"pure layers import I/O frameworks: {offenders}"


def test_pure_layers_never_import_adapters():
    offenders = {}
    for layer in PURE_LAYERS:
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            bad = sorted(m for m in imported_modules(path) if any(m == a or m.startswith(a + ".") for a in ADAPTERS))
            if bad:
                offenders[str(path.relative_to(PACKAGE.parent))] = bad
    assert offenders == {}, f"pure layers import adapter layers: {offenders}"


def test_checker_sees_every_import_form(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os\n"
        "def f():\n    from rclpy.node import Node\n"
        "import importlib\nimportlib.import_module('rclpy.qos')\n"
        "text = 'import rclpy'\n"
    )
    found = imported_modules(sample)
    assert "rclpy.node" in found and "rclpy.qos" in found and "os" in found
    assert "rclpy" not in found  # the string literal is not an import
