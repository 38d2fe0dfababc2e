"""Bounded YAML parsing (core.yaml_limits): hostile files give one clean error, never a RecursionError."""

from __future__ import annotations

import re

import pytest

from cookwala_ros.core import yaml_limits


def test_ordinary_yaml_parses_as_safe_load_does():
    text = "poses:\n  home: {a: 0.5, b: -1}\nlist: [1, [2, [3]]]\nshared: &s [1]\nagain: *s\n"
    assert yaml_limits.loads(text) == {"poses": {"home": {"a": 0.5, "b": -1}}, "list": [1, [2, [3]]],
                                       "shared": [1], "again": [1]}
    assert yaml_limits.loads(text.encode("utf-8")) == yaml_limits.loads(text)
    assert yaml_limits.loads("") is None
    assert yaml_limits.loads("[" * 64 + "]" * 64) is not None


@pytest.mark.parametrize("text, message", [
    ("- " * 3000 + "x\n", "nested more than 64 levels deep"),
    ("[" * 100_000 + "]" * 100_000, "nested more than 64 levels deep"),
    ("{a: " * 1000 + "x" + "}" * 1000, "nested more than 64 levels deep"),
    ("a: &a [*a]\n", "makes a node contain itself"),  # safe_load builds a cycle: a walker never ends
    ("a0: &a0 [1]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 100)), "*a62 nests it"),
    (b"a: \xff", "not UTF-8 (byte 3)"),
    ("a: 1\n\tb: 2", "not valid YAML at line 2 column 1"),
    ("a: \x00", "not valid YAML: unacceptable character"),
    ("x: " + "9" * 10_000, "not valid YAML at line 1 column 4: a number of 10000 characters"),
])
def test_hostile_yaml_is_one_error(text, message):
    with pytest.raises(yaml_limits.YamlInputError, match=re.escape(message)) as caught:
        yaml_limits.loads(text)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 300
