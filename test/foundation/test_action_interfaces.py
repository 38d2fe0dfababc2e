"""ExecuteRecipe / ExecuteNode must keep the upstream binding's field names, types and order.

The comparison is made against the generated Python types (what `ros2 interface show` would
print), so a change in our .action files or a stale build both fail it.
"""

from __future__ import annotations

import re

import pytest

from cookwala_msgs.action import ExecuteNode, ExecuteRecipe

# rosidl type names as reported by get_fields_and_field_types()
_ROSIDL_TYPES = {"string": "string", "float32": "float", "float64": "double", "bool": "boolean", "uint32": "uint32"}


def parse_action_sections(text: str) -> list[list[tuple[str, str]]]:
    """[(type, name), ...] for goal, result and feedback, in file order."""
    sections: list[list[tuple[str, str]]] = [[]]
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line == "---":
            sections.append([])
            continue
        match = re.fullmatch(r"([A-Za-z0-9_/\[\]<=]+)\s+([a-z][a-z0-9_]*)(\s*=.*)?", line)
        assert match, f"cannot parse action line {line!r}"
        if match.group(3):  # a constant, not a field
            continue
        sections[-1].append((match.group(1), match.group(2)))
    assert len(sections) == 3, "an action has goal, result and feedback sections"
    return sections


def generated_fields(message_class) -> list[tuple[str, str]]:
    return [(t, n) for n, t in message_class.get_fields_and_field_types().items()]


@pytest.mark.parametrize("name, action", [("ExecuteRecipe", ExecuteRecipe), ("ExecuteNode", ExecuteNode)])
def test_action_matches_upstream_binding(spec_dir, name, action):
    upstream = (spec_dir / "bindings" / "ros2" / "cookwala_msgs" / "action" / f"{name}.action").read_text()
    goal, result, feedback = parse_action_sections(upstream)
    for label, expected, generated in (
        ("goal", goal, action.Goal),
        ("result", result, action.Result),
        ("feedback", feedback, action.Feedback),
    ):
        want = [(_ROSIDL_TYPES.get(t, t), n) for t, n in expected]
        assert generated_fields(generated) == want, f"{name} {label} differs from the upstream binding"


@pytest.mark.parametrize("name, action", [("ExecuteRecipe", ExecuteRecipe), ("ExecuteNode", ExecuteNode)])
def test_our_action_files_match_the_generated_types(repo_root, name, action):
    ours = (repo_root / "cookwala_msgs" / "action" / f"{name}.action").read_text()
    goal, result, feedback = parse_action_sections(ours)
    assert generated_fields(action.Goal) == [(_ROSIDL_TYPES.get(t, t), n) for t, n in goal]
    assert generated_fields(action.Result) == [(_ROSIDL_TYPES.get(t, t), n) for t, n in result]
    assert generated_fields(action.Feedback) == [(_ROSIDL_TYPES.get(t, t), n) for t, n in feedback]


def test_parser_rejects_a_reordered_section():
    a = parse_action_sections("string a\nfloat32 b\n---\nstring s\n---\nuint32 seq\n")
    b = parse_action_sections("float32 b\nstring a\n---\nstring s\n---\nuint32 seq\n")
    assert a != b
