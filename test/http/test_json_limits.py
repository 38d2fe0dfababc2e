"""Bounded JSON parsing (core.json_limits) and If-Match parsing: hostile text gives one clean error."""

from __future__ import annotations

import pytest

from cookwala_ros.core import json_limits
from cookwala_ros.http.inputs import if_match_seq


def _error(text, **limits) -> json_limits.JsonInputError:
    with pytest.raises(json_limits.JsonInputError) as caught:
        json_limits.loads(text, **limits)
    return caught.value


def test_ordinary_documents_parse_as_json_does():
    text = '{"a": [1, 2.5, -3e2, {"b": "[[[{{{"}], "c": null, "d": true, "e": "\\u00e9"}'
    assert json_limits.loads(text) == {"a": [1, 2.5, -300.0, {"b": "[[[{{{"}], "c": None, "d": True, "e": "é"}
    assert json_limits.loads(text.encode("utf-8")) == json_limits.loads(text)


def test_depth_is_measured_outside_strings():
    assert json_limits.depth_of('["]]]]", {"x": "[[[["}]') == 2
    assert json_limits.depth_of('"\\"[[[["') == 0
    assert json_limits.loads("[" * 64 + "]" * 64) is not None
    for deep in ("[" * 65 + "]" * 65, "[" * 100_000, '{"a":' * 999 + "1" + "}" * 999):
        error = _error(deep)
        assert error.kind == "too_deep" and "at most 64" in str(error)


def test_numbers_too_long_or_too_big_are_named_by_pointer():
    error = _error('{"x": [0, {"a/b~c": ' + "7" * 100_000 + "}]}")
    assert error.kind == "number" and error.pointer == "/x/1/a~1b~0c" and "100000 digits" in str(error)
    assert len(str(error)) < 200
    for number in ("1e308", "1e999", "-1e400", "9007199254740993", "1." + "0" * 60):
        error = _error('{"servings": ' + number + "}")
        assert error.kind == "number" and error.pointer == "/servings", number
    assert json_limits.loads("[9007199254740992, -9007199254740992, 1e15]") == [2 ** 53, -(2 ** 53), 1e15]
    assert json_limits.loads("1e300", max_magnitude=float("inf")) == 1e300


def test_malformed_text_is_one_error_kind():
    for text in ("[1,", "NaN", "[Infinity]", "{'a': 1}", b"\xff\xfe", "", "[1] [2]"):
        assert _error(text).kind == "malformed", text
    error = _error('{\n  "a": tru\n}')
    assert (error.line, error.column) == (2, 8)


def test_if_match_forms():
    assert if_match_seq(None, 7) is None
    assert if_match_seq("*", 7) == 7 and if_match_seq(" * ", 3) == 3
    assert if_match_seq('"7"', 9) == 7 and if_match_seq('W/"7"', 9) == 7 and if_match_seq("7", None) == 7
    assert if_match_seq('"6", "7"', 7) == 7 and if_match_seq('"6", "8"', 7) == -1
    assert if_match_seq("nonsense", 7) == -1 and if_match_seq('"6", x', 6) == -1
