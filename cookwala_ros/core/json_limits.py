"""Bounded JSON parsing: nesting depth and number size are checked before and while parsing.

`json.loads` on hostile text fails in ways that are not "malformed input": 1,000 nested brackets
raise RecursionError, a 100,000-digit integer raises ValueError from int() (CPython's 4,300-digit
guard), `1e999` silently becomes infinity. `loads` here turns each of those into one
`JsonInputError` that says what is wrong and, for a number, where (its JSON pointer). The depth is
measured on the raw text before the parser runs, so no recursion ever starts; numbers are taken
as text by the parser hooks and judged afterwards, when their place in the document is known.

Pure: no I/O, no project imports; every input path (HTTP, CLI, ROS goals) can use it.
"""

from __future__ import annotations

import itertools
import json
import math
import operator
import re
from typing import Any

MAX_DEPTH = 64
MAX_NUMBER_CHARS = 40
# I-JSON (RFC 7493 §2.2): beyond ±2^53 numbers do not survive other JSON implementations.
MAX_MAGNITUDE = float(2 ** 53)

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEPS = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")  # minus one below: +1 opens, -1 closes


class JsonInputError(ValueError):
    """The text is not acceptable JSON. `kind`: malformed, too_deep or number; `pointer` when known."""

    def __init__(self, kind: str, message: str, *, pointer: str | None = None,
                 line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.kind, self.message, self.pointer, self.line, self.column = kind, message, pointer, line, column


class _Number:
    """A number the parser saw but that is not acceptable; replaced by an error once its place is known."""

    __slots__ = ("text", "why")

    def __init__(self, text: str, why: str):
        self.text, self.why = text, why


def depth_of(text: str, *, at_most: int | None = None) -> int:
    """The deepest bracket nesting in `text`, not counting brackets inside strings.

    With `at_most`, a text with no more opening brackets than that answers their count at once.
    """
    brackets = _STRING.sub('""', text).encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    opening = brackets.count(b"[") + brackets.count(b"{")
    if at_most is not None and opening <= at_most:
        return opening
    steps = brackets.translate(_STEPS)
    return max(itertools.accumulate(map(operator.sub, steps, itertools.repeat(1))), default=0)


def _shown(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def _number_hooks(max_chars: int, max_magnitude: float, bad: list):
    def refuse(text: str, why: str) -> _Number:
        bad.append(text)
        return _Number(text, why)

    def parse_int(text: str) -> Any:
        digits = len(text.lstrip("-"))
        if digits > max_chars:
            return refuse(text, f"has {digits} digits; at most {max_chars} are accepted")
        value = int(text)
        if abs(value) > max_magnitude:
            return refuse(text, f"is beyond ±{max_magnitude:.0f}, outside the interoperable range")
        return value

    def parse_float(text: str) -> Any:
        if len(text) > max_chars:
            return refuse(text, f"has {len(text)} characters; at most {max_chars} are accepted")
        value = float(text)
        if not math.isfinite(value) or abs(value) > max_magnitude:
            return refuse(text, f"is beyond ±{max_magnitude:.0f}, outside the interoperable range")
        return value

    return parse_int, parse_float


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _first_bad_number(node: Any, pointer: str = "") -> tuple[str, _Number] | None:
    stack: list[tuple[Any, str]] = [(node, pointer)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, _Number):
            return where, value
        if isinstance(value, dict):
            for key in reversed(list(value)):
                stack.append((value[key], f"{where}/{key.replace('~', '~0').replace('/', '~1')}"))
        elif isinstance(value, list):
            for index in range(len(value) - 1, -1, -1):
                stack.append((value[index], f"{where}/{index}"))
    return None


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH, max_number_chars: int = MAX_NUMBER_CHARS,
          max_magnitude: float = MAX_MAGNITUDE) -> Any:
    """Parse JSON `text` (str, or UTF-8 bytes) within the limits; JsonInputError otherwise."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonInputError("malformed", f"not UTF-8 (byte {exc.start})") from None
    depth = depth_of(text, at_most=max_depth)
    if depth > max_depth:
        raise JsonInputError("too_deep", f"nested {depth} levels deep; at most {max_depth} are accepted")
    refused: list[str] = []
    parse_int, parse_float = _number_hooks(max_number_chars, max_magnitude, refused)
    try:
        document = json.loads(text, parse_int=parse_int, parse_float=parse_float, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise JsonInputError("malformed", f"not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
                             line=exc.lineno, column=exc.colno) from None
    except RecursionError:  # belt and braces: the depth scan should have caught it
        raise JsonInputError("too_deep", f"nested too deeply; at most {max_depth} levels are accepted") from None
    except ValueError as exc:  # NaN / Infinity constants
        raise JsonInputError("malformed", f"not valid JSON: {exc}") from None
    bad = _first_bad_number(document) if refused else None
    if bad is not None:
        where, number = bad
        raise JsonInputError("number", f"the number {_shown(number.text)} at {where or '(root)'} {number.why}",
                             pointer=where)
    return document
