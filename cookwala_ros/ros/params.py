"""Declare a node's parameters from one table, with descriptors, and validate them.

Each node lists its parameters as `ParamSpec`s (name, default, description, limits or
choices, and whether it may change at run time). `declare_parameters` declares them all with
proper ParameterDescriptors (so `ros2 param describe` documents them) and raises
`ParameterError` naming the first bad parameter: the node's main() turns that into a one-line
message and a non-zero exit, before anything is advertised. `reject_invalid` is the matching
on-set-parameters callback for the parameters that may change at run time.

An integer where a double is declared is a double (`-p rate:=2`, `--set node.rate=2`, a YAML
`2`, `ros2 param set node rate 2`), as are integer lists for double lists: rclpy would refuse
them as a type change. Overrides are converted before the declaration, run-time sets by a
pre-set-parameters callback that `declare_parameters` installs.
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.exceptions import (InvalidParameterTypeException, InvalidParameterValueException,
                               ParameterException)
from rclpy.node import Node
from rclpy.parameter import Parameter

Value = Any  # bool | int | float | str | list of one of them

_KIND = {bool: "boolean (true/false)", int: "integer", float: "number", str: "string"}


def _kind(default: Value) -> str:
    if isinstance(default, list):
        inner = {type(v) for v in default}
        return f"list of {_KIND[inner.pop()]}s" if len(inner) == 1 else "list"
    return _KIND.get(type(default), type(default).__name__)


class ParameterError(ValueError):
    """A parameter value the node cannot run with."""

    def __init__(self, name: str, problem: str):
        super().__init__(f"parameter '{name}': {problem}")
        self.name = name
        self.problem = problem


@dataclasses.dataclass(frozen=True)
class ParamSpec:
    name: str
    default: Value  # its type is the parameter's type
    description: str
    minimum: float | None = None  # numbers: inclusive bounds
    maximum: float | None = None
    exclusive_minimum: bool = False  # minimum itself not allowed (e.g. a rate > 0)
    choices: tuple[str, ...] | None = None  # strings: allowed values
    check: Callable[[Value], str | None] | None = None  # extra rule: returns the problem or None
    read_only: bool = True  # False: may be changed with set_parameters while running

    def problem(self, value: Value) -> str | None:
        """Why `value` is not acceptable, or None."""
        expected = type(self.default)
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if expected is list and not isinstance(value, (str, bytes)) and hasattr(value, "__iter__"):
            value = list(value)  # rclpy gives arrays as array.array or list
        if not isinstance(value, expected) or (expected is not bool and isinstance(value, bool)):
            return f"expected a {_kind(self.default)}, got {value!r}"
        if isinstance(value, float) and not math.isfinite(value):
            return f"must be a finite number, got {value}"
        if self.minimum is not None and (value < self.minimum or (self.exclusive_minimum and value == self.minimum)):
            return f"must be {'>' if self.exclusive_minimum else '>='} {self.minimum}, got {value}"
        if self.maximum is not None and value > self.maximum:
            return f"must be <= {self.maximum}, got {value}"
        if self.choices is not None and value not in self.choices:
            return f"must be one of {', '.join(self.choices)}; got {value!r}"
        return self.check(value) if self.check else None

    def descriptor(self) -> ParameterDescriptor:
        text = self.description
        if self.choices:
            text += f" One of: {', '.join(self.choices)}."
        descriptor = ParameterDescriptor(description=text, read_only=self.read_only)
        if self.minimum is not None and self.maximum is not None:
            if isinstance(self.default, float):
                descriptor.floating_point_range = [FloatingPointRange(from_value=float(self.minimum), to_value=float(self.maximum))]
            elif isinstance(self.default, int) and not isinstance(self.default, bool):
                descriptor.integer_range = [IntegerRange(from_value=int(self.minimum), to_value=int(self.maximum), step=1)]
        return descriptor


def _floats_from_integers(spec: ParamSpec, given: Parameter) -> Parameter:
    """`given` as a double (list) when `spec` is one and `given` holds integers; else unchanged."""
    if isinstance(spec.default, float) and given.type_ == Parameter.Type.INTEGER:
        return Parameter(spec.name, Parameter.Type.DOUBLE, float(given.value))
    if (isinstance(spec.default, list) and spec.default and all(isinstance(v, float) for v in spec.default)
            and given.type_ == Parameter.Type.INTEGER_ARRAY):
        return Parameter(spec.name, Parameter.Type.DOUBLE_ARRAY, [float(v) for v in given.value])
    return given


def _coerce_integer_override(node: Node, spec: ParamSpec) -> None:
    """Accept `-p rate:=100` (an integer) for a floating-point parameter, as users expect."""
    overrides = getattr(node, "_parameter_overrides", None)
    if isinstance(overrides, dict) and spec.name in overrides:
        overrides[spec.name] = _floats_from_integers(spec, overrides[spec.name])


def _coerce_integer_sets(node: Node, specs: Sequence[ParamSpec]) -> None:
    """The same for `ros2 param set` at run time: one pre-set-parameters callback per node (rclpy
    concatenates what several return), knowing every table declared on it."""
    by_name = getattr(node, "_cookwala_param_specs", None)
    if by_name is None:
        by_name = node._cookwala_param_specs = {}

        def callback(parameters: list[Parameter]) -> list[Parameter]:
            return [_floats_from_integers(by_name[p.name], p) if p.name in by_name else p for p in parameters]

        node.add_pre_set_parameters_callback(callback)
    by_name.update((spec.name, spec) for spec in specs)


def declare_parameters(node: Node, specs: Sequence[ParamSpec]) -> dict[str, Value]:
    """Declare every spec on `node` and return name -> validated value.

    Raises ParameterError for the first parameter whose value (default or override) is bad.
    """
    values: dict[str, Value] = {}
    overrides = getattr(node, "_parameter_overrides", None) or {}
    for spec in specs:
        _coerce_integer_override(node, spec)
        given = overrides.get(spec.name)
        if given is not None:  # our message before rclpy's descriptor checks give theirs
            problem = spec.problem(given.value)
            if problem:
                raise ParameterError(spec.name, problem)
        try:
            value = node.declare_parameter(spec.name, spec.default, spec.descriptor()).value
        except InvalidParameterTypeException:
            shown = given.value if given is not None else "?"
            raise ParameterError(spec.name, f"expected a {_kind(spec.default)}, got {shown!r}") from None
        except InvalidParameterValueException as exc:
            raise ParameterError(spec.name, str(exc)) from None
        except (ParameterException, TypeError) as exc:  # e.g. declared twice: still one line
            raise ParameterError(spec.name, str(exc)) from None
        problem = spec.problem(value)
        if problem:
            raise ParameterError(spec.name, problem)
        values[spec.name] = float(value) if isinstance(spec.default, float) else value
    _coerce_integer_sets(node, specs)
    return values


def reject_invalid(specs: Iterable[ParamSpec]) -> Callable[[list[Parameter]], SetParametersResult]:
    """An on-set-parameters callback refusing values the specs do not allow (names the parameter)."""
    by_name = {spec.name: spec for spec in specs}

    def callback(parameters: list[Parameter]) -> SetParametersResult:
        for parameter in parameters:
            spec = by_name.get(parameter.name)
            if spec is None:
                continue
            problem = spec.problem(parameter.value)
            if problem:
                return SetParametersResult(successful=False, reason=str(ParameterError(parameter.name, problem)))
        return SetParametersResult(successful=True)

    return callback


def comma_list(text: str) -> list[str]:
    """'a, b,,c' -> ['a', 'b', 'c'] (string parameters holding lists, e.g. joint names)."""
    return [part.strip() for part in text.split(",") if part.strip()]


def read_token_file(name: str, device) -> str | None:
    """The bearer token in file `name` (relative: to the device file), or None when none is named;
    an unreadable or empty file is a `token_file` parameter error."""
    if not name:
        return None
    path = device.resolve(name) if not pathlib.Path(name).is_absolute() else pathlib.Path(name)
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ParameterError("token_file", f"cannot read {path}: {exc.strerror or exc}") from None
    if not token:
        raise ParameterError("token_file", f"{path} is empty")
    return token
