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


# Simulator code stays in the simulated kitchen: only the sim nodes (and the sim package itself)
# import cookwala_ros.sim; the executor and the safety monitor never reach it, not even through
# another module of the package (the robot model they share lives in cookwala_ros/robot/).
SIM_PACKAGE = "cookwala_ros.sim"
SIM_NODES = ("ros/sim_demo.py", "ros/sim_clock_node.py")
PRODUCTION_ENTRY_POINTS = ("cookwala_ros.ros.executor_node", "cookwala_ros.ros.safety_monitor_node")


def _is_sim_node(path: pathlib.Path) -> bool:
    rel = path.relative_to(PACKAGE).as_posix()
    return rel in SIM_NODES or (rel.startswith("ros/") and rel.endswith("_sim_node.py"))


def _imports_sim(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m == SIM_PACKAGE or m.startswith(SIM_PACKAGE + "."))


def _module_file(module: str) -> pathlib.Path | None:
    parts = module.split(".")
    if parts[0] != "cookwala_ros":
        return None
    base = PACKAGE.parent.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _closure(module: str) -> dict[str, set[str]]:
    """Every cookwala_ros module `module` imports, directly or through others: module -> its imports."""
    seen: dict[str, set[str]] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = _module_file(name)
        if path is None:
            continue
        seen[name] = imported_modules(path)
        for imported in seen[name]:
            parts = imported.split(".")
            todo.extend(".".join(parts[:i]) for i in range(2, len(parts) + 1))  # packages' __init__ too
    return seen


def test_only_sim_nodes_import_the_simulator():
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if (PACKAGE / "sim") in path.parents or _is_sim_node(path):
            continue
        bad = _imports_sim(imported_modules(path))
        if bad:
            offenders[str(path.relative_to(PACKAGE.parent))] = bad
    assert offenders == {}, f"only sim nodes may import {SIM_PACKAGE}: {offenders}"


def test_executor_and_monitor_never_reach_the_simulator():
    for entry in PRODUCTION_ENTRY_POINTS:
        closure = _closure(entry)
        assert len(closure) > 5, f"{entry}: import closure not followed ({sorted(closure)})"
        reached = {name: _imports_sim(imports) for name, imports in closure.items() if _imports_sim(imports)}
        assert reached == {}, f"{entry} reaches the simulator through {reached}"


def test_the_sim_rule_sees_a_sim_import(tmp_path):
    assert _imports_sim({"cookwala_ros.sim.heater", "cookwala_ros.robot.description"}) == ["cookwala_ros.sim.heater"]
    assert _is_sim_node(PACKAGE / "ros" / "heater_sim_node.py") and not _is_sim_node(PACKAGE / "ros" / "executor_node.py")
    closure = _closure("cookwala_ros.ros.arm_sim_node")
    assert "cookwala_ros.sim.arm_model" in closure  # the closure follows into the sim package
