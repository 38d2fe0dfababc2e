"""Bringup manifests: one YAML file per scene naming the nodes to start and how.

Two readers share this module: `launch/*.launch.py` (launch_ros `Node` actions, for ROS 2
workspaces) and `cookwala-ros up` (plain child processes, where `launch` is not installed).
Pure Python on purpose: no rclpy, no launch, so both readers and the tests agree on one parse.

Manifest format (`format: 1`)::

    format: 1
    scene: sim_kitchen                 # optional, defaults to the file name
    description: ...
    use_sim_time: true                 # default for every node
    arguments:                         # scene settings, overridable from the command line
      real_time_factor: {default: 20.0, description: ...}
    nodes:
      - name: arm_sim                  # ROS node name (required, unique per namespace)
        package: cookwala_ros
        executable: arm_sim            # console script / ament executable of the package
        namespace: ""                  # optional; may be "$(arg namespace)"
        enabled: $(arg with_clock)     # optional (default true): false leaves the node out
        on_exit: shutdown              # shutdown (default): its exit stops the scene;
                                       # continue: its exit is reported, the scene keeps running
        stop_order: 2                  # when the scene stops: lower numbers stop first (default 0)
        use_sim_time: true             # optional per-node override
        param_files: [config/robot/arm_sim.yaml]   # relative to the share dir (or absolute)
        parameters: {rate_hz: 50.0, joints: {names: [a, b]}}   # nested keys become a.b
        remappings: {/joint_states: /arm/joint_states}

`on_exit` is the supervision policy: a node the scene cannot run without (the plant, the clock)
ends the scene when it exits; a node the safety monitor guards (the executor) is only reported, so
the monitor outlives it and can halt and latch (`cookwala-ros up SCENE --only NODE` restarts it).
`required: true|false` is the older spelling of `on_exit: shutdown|continue`. `stop_order` gives
the order of a scene's stop: every node of the lowest order is interrupted and waited for before
the next order is, so the guarded nodes stop first, then the safety monitor (which halts the
kitchen as it exits, while the controllers still run), then the plant and the clock.

A parameter value (or a list item) written as `$(arg NAME)` takes the argument's value with its
type; inside a longer string it is substituted as text. Inline parameters win over param files
when both have the same type (rcl keeps the first value when types differ), so an integer given
for a float parameter (`--set arm_sim.publish_rate_hz=50`) is turned into a float.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import re
from typing import Any, Iterable, Mapping

import yaml

from cookwala_ros import resources

FORMAT_VERSION = 1
BRINGUP_DIR = ("config", "bringup")

_TOP_KEYS = {"format", "scene", "description", "use_sim_time", "arguments", "nodes"}
_NODE_KEYS = {
    "name", "package", "executable", "namespace", "parameters", "param_files",
    "remappings", "required", "on_exit", "stop_order", "use_sim_time", "description", "enabled",
}
ON_EXIT = ("shutdown", "continue")
_ARG_KEYS = {"default", "description"}
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PACKAGE_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_PARAM_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_NAMESPACE_RE = re.compile(r"^/?([A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*)?/?$")
_ARG_REF = re.compile(r"\$\(arg ([A-Za-z_][A-Za-z0-9_]*)\)")


class ManifestError(ValueError):
    """A manifest, argument or override is invalid; the message names the bad key."""


@dataclasses.dataclass(frozen=True)
class NodeSpec:
    """One node of a scene, fully resolved (arguments substituted, overrides applied)."""

    package: str
    executable: str
    name: str
    namespace: str  # "" or an absolute namespace such as "/kitchen"
    parameters: dict[str, Any]  # flat parameter name -> ROS-typed value, incl. use_sim_time
    param_files: tuple[pathlib.Path, ...]
    remappings: tuple[tuple[str, str], ...]
    on_exit: str = "shutdown"  # one of ON_EXIT
    stop_order: int = 0

    @property
    def required(self) -> bool:
        """Whether the scene stops when this node exits (`on_exit: shutdown`)."""
        return self.on_exit == "shutdown"

    @property
    def fqn(self) -> str:
        """Fully qualified node name, e.g. /kitchen/arm_sim."""
        return f"{self.namespace}/{self.name}"


@dataclasses.dataclass(frozen=True)
class Argument:
    name: str
    default: Any
    description: str = ""


@dataclasses.dataclass(frozen=True)
class Manifest:
    """A validated manifest; `node_specs()` resolves it for given arguments and overrides."""

    path: pathlib.Path
    scene: str
    description: str
    use_sim_time: Any  # bool or an unresolved "$(arg ...)" string
    arguments: dict[str, Argument]
    nodes: tuple[dict[str, Any], ...]  # validated, normalised raw entries

    def node_names(self) -> list[str]:
        return [n["name"] for n in self.nodes]

    def node_specs(
        self,
        arguments: Mapping[str, Any] | None = None,
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
        use_sim_time: bool | None = None,
    ) -> list[NodeSpec]:
        """The nodes to start. `arguments` override argument defaults, `overrides` maps a
        node name to parameters that win over the manifest, `use_sim_time` replaces the scene's
        default (a node that sets its own, such as the /clock publisher, keeps it)."""
        values = self._argument_values(arguments or {})
        overrides = dict(overrides or {})
        unknown = sorted(set(overrides) - set(self.node_names()))
        if unknown:
            raise ManifestError(
                f"override for unknown node {unknown[0]!r} (nodes: {', '.join(self.node_names())})"
            )
        scene_sim_time = _substitute(self.use_sim_time, values, "use_sim_time")
        if use_sim_time is not None:
            scene_sim_time = use_sim_time
        specs = []
        for i, raw in enumerate(self.nodes):
            where = f"nodes[{i}]"
            enabled = _substitute(raw.get("enabled", True), values, f"{where}.enabled")
            if not isinstance(enabled, bool):
                raise ManifestError(f"{where}.enabled: expected true or false, got {enabled!r}")
            if not enabled:
                continue
            namespace = _namespace(_substitute(raw["namespace"], values, f"{where}.namespace"), f"{where}.namespace")
            params = {
                key: _substitute(val, values, f"{where}.parameters.{key}")
                for key, val in raw["parameters"].items()
            }
            node_sim_time = _substitute(raw.get("use_sim_time", scene_sim_time), values, f"{where}.use_sim_time")
            if not isinstance(node_sim_time, bool):
                raise ManifestError(f"{where}.use_sim_time: expected true or false, got {node_sim_time!r}")
            params["use_sim_time"] = node_sim_time
            node_overrides = _flatten(overrides.get(raw["name"], {}), f"--set {raw['name']}")
            if node_overrides:
                from_files = _file_parameters(raw["param_files"], raw["name"], namespace)
                for key, val in node_overrides.items():
                    params[key] = _like(params.get(key, from_files.get(key)), val)
            for key, val in params.items():
                params[key] = _check_value(val, f"{where}.parameters.{key}")
            specs.append(
                NodeSpec(
                    package=raw["package"],
                    executable=raw["executable"],
                    name=raw["name"],
                    namespace=namespace,
                    parameters=params,
                    param_files=raw["param_files"],
                    remappings=raw["remappings"],
                    on_exit=raw["on_exit"],
                    stop_order=raw["stop_order"],
                )
            )
        return specs

    def _argument_values(self, given: Mapping[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(given) - set(self.arguments))
        if unknown:
            known = ", ".join(self.arguments) or "none"
            raise ManifestError(f"unknown argument {unknown[0]!r} for scene {self.scene!r} (arguments: {known})")
        return {name: given.get(name, arg.default) for name, arg in self.arguments.items()}


# ---------------------------------------------------------------------------------------------
# Loading and validation


def manifest_path(scene_or_path: str | os.PathLike) -> pathlib.Path:
    """A scene name (`sim_kitchen`) or a path to a manifest file."""
    text = os.fspath(scene_or_path)
    candidate = pathlib.Path(text)
    if candidate.is_file():
        return candidate.resolve()
    if os.sep in text or text.endswith((".yaml", ".yml")):
        raise ManifestError(f"manifest file not found: {text}")
    path = resources.share_path(*BRINGUP_DIR, f"{text}.yaml")
    if not path.is_file():
        scenes = ", ".join(available_scenes()) or "none"
        raise ManifestError(f"unknown scene {text!r} (scenes: {scenes}; or give a manifest file path)")
    return path


def available_scenes() -> list[str]:
    folder = resources.share_path(*BRINGUP_DIR)
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []


def load_manifest(scene_or_path: str | os.PathLike) -> Manifest:
    path = manifest_path(scene_or_path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ManifestError(f"{path}: not valid YAML: {exc}") from None
    try:
        return parse_manifest(data, path)
    except ManifestError as exc:
        raise ManifestError(f"{path}: {exc}") from None


def parse_manifest(data: Any, path: pathlib.Path | None = None) -> Manifest:
    """Validate a loaded manifest document. Relative param files resolve against the share dir."""
    path = pathlib.Path(path) if path is not None else pathlib.Path("<manifest>")
    if not isinstance(data, dict):
        raise ManifestError(f"(top level): expected a mapping, got {_kind(data)}")
    _no_unknown_keys(data, _TOP_KEYS, "")
    if "format" not in data:
        raise ManifestError(f"format: missing (expected {FORMAT_VERSION})")
    if data["format"] != FORMAT_VERSION or isinstance(data["format"], bool):
        raise ManifestError(f"format: unsupported version {data['format']!r} (expected {FORMAT_VERSION})")
    scene = data.get("scene", path.stem)
    if not isinstance(scene, str) or not scene:
        raise ManifestError(f"scene: expected a non-empty string, got {scene!r}")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ManifestError(f"description: expected a string, got {_kind(description)}")
    arguments = _parse_arguments(data.get("arguments", {}))
    use_sim_time = data.get("use_sim_time", False)
    _check_bool_or_arg(use_sim_time, "use_sim_time", arguments)
    nodes = data.get("nodes")
    if nodes is None:
        raise ManifestError("nodes: missing")
    if not isinstance(nodes, list) or not nodes:
        raise ManifestError(f"nodes: expected a non-empty list, got {nodes!r}")
    parsed = []
    seen: dict[str, int] = {}
    for i, node in enumerate(nodes):
        entry = _parse_node(node, f"nodes[{i}]", arguments)
        fqn = f"{entry['namespace']}/{entry['name']}"
        if fqn in seen:
            raise ManifestError(f"nodes[{i}].name: duplicate node {fqn!r} (also nodes[{seen[fqn]}])")
        seen[fqn] = i
        parsed.append(entry)
    return Manifest(path, scene, description, use_sim_time, arguments, tuple(parsed))


def _parse_arguments(raw: Any) -> dict[str, Argument]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ManifestError(f"arguments: expected a mapping, got {_kind(raw)}")
    out = {}
    for name, spec in raw.items():
        where = f"arguments.{name}"
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise ManifestError(f"{where}: not a valid argument name")
        if isinstance(spec, dict):
            _no_unknown_keys(spec, _ARG_KEYS, where + ".")
            if "default" not in spec:
                raise ManifestError(f"{where}.default: missing")
            default, description = spec["default"], spec.get("description", "")
        else:
            default, description = spec, ""
        out[name] = Argument(name, _check_value(default, f"{where}.default"), str(description))
    return out


def _parse_node(node: Any, where: str, arguments: Mapping[str, Argument]) -> dict[str, Any]:
    if not isinstance(node, dict):
        raise ManifestError(f"{where}: expected a mapping, got {_kind(node)}")
    _no_unknown_keys(node, _NODE_KEYS, where + ".")
    for key in ("name", "package", "executable"):
        if key not in node:
            raise ManifestError(f"{where}.{key}: missing")
        if not isinstance(node[key], str) or not node[key]:
            raise ManifestError(f"{where}.{key}: expected a non-empty string, got {node[key]!r}")
    if not _NAME_RE.match(node["name"]):
        raise ManifestError(f"{where}.name: {node['name']!r} is not a valid ROS node name")
    if not _PACKAGE_RE.match(node["package"]):
        raise ManifestError(f"{where}.package: {node['package']!r} is not a valid ROS package name")
    if "/" in node["executable"] or node["executable"] in (".", ".."):
        raise ManifestError(f"{where}.executable: {node['executable']!r} must be a bare name, not a path")
    namespace = node.get("namespace") or ""
    if isinstance(namespace, str) and _ARG_REF.search(namespace):
        _check_arg_refs(namespace, f"{where}.namespace", arguments)
        _namespace(_substitute(namespace, {n: a.default for n, a in arguments.items()}, where), f"{where}.namespace")
    else:
        namespace = _namespace(namespace, f"{where}.namespace")
    if "enabled" in node:
        _check_bool_or_arg(node["enabled"], f"{where}.enabled", arguments)
    on_exit = _parse_on_exit(node, where)
    stop_order = node.get("stop_order", 0)
    if not isinstance(stop_order, int) or isinstance(stop_order, bool):
        raise ManifestError(f"{where}.stop_order: expected an integer, got {stop_order!r}")
    if "use_sim_time" in node:
        _check_bool_or_arg(node["use_sim_time"], f"{where}.use_sim_time", arguments)
    params = node.get("parameters") or {}
    if not isinstance(params, dict):
        raise ManifestError(f"{where}.parameters: expected a mapping, got {_kind(params)}")
    params = _flatten(params, f"{where}.parameters")
    if "use_sim_time" in params:
        raise ManifestError(f"{where}.parameters.use_sim_time: set use_sim_time on the node or the scene instead")
    defaults = {name: arg.default for name, arg in arguments.items()}
    for key, val in params.items():
        _check_arg_refs(val, f"{where}.parameters.{key}", arguments)
        _check_value(_substitute(val, defaults, key), f"{where}.parameters.{key}")
    entry = {
        "name": node["name"],
        "package": node["package"],
        "executable": node["executable"],
        "namespace": namespace,
        "on_exit": on_exit,
        "stop_order": stop_order,
        "parameters": params,
        "param_files": _parse_param_files(node.get("param_files") or [], f"{where}.param_files"),
        "remappings": _parse_remappings(node.get("remappings") or {}, f"{where}.remappings"),
    }
    if "use_sim_time" in node:
        entry["use_sim_time"] = node["use_sim_time"]
    if "enabled" in node:
        entry["enabled"] = node["enabled"]
    return entry


def _namespace(value: Any, where: str) -> str:
    """'' or '/' -> '' (the root); 'robot_a' or '/robot_a/' -> '/robot_a'."""
    if not isinstance(value, str) or not _NAMESPACE_RE.match(value):
        raise ManifestError(f"{where}: {value!r} is not a valid ROS namespace")
    return "/" + value.strip("/") if value.strip("/") else ""


def _parse_on_exit(node: dict, where: str) -> str:
    """`on_exit`, or its older spelling `required` (true = shutdown, false = continue)."""
    on_exit = node.get("on_exit")
    if on_exit is not None and on_exit not in ON_EXIT:
        raise ManifestError(f"{where}.on_exit: expected {' or '.join(ON_EXIT)}, got {on_exit!r}")
    if "required" in node:
        required = node["required"]
        if not isinstance(required, bool):
            raise ManifestError(f"{where}.required: expected true or false, got {required!r}")
        implied = "shutdown" if required else "continue"
        if on_exit is not None and on_exit != implied:
            raise ManifestError(f"{where}.required: {required!r} contradicts on_exit: {on_exit}")
        on_exit = implied
    return on_exit or "shutdown"


def _parse_param_files(raw: Any, where: str) -> tuple[pathlib.Path, ...]:
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        raise ManifestError(f"{where}: expected a list of file paths, got {_kind(raw)}")
    files = []
    for i, item in enumerate(raw):
        if not isinstance(item, str) or not item:
            raise ManifestError(f"{where}[{i}]: expected a file path string, got {item!r}")
        path = pathlib.Path(item)
        if not path.is_absolute():
            path = resources.share_path(item)
        if not path.is_file():
            raise ManifestError(f"{where}[{i}]: file not found: {path}")
        files.append(path)
    return tuple(files)


def _parse_remappings(raw: Any, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(raw, dict):
        raise ManifestError(f"{where}: expected a mapping from name to new name, got {_kind(raw)}")
    out = []
    for src, dst in raw.items():
        if not isinstance(src, str) or not src or not isinstance(dst, str) or not dst:
            raise ManifestError(f"{where}.{src}: expected non-empty names, got {src!r}: {dst!r}")
        if ":=" in src or ":=" in dst:
            raise ManifestError(f"{where}.{src}: names must not contain ':='")
        out.append((src, dst))
    return tuple(out)


def _flatten(params: Mapping[str, Any], where: str, prefix: str = "") -> dict[str, Any]:
    """Nested mappings become dotted parameter names, as in a ROS parameters file."""
    flat: dict[str, Any] = {}
    for key, val in params.items():
        if not isinstance(key, str):
            raise ManifestError(f"{where}: parameter name {key!r} is not a string")
        name = f"{prefix}{key}"
        if not _PARAM_RE.match(name):
            raise ManifestError(f"{where}.{name}: not a valid parameter name")
        if isinstance(val, dict):
            if not val:
                raise ManifestError(f"{where}.{name}: empty mapping has no parameter value")
            flat.update(_flatten(val, where, name + "."))
        else:
            flat[name] = val
    return flat


def _check_value(val: Any, where: str) -> Any:
    """A value ROS can hold as a parameter: bool, int, float, str or a homogeneous list."""
    if isinstance(val, (bool, int, float, str)):
        return val
    if isinstance(val, list):
        if not val:
            raise ManifestError(f"{where}: an empty list has no parameter type; leave it out")
        kinds = {_scalar_kind(item, f"{where}[{i}]") for i, item in enumerate(val)}
        if kinds == {"int", "float"}:
            return [float(item) for item in val]
        if len(kinds) > 1:
            raise ManifestError(f"{where}: list mixes {' and '.join(sorted(kinds))}; ROS arrays hold one type")
        return list(val)
    if val is None:
        raise ManifestError(f"{where}: null is not a parameter value")
    raise ManifestError(f"{where}: {_kind(val)} is not a parameter value")


def _scalar_kind(item: Any, where: str) -> str:
    if isinstance(item, bool):
        return "bool"
    if isinstance(item, int):
        return "int"
    if isinstance(item, float):
        return "float"
    if isinstance(item, str):
        return "str"
    raise ManifestError(f"{where}: {_kind(item)} is not allowed in a parameter list")


def _check_bool_or_arg(val: Any, where: str, arguments: Mapping[str, Argument]) -> None:
    if isinstance(val, bool):
        return
    if isinstance(val, str) and _ARG_REF.fullmatch(val.strip()):
        _check_arg_refs(val, where, arguments)
        return
    raise ManifestError(f"{where}: expected true, false or $(arg NAME), got {val!r}")


def _check_arg_refs(val: Any, where: str, arguments: Mapping[str, Argument]) -> None:
    items = val if isinstance(val, list) else [val]
    for item in items:
        if isinstance(item, str):
            for ref in _ARG_REF.findall(item):
                if ref not in arguments:
                    known = ", ".join(arguments) or "none"
                    raise ManifestError(f"{where}: unknown argument $(arg {ref}) (arguments: {known})")


def _substitute(val: Any, values: Mapping[str, Any], where: str) -> Any:
    if isinstance(val, list):
        return [_substitute(item, values, f"{where}[{i}]") for i, item in enumerate(val)]
    if not isinstance(val, str):
        return val
    whole = _ARG_REF.fullmatch(val.strip())
    if whole:
        return values[whole.group(1)]
    return _ARG_REF.sub(lambda m: _text(values[m.group(1)]), val)


def _file_parameters(files: Iterable[pathlib.Path], name: str, namespace: str) -> dict[str, Any]:
    """Parameters the node's files give it (plain keys only: /**, name, /name, /ns/name).

    Used to keep an override's type: rcl ignores a later value whose type differs.
    """
    keys = ("/**", name, f"/{name}", f"{namespace}/{name}", f"{namespace.lstrip('/')}/{name}")
    found: dict[str, Any] = {}
    for path in files:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError):
            continue
        for key in keys:
            section = data.get(key) if isinstance(data, dict) else None
            params = section.get("ros__parameters") if isinstance(section, dict) else None
            if isinstance(params, dict):
                try:
                    found.update(_flatten(params, str(path)))
                except ManifestError:
                    pass
    return found


def _like(current: Any, new: Any) -> Any:
    """An integer override of a float parameter stays a float (`--set arm.rate_hz=20`)."""
    if isinstance(current, float) and isinstance(new, int) and not isinstance(new, bool):
        return float(new)
    if isinstance(current, list) and any(isinstance(v, float) for v in current) and isinstance(new, list):
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in new):
            return [float(v) for v in new]
    return new


def _text(val: Any) -> str:
    return ("true" if val else "false") if isinstance(val, bool) else str(val)


def _no_unknown_keys(mapping: dict, allowed: set[str], prefix: str) -> None:
    for key in mapping:
        if key not in allowed:
            raise ManifestError(f"{prefix}{key}: unknown key (allowed: {', '.join(sorted(allowed))})")


def _kind(val: Any) -> str:
    return {dict: "a mapping", list: "a list", type(None): "null"}.get(type(val), type(val).__name__)


# ---------------------------------------------------------------------------------------------
# Command-line overrides


def parse_value(text: str) -> Any:
    """A command-line value typed as ROS would type it (YAML): 1 -> int, 1.5 -> float, true -> bool."""
    try:
        val = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return text if val is None or isinstance(val, dict) else val


def parse_set_options(items: Iterable[str]) -> dict[str, dict[str, Any]]:
    """`node.param=value` strings -> {node: {param: value}}."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        target, sep, value = item.partition("=")
        node, dot, param = target.partition(".")
        if not sep or not dot or not node or not param:
            raise ManifestError(f"--set {item!r}: expected NODE.PARAM=VALUE")
        out.setdefault(node, {})[param] = parse_value(value)
    return out
