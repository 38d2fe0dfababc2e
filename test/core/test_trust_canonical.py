"""RFC 8785 canonical JSON: the bytes every hash and signature covers."""

from __future__ import annotations

import pytest

from cookwala_ros.core.canonical import (
    CanonicalError,
    JsonReadError,
    canonical_bytes,
    canonical_text,
    content_hash,
    loads_strict,
)


def test_rfc8785_example_is_reproduced_exactly():
    value = {"numbers": [333333333.3333333, 1e30, 4.5, 2e-3, 1e-27],
             "string": "\u20ac$\u000f\nA'B\"\\\\\"/", "literals": [None, True, False]}
    assert canonical_text(value) == (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )


@pytest.mark.parametrize("number, text", [
    (1e21, "1e+21"), (1e20, "100000000000000000000"), (1e-7, "1e-7"), (1e-6, "0.000001"),
    (-0.0, "0"), (0.1 + 0.2, "0.30000000000000004"), (2**53 - 1, "9007199254740991"), (1.0, "1"),
    (5e-324, "5e-324"),
])
def test_numbers_use_ecmascript_layout(number, text):
    assert canonical_text(number) == text


def test_keys_sort_by_utf16_code_units_not_code_points():
    # U+1F600 is D83D DE00 in UTF-16, which sorts before U+E000 although its code point is larger.
    assert canonical_text({"\ue000": 1, "\U0001F600": 2}) == '{"\U0001F600":2,"\ue000":1}'


def test_output_is_utf8_bytes():
    assert canonical_bytes({"s": "\u00e9"}) == b'{"s":"\xc3\xa9"}'


@pytest.mark.parametrize("value, code, pointer", [
    ({"a": [1, 2**53]}, "integer_out_of_range", "/a/1"),
    ({"a": {"b/c": -(2**60)}}, "integer_out_of_range", "/a/b~1c"),
    ({"s": "\ud800"}, "invalid_unicode", "/s"),
    ({"f": float("inf")}, "non_finite_number", "/f"),
    ({"f": [float("nan")]}, "non_finite_number", "/f/0"),
    ({"x": {1, 2}}, "not_json", "/x"),
    ({1: "a"}, "non_string_key", ""),
])
def test_values_without_a_canonical_form_are_refused_with_their_pointer(value, code, pointer):
    with pytest.raises(CanonicalError) as info:
        canonical_bytes(value)
    assert info.value.code == code
    assert info.value.pointer == pointer
    assert (pointer or "/") in str(info.value)


def test_content_hash_covers_the_whole_value():
    assert content_hash({"hash": "x"}) != content_hash({})
    assert content_hash([1, 2]).startswith("sha256:") and len(content_hash([1, 2])) == 71


def test_strict_reader_refuses_duplicate_keys_and_nan():
    assert loads_strict('{"a": [1, 2.5, "x"]}') == {"a": [1, 2.5, "x"]}
    with pytest.raises(JsonReadError, match="duplicate object key 'a'"):
        loads_strict('{"a": 1, "b": {"a": 1}, "a": 2}')
    for text in ("[NaN]", "[Infinity]", "[-Infinity]"):
        with pytest.raises(JsonReadError, match="NaN or Infinity"):
            loads_strict(text)
    with pytest.raises(JsonReadError, match="line 1 column"):
        loads_strict("{not json")


def test_deep_nesting_and_bad_encodings_are_clear_errors():
    with pytest.raises(JsonReadError, match="nested too deeply"):
        loads_strict("[" * 100000)
    with pytest.raises(JsonReadError, match="not UTF-8"):
        loads_strict(b'{"a": "\xff"}')
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(CanonicalError) as info:
        canonical_bytes(deep)
    assert info.value.code == "too_deep"
