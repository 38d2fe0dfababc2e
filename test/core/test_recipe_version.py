"""A recipe's own version (`cookwala`, CORE §9): 0.2.x is read, anything else is unsupported_version.

Checked by the pre-start check (right after the revision lookup and hash), by `validate`, by
`dryrun` and by `recipes add`; the executor's paths are in test/executor/test_executor_checks_node.py.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from cookwala_ros.cli import main
from cookwala_ros.core import dryrun, versions
from cookwala_ros.core.request_checks import RequestContext
from cookwala_ros.core.trust import document_hash
from cookwala_ros.executor.library import RecipeLibrary

REPO = pathlib.Path(__file__).resolve().parents[2]
SOUP = REPO / "examples" / "recipes" / "tomato-soup.cookwala.json"
CAPS = REPO / "examples" / "capabilities" / "sim-kitchen-robot.json"
ACCEPTED = ["0.2.0", "0.2.7"]


def soup(version) -> dict:
    recipe = json.loads(SOUP.read_text(encoding="utf-8"))
    recipe["cookwala"] = version
    return recipe


def run(capsys, *argv) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out + err


def write(tmp_path, recipe: dict, name: str = "recipe.cookwala.json") -> pathlib.Path:
    path = tmp_path / name
    path.write_text(json.dumps(recipe), encoding="utf-8")
    return path


@pytest.mark.parametrize("version", ["0.3.0", "0.1.9", "1.2.0", "0.2.banana", "", 2, None])
def test_precheck_refuses_another_recipe_version(version):
    result = dryrun.precheck(soup(version), json.loads(CAPS.read_text()), human_present=True)
    assert (result.accepted, result.reason, result.node) == (False, "unsupported_version", None)
    assert "recipe version" in result.detail and "0.2.x" in result.detail


@pytest.mark.parametrize("version", ACCEPTED)
def test_precheck_accepts_any_patch(version):
    assert dryrun.precheck(soup(version), json.loads(CAPS.read_text()), human_present=True).accepted


def test_recipe_version_is_checked_after_the_revision_and_before_authorization():
    recipe = soup("0.3.0")
    caps = json.loads(CAPS.read_text())
    wrong_revision = RequestContext(core="0.2.0", expected_hash="sha256:" + "0" * 64)
    assert dryrun.precheck(recipe, caps, request=wrong_revision).reason == "recipe_hash_mismatch"
    right_revision = RequestContext(core="0.2.0", expected_hash=document_hash(recipe), signature_ok=False, busy=True)
    assert dryrun.precheck(recipe, caps, request=right_revision).reason == "unsupported_version"
    assert dryrun.precheck(recipe, caps, request=RequestContext(core="0.3.0")).detail.startswith("core version")


def test_a_recipe_without_a_version_is_left_to_the_schema():
    # the partial recipes of dry-run conformance vectors carry no `cookwala` member
    assert versions.recipe_refusal({"id": "r1", "process": {"nodes": []}}) is None


@pytest.mark.parametrize("version", ["0.3.0", "0.2.banana"])
def test_validate_refuses_another_version_in_one_line(capsys, tmp_path, version):
    path = write(tmp_path, soup(version))
    code, out = run(capsys, "validate", path)
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 1, lines  # a malformed version is not also reported as a pattern mismatch
    assert lines[0].startswith(f"{path}: /cookwala: unsupported_version: Recipe version")


@pytest.mark.parametrize("version", ACCEPTED)
def test_validate_accepts_any_patch(capsys, tmp_path, version):
    assert run(capsys, "validate", write(tmp_path, soup(version)))[0] == 0


@pytest.mark.parametrize("version, code", [("0.3.0", 1), ("0.2.banana", 1), ("0.2.7", 0)])
def test_dryrun_command(capsys, tmp_path, version, code):
    got, out = run(capsys, "dryrun", write(tmp_path, soup(version)), "--device", CAPS, "--human-present")
    assert got == code, out
    assert ("refused: unsupported_version" in out) == (code == 1)


@pytest.mark.parametrize("version", ["0.3.0", "0.2.banana"])
def test_recipes_add_refuses_another_version(capsys, tmp_path, version):
    library = tmp_path / "lib"
    code, out = run(capsys, "recipes", "--library", library, "add", write(tmp_path, soup(version)))
    assert code == 1
    assert "not installed" in out and "/cookwala: unsupported_version" in out
    assert not list(library.glob("*.cookwala.json"))


def test_recipes_add_installs_any_patch(capsys, tmp_path):
    library = tmp_path / "lib"
    recipe = soup("0.2.7")
    code, out = run(capsys, "recipes", "--library", library, "add", write(tmp_path, recipe))
    assert code == 0, out
    assert RecipeLibrary(library).find(recipe["id"], document_hash(recipe)) is not None


def test_library_indexes_a_copied_in_recipe_of_another_version_for_its_refusal(tmp_path):
    """A file put into the folder by hand is never cooked, but a request naming it is refused for
    its version, not as a revision the device does not hold."""
    library_dir = tmp_path / "lib"
    library_dir.mkdir()
    old, new, banana = soup("0.2.0"), dict(soup("0.3.0"), revision=2), dict(soup("0.2.banana"), revision=3)
    for i, recipe in enumerate((old, new, banana)):
        write(library_dir, recipe, f"r{i}.cookwala.json")
    library = RecipeLibrary(library_dir)
    assert [r.hash for r in library.recipes()] == [document_hash(old)]
    assert len(library.problems) == 2 and all("unsupported_version" in p for p in library.problems)
    assert library.find(new["id"], document_hash(new)).unsupported
    assert library.find(banana["id"], document_hash(banana)).unsupported
    assert library.find(new["id"]).hash == document_hash(old)  # without a hash: the newest it can cook
