"""Command lines for the nodes of a scene: resolve executables, format `--ros-args`.

`cookwala-ros up` runs each node as `[sys.executable, <console script>, --ros-args ...]`: the
interpreter is this one (children inherit the venv's library-path bootstrap) and PATH plays no
part. Pure Python (no rclpy, no launch).
"""

from __future__ import annotations

import math
import os
import pathlib
import re
import shlex
import sys
from typing import Any, Iterable

from cookwala_ros.bringup.executables import NODE_EXECUTABLES
from cookwala_ros.bringup.manifest import NodeSpec


class ExecutableNotFound(LookupError):
    """A (package, executable) pair that no console script or ament executable provides."""


def resolve_executable(package: str, executable: str) -> list[str]:
    """The argv prefix that runs `executable` of `package` without relying on PATH.

    A console script of the package's Python distribution runs under `sys.executable`, so
    children inherit this interpreter's environment bootstrap. Otherwise the ament index
    (`<prefix>/lib/<package>/<executable>`) is searched, as `ros2 run` does.
    """
    entry = _console_script(package, executable)
    if entry is not None:
        dist, ep = entry
        for file in dist.files or ():
            if file.name == executable and file.parent.name in ("bin", "Scripts", package):
                located = pathlib.Path(os.path.normpath(dist.locate_file(file)))
                if located.is_file():
                    return [sys.executable, str(located)]
        module, _, attr = ep.value.partition(":")
        call = ".".join(["_m"] + attr.split(".")) if attr else "_m.main"
        code = f"import sys, importlib; _m = importlib.import_module({module.strip()!r}); sys.argv[0] = {executable!r}; sys.exit({call.strip()}())"
        return [sys.executable, "-c", code]
    for path in _ament_candidates(package, executable):
        if path.is_file() and os.access(path, os.X_OK):
            with open(path, "rb") as handle:
                first = handle.readline(200)
            if first.startswith(b"#!") and b"python" in first:
                return [sys.executable, str(path)]
            return [str(path)]
    own = NODE_EXECUTABLES.get(executable) if package == "cookwala_ros" else None
    if own is not None:  # an install older than this checkout: run the module's entry point
        module, _, function = own.partition(":")
        code = f"import sys, importlib; sys.argv[0] = {executable!r}; sys.exit(importlib.import_module({module!r}).{function}())"
        return [sys.executable, "-c", code]
    scripts = console_scripts(package)
    hint = f"its console scripts: {', '.join(scripts)}" if scripts else "no installed console scripts or ament executables found"
    raise ExecutableNotFound(f"package {package!r} has no executable {executable!r} ({hint})")


def console_scripts(package: str) -> list[str]:
    found = _package_distribution(package)
    if found is None:
        return []
    return sorted(ep.name for ep in found.entry_points if ep.group == "console_scripts")


def _console_script(package: str, executable: str):
    dist = _package_distribution(package)
    if dist is None:
        return None
    for ep in dist.entry_points:
        if ep.group == "console_scripts" and ep.name == executable:
            return dist, ep
    return None


def _package_distribution(package: str):
    from importlib import metadata

    wanted = _normalise(package)
    for dist in metadata.distributions():
        if _normalise(dist.metadata.get("Name") or "") == wanted:
            return dist
    return None


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _ament_candidates(package: str, executable: str) -> list[pathlib.Path]:
    prefixes = [sys.prefix] + [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    return [pathlib.Path(prefix, "lib", package, executable) for prefix in dict.fromkeys(prefixes)]


def format_param_value(val: Any) -> str:
    """A value in the YAML form `-p name:=value` parses back to the same ROS type."""
    if isinstance(val, bool):
        return "true" if val else "false"
    if isinstance(val, int):
        return str(val)
    if isinstance(val, float):
        if math.isnan(val):
            return ".nan"
        if math.isinf(val):
            return ".inf" if val > 0 else "-.inf"
        text = repr(val)
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(val, str):
        return "'" + val.replace("'", "''") + "'"
    if isinstance(val, list):
        return "[" + ", ".join(format_param_value(item) for item in val) + "]"
    raise TypeError(f"not a parameter value: {val!r}")


def ros_arguments(spec: NodeSpec) -> list[str]:
    """`--ros-args ...` for one node: name, namespace, parameter files, parameters, remaps.

    Parameter files come before `-p` so that inline parameters win, as in launch_ros (rcl keeps
    the last value given, provided both have the same type).
    """
    args = ["--ros-args", "-r", f"__node:={spec.name}"]
    if spec.namespace:
        args += ["-r", f"__ns:={spec.namespace}"]
    for path in spec.param_files:
        args += ["--params-file", str(path)]
    for key, val in spec.parameters.items():
        args += ["-p", f"{key}:={format_param_value(val)}"]
    for src, dst in spec.remappings:
        args += ["-r", f"{src}:={dst}"]
    return args


def node_command(spec: NodeSpec, resolver=resolve_executable) -> list[str]:
    """The full argv that starts one node as a process."""
    return resolver(spec.package, spec.executable) + ros_arguments(spec)


def restart_command(scene: str, node: str, arguments: dict[str, Any] | None = None,
                    sets: Iterable[str] = (), use_sim_time: bool | None = None) -> str:
    """The `cookwala-ros up SCENE --only NODE ...` line that restarts one node of a running scene
    with the parameters the scene gave it (the same scene arguments and --set overrides)."""
    words = ["cookwala-ros", "up", scene, "--only", node]
    for name, val in (arguments or {}).items():
        words += ["--arg", f"{name}={_arg_text(val)}"]
    for item in sets:
        if item.partition(".")[0] == node:
            words += ["--set", item]
    if use_sim_time is not None:
        words.append("--use-sim-time" if use_sim_time else "--no-use-sim-time")
    return " ".join(shlex.quote(w) for w in words)


def _arg_text(val: Any) -> str:
    """A scene argument value as `--arg` parses it back (YAML typing)."""
    if isinstance(val, bool):
        return "true" if val else "false"
    if isinstance(val, float):
        return format_param_value(val)
    return str(val)
