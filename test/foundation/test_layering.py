"""The one rule between layers: only cookwala_ros/ros/ imports rclpy.

Checked on the syntax tree, so an import inside a function or under `if TYPE_CHECKING` counts,
and a string that merely mentions rclpy does not.
"""

from __future__ import annotations

import ast
import pathlib
import re

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


# No import cycles in cookwala_ros (issue 14): a cycle hides which module is the lower layer, and
# two modules that need each other are one concept split in two or miss a contract between them
# (the engine and its step runners: steps.RunPorts). Every import counts, a function's and one
# under `if TYPE_CHECKING` too; `from pkg import name` is an edge to pkg.name when that is a module.


def import_graph(root: pathlib.Path, package: str) -> dict[str, set[str]]:
    """Module -> the modules of `package` (under `root`, its parent directory) it imports."""
    modules = {}
    for path in (root / package).rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def module_of(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                           for alias in node.names]
            else:
                continue
            edges.update(m for m in map(module_of, (t for t in targets if t.split(".")[0] == package)) if m)
        edges.discard(name)
        graph[name] = edges
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_import_graph_has_no_cycle():
    graph = import_graph(PACKAGE.parent, "cookwala_ros")
    assert len(graph) > 100 and "cookwala_ros.core.steps" in graph["cookwala_ros.core.engine"]
    assert import_cycles(graph) == []


def test_the_cycle_check_sees_a_cycle_through_a_package_import_and_type_checking(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub.c import C\n")
    (pkg / "sub" / "c.py").write_text("def f():\n    import pkg.sub.a\n")
    (pkg / "d.py").write_text("import os\nfrom pkg.sub import a\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.sub.a"] == {"pkg.sub.b"} and graph["pkg.d"] == {"pkg.sub.a"}
    assert import_cycles(graph) == [["pkg.sub.a", "pkg.sub.b", "pkg.sub.c"]]


# Inside core/ (issue 14): the run (engine, steps) stands on admission (dryrun and the request
# checks), which stands on the domain rules and on trust, which stand on the foundations (data,
# formats, units). A module imports from its own tier or one its tier stands on, never upwards;
# a new module of core/ must be given a tier here, which is where a reader finds its place.
CORE_TIERS = {
    "foundation": ("vocab", "schemas", "json_limits", "yaml_limits", "versions", "timestamps", "canonical", "keys",
                   "units"),
    "trust": ("trust", "disclosure", "conformance", "ledger", "certification"),
    "domain": ("conditions", "heat_model", "presence", "motion", "execution_log", "limits", "allergens",
               "plausibility", "lifecycle", "run_types", "ladder", "pot", "envelope", "sensor_trust", "heat_control"),
    "admission": ("request_checks", "dryrun"),
    "run": ("steps", "engine"),
}
STANDS_ON = {
    "foundation": (),
    "trust": ("foundation",),
    "domain": ("foundation",),
    "admission": ("foundation", "trust", "domain"),
    "run": ("foundation", "trust", "domain", "admission"),
}


def upward_imports(graph: dict[str, set[str]], prefix: str, tiers: dict, stands_on: dict) -> list[str]:
    """Imports between modules under `prefix` that go to a tier the importer does not stand on,
    and modules with no tier."""
    tier_of = {f"{prefix}.{module}": tier for tier, modules in tiers.items() for module in modules}
    problems = [f"{name}: no tier (add it to CORE_TIERS)" for name in sorted(graph)
                if name.startswith(prefix + ".") and name not in tier_of]
    for name in sorted(set(graph) & set(tier_of)):
        mine = tier_of[name]
        problems += [f"{name} ({mine}) imports {target} ({tier_of[target]}), a tier it does not stand on"
                     for target in sorted(graph[name]) if target in tier_of
                     and tier_of[target] != mine and tier_of[target] not in stands_on[mine]]
    return problems


def test_core_modules_import_only_their_tier_and_the_tiers_below():
    graph = import_graph(PACKAGE.parent, "cookwala_ros")
    assert upward_imports(graph, "cookwala_ros.core", CORE_TIERS, STANDS_ON) == []


def test_the_tier_check_names_an_upward_import_and_a_module_without_a_tier():
    graph = {"p.core.vocab": {"p.core.engine"}, "p.core.engine": {"p.core.vocab"}, "p.core.trust": {"p.core.pot"},
             "p.core.pot": set(), "p.core.new": set()}
    tiers = {"foundation": ("vocab",), "trust": ("trust",), "domain": ("pot",), "run": ("engine",)}
    stands_on = {"foundation": (), "trust": ("foundation",), "domain": ("foundation",), "run": ("foundation", "domain")}
    assert upward_imports(graph, "p.core", tiers, stands_on) == [
        "p.core.new: no tier (add it to CORE_TIERS)",
        "p.core.trust (trust) imports p.core.pot (domain), a tier it does not stand on",
        "p.core.vocab (foundation) imports p.core.engine (run), a tier it does not stand on"]


def test_no_core_version_literal_in_the_package():
    """The implemented version lives in one place (cookwala_ros.CORE_VERSION, issue 14): a "0.2.x"
    string written into code drifts from it (StopRequests once said 0.2.0 while the logs said 0.2.1)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "__init__.py":  # CORE_VERSION itself
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"0\.2\.\d+", node.value):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.value!r}")
    assert found == []
