"""Bounded YAML parsing for the files the nodes read (device files, packs, poses, key records).

`yaml.safe_load` builds nested nodes recursively, so a file of 1,000 nested `- ` or `[` raises
RecursionError, and an alias can nest a document far deeper than its text (or inside itself).
`loads` first walks the parser's event stream, which PyYAML produces without recursion, and
measures the depth with aliases expanded; only a document within `max_depth` is then loaded,
and an integer longer than any number we use is refused before `int()` parses it.
Every failure is one `YamlInputError` with a one-line reason.
"""

from __future__ import annotations

from typing import Any

import yaml

from cookwala_ros.core.json_limits import MAX_DEPTH, MAX_NUMBER_CHARS


class YamlInputError(ValueError):
    """The text is not acceptable YAML: not UTF-8, malformed, or nested too deeply."""


def _reason(exc: yaml.YAMLError) -> str:
    mark, problem = getattr(exc, "problem_mark", None), getattr(exc, "problem", None)
    if mark is not None and problem:
        return f"not valid YAML at line {mark.line + 1} column {mark.column + 1}: {problem}"
    return f"not valid YAML: {str(exc).splitlines()[0]}"


class _BoundedNumbers(yaml.SafeLoader):
    """SafeLoader that refuses an integer too long to be a number we use before int() runs
    (CPython's own guard raises only past 4,300 digits, after the work)."""

    def construct_yaml_int(self, node):
        if len(node.value) > MAX_NUMBER_CHARS:
            raise yaml.constructor.ConstructorError(
                None, None, f"a number of {len(node.value)} characters (at most {MAX_NUMBER_CHARS})", node.start_mark)
        return super().construct_yaml_int(node)


_BoundedNumbers.add_constructor("tag:yaml.org,2002:int", _BoundedNumbers.construct_yaml_int)


def depth_problem(text: str, max_depth: int = MAX_DEPTH) -> str | None:
    """Why `text` nests deeper than `max_depth` (aliases expanded), or None; stops at the first excess."""
    open_nodes: list[list] = []  # [anchor, height of its deepest child so far]
    heights: dict[str, int] = {}  # anchor -> height of the closed node it names (a scalar is 0)
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            open_nodes.append([event.anchor, 0])
            if len(open_nodes) > max_depth:
                return f"nested more than {max_depth} levels deep"
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, inner = open_nodes.pop()
            height = inner + 1
            if anchor is not None:
                heights[anchor] = height
            if open_nodes:
                open_nodes[-1][1] = max(open_nodes[-1][1], height)
        elif isinstance(event, yaml.ScalarEvent) and event.anchor is not None:
            heights[event.anchor] = 0
        elif isinstance(event, yaml.AliasEvent):
            if any(anchor == event.anchor for anchor, _ in open_nodes):
                return f"the alias *{event.anchor} makes a node contain itself"
            height = heights.get(event.anchor, 0)  # an undefined alias is the loader's error
            if len(open_nodes) + height > max_depth:
                return f"the alias *{event.anchor} nests it more than {max_depth} levels deep"
            if open_nodes:
                open_nodes[-1][1] = max(open_nodes[-1][1], height)
    return None


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse YAML `text` (str, or UTF-8 bytes) within `max_depth`; YamlInputError otherwise."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise YamlInputError(f"not UTF-8 (byte {exc.start})") from None
    try:
        problem = depth_problem(text, max_depth)
        document = None if problem else yaml.load(text, Loader=_BoundedNumbers)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as exc:
        raise YamlInputError(_reason(exc)) from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer beyond CPython's 4,300-digit guard
        raise YamlInputError(f"not YAML this reader accepts ({exc})") from None
    if problem:
        raise YamlInputError(problem)
    return document
