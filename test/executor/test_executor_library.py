"""The recipe library and `cookwala-ros recipes add|list`."""

from __future__ import annotations

import argparse
import json

from executor_recipes import boil_recipe
from cookwala_ros.commands import recipes as recipes_command
from cookwala_ros.core.trust import document_hash
from cookwala_ros.executor.library import RecipeLibrary


def run_recipes(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="cookwala-ros recipes")
    recipes_command.add_arguments(parser)
    return recipes_command.run(parser.parse_args(list(argv)))


def test_library_indexes_by_id_and_hash_and_skips_bad_files(tmp_path, soup):
    folder = tmp_path / "lib"
    folder.mkdir()
    first = boil_recipe("test-revisions")
    second = dict(first, revision=2)
    for i, recipe in enumerate((first, second, soup)):
        (folder / f"r{i}.cookwala.json").write_text(json.dumps(recipe))
    (folder / "broken.cookwala.json").write_text("{not json")
    (folder / "tampered.cookwala.json").write_text(json.dumps(dict(boil_recipe("test-tampered"), hash="sha256:" + "0" * 64)))
    (folder / "ignored.json").write_text("{}")
    library = RecipeLibrary(folder)
    assert len(library.problems) == 2
    assert any("not JSON" in p for p in library.problems) and any("/hash" in p for p in library.problems)
    assert library.find("test-revisions").revision == 2  # newest without a hash
    assert library.find("test-revisions", document_hash(first)).revision == 1
    assert library.find("cw:cookwala-ros.org:cookwala-ros-tomato-soup").id == soup["id"]
    assert library.find("https://example.org/recipes#cookwala-ros-tomato-soup").id == soup["id"]
    assert library.find("unknown") is None


def test_library_notices_new_files(tmp_path):
    library = RecipeLibrary(tmp_path / "lib")
    assert library.recipes() == [] and not library.refresh()
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.cookwala.json").write_text(json.dumps(boil_recipe("test-new")))
    assert library.refresh() and library.find("test-new") is not None
    assert not library.refresh()


def test_recipes_add_and_list(tmp_path, soup, capsys):
    source = tmp_path / "soup.json"
    source.write_text(json.dumps(soup))
    folder = tmp_path / "lib"
    assert run_recipes("--library", str(folder), "add", str(source)) == 0
    out = capsys.readouterr().out
    assert document_hash(soup) in out
    installed = list(folder.glob("*.cookwala.json"))
    assert len(installed) == 1 and json.loads(installed[0].read_text()) == soup
    assert run_recipes("--library", str(folder), "list") == 0
    assert soup["id"] in capsys.readouterr().out


def test_recipes_add_refuses_invalid_and_unreadable_files(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"id": "x"}))
    assert run_recipes("--library", str(tmp_path / "lib"), "add", str(bad)) == 1
    assert "not a valid Recipe" in capsys.readouterr().err
    assert run_recipes("--library", str(tmp_path / "lib"), "add", str(tmp_path / "absent.json")) == 2
    assert not list((tmp_path / "lib").glob("*.cookwala.json")) if (tmp_path / "lib").exists() else True
