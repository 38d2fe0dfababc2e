"""`cookwala-ros validate` and `cookwala-ros schemas`, run in-process through the real CLI entry."""

from __future__ import annotations

import json
import pathlib

import pytest

from cookwala_ros.cli import main
from cookwala_ros.core import schemas

REPO = pathlib.Path(__file__).resolve().parents[2]
RECIPE = REPO / "examples/recipes/tomato-soup.cookwala.json"
REQUEST = REPO / "examples/requests/tomato-soup.execute.json"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path, name, document):
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    return str(path)


def test_valid_files_print_ok_with_their_kind(capsys):
    code, out, err = run(capsys, "validate", str(RECIPE), str(REQUEST))
    assert code == 0, err
    assert out.splitlines() == [f"OK {RECIPE} (Recipe)", f"OK {REQUEST} (ExecuteRequest)"]


def test_invalid_file_prints_pointer_and_message_and_exits_1(capsys, tmp_path):
    request = json.loads(REQUEST.read_text(encoding="utf-8"))
    request["servings"] = "four"
    request["colour"] = "red"
    bad = write(tmp_path, "bad.json", request)
    code, out, _ = run(capsys, "validate", str(REQUEST), bad)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == f"OK {REQUEST} (ExecuteRequest)"
    assert f"{bad}: /colour: unknown field 'colour' (only x- extension fields may be added)" in lines
    assert any(line.startswith(f"{bad}: /servings: must be number") for line in lines)


def test_explicit_kind_is_used(capsys):
    code, out, _ = run(capsys, "validate", "--kind", "stop-request", str(REQUEST))
    assert code == 1
    assert f"{REQUEST}: /execution: required field 'execution' is missing" in out.splitlines()


def test_unknown_kind_option_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as raised:
        main(["validate", "--kind", "Pizza", str(REQUEST)])
    assert raised.value.code == 2
    assert "Pizza" in capsys.readouterr().err


@pytest.mark.parametrize("content, words", [
    ("{not json", "not JSON"),
    ('{"a": 1, "a": 2}', "duplicate"),
    ('{"value": NaN}', "NaN"),
    (b"\xff\xfe{}", "not UTF-8"),
], ids=["syntax", "duplicate-key", "nan", "binary"])
def test_unreadable_input_exits_2_with_a_message_not_a_traceback(capsys, tmp_path, content, words):
    path = tmp_path / "input.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    code, out, err = run(capsys, "validate", str(path), str(RECIPE))
    assert code == 2
    assert f"{path}: error:" in err and words in err
    assert "Traceback" not in err
    assert f"OK {RECIPE} (Recipe)" in out  # the other files are still checked


def test_missing_file_exits_2(capsys, tmp_path):
    missing = str(tmp_path / "nope.json")
    code, _, err = run(capsys, "validate", missing)
    assert code == 2
    assert missing in err and "cannot read" in err


def test_unreadable_wins_over_invalid(capsys, tmp_path):
    bad = write(tmp_path, "bad.json", {"core": "0.2.0", "kind": "StopRequest"})
    broken = write(tmp_path, "broken.json", "[")
    code, out, _ = run(capsys, "validate", bad, broken)
    assert code == 2
    assert f"{bad}: /execution: required field 'execution' is missing" in out


def test_unrecognisable_document_is_invalid_not_a_crash(capsys, tmp_path):
    odd = write(tmp_path, "odd.json", {"hello": "world"})
    code, out, _ = run(capsys, "validate", odd)
    assert code == 1
    assert out.startswith(f"{odd}: (document): cannot tell which Cookwala document")


def test_schemas_list_names_every_kind(capsys):
    code, out, _ = run(capsys, "schemas", "list")
    assert code == 0
    listed = {line.split()[0]: line.split()[1] for line in out.splitlines()}
    for kind, file in schemas.KINDS.items():
        assert listed[kind] == file


def test_schemas_bundle_writes_a_bundle_that_validates(capsys, tmp_path):
    target = tmp_path / "out" / "bundle.json"
    code, out, _ = run(capsys, "schemas", "bundle", "--output", str(target))
    assert code == 0 and str(target) in out
    assert json.loads(target.read_text(encoding="utf-8")) == schemas.bundle()
    loaded = schemas.SchemaSet.from_bundle(target)
    assert loaded.validate(json.loads(RECIPE.read_text(encoding="utf-8"))) == []
    assert run(capsys, "schemas", "bundle", "--check", "--output", str(target))[0] == 0


def test_schemas_bundle_check_detects_a_stale_bundle(capsys, tmp_path):
    stale = tmp_path / "bundle.json"
    stale.write_text("{}\n", encoding="utf-8")
    code, _, err = run(capsys, "schemas", "bundle", "--check", "--output", str(stale))
    assert code == 1 and "out of date" in err
    assert stale.read_text(encoding="utf-8") == "{}\n"


def test_committed_bundle_passes_the_check(capsys):
    code, _, _ = run(capsys, "schemas", "bundle", "--check")
    assert code == 0, "run `cookwala-ros schemas bundle`"
