"""The recipe library: a folder of `*.cookwala.json` files the executor may cook (decision 5).

Each file is read, checked against the Recipe schema and hashed (`core.trust.document_hash`) when
the library is loaded; an embedded `hash` that does not match the body makes the file unusable.
A recipe written for another Core minor (its `cookwala` member, CORE §9) is never installed by
`add`; one found in the folder is indexed with its `unsupported` reason (and listed in
`problems`) so that a request for it is refused `unsupported_version`, not "not found".
Recipes are looked up by id (any revision: the newest) or by id and hash (that exact revision),
so a request naming a revision the device does not hold is refused `recipe_hash_mismatch`.
Files that fail a check are skipped and reported in `problems`, never half-used.
"""

from __future__ import annotations

import json
import os
import pathlib
import threading
from dataclasses import dataclass, replace

from cookwala_ros.core import json_limits, versions
from cookwala_ros.core.trust import document_hash

SUFFIX = ".cookwala.json"


class LibraryError(ValueError):
    """A recipe file that cannot go into the library (the message names the file and field)."""


@dataclass(frozen=True)
class LibraryRecipe:
    id: str
    hash: str
    revision: int
    path: pathlib.Path
    document: dict
    unsupported: str = ""  # why its own version cannot be cooked here ("" = it can)


def _ref_id(ref: str) -> str:
    """The recipe id inside a GlobalRef: `URL#id`, `cw:<authority>:<id>` or a bare id."""
    if "#" in ref:
        return ref.rsplit("#", 1)[1]
    if ref.startswith("cw:"):
        return ref.split(":", 2)[-1]
    return ref


def check_recipe_file(path: str | pathlib.Path) -> LibraryRecipe:
    """Read, schema-check and hash one recipe file; LibraryError says what is wrong."""
    path = pathlib.Path(path)
    try:
        doc = json_limits.loads(path.read_bytes())  # bounded depth and numbers: schema checks walk it
    except OSError as exc:
        raise LibraryError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise LibraryError(f"{path}: not JSON: {exc}") from None
    return check_recipe(doc, path)


def check_recipe(doc: object, path: pathlib.Path | None = None) -> LibraryRecipe:
    """Schema and embedded hash, as for any recipe; an unsupported `cookwala` version (even a
    malformed one) is not a schema error but the recipe's `unsupported` reason."""
    where = str(path) if path else "recipe"
    from cookwala_ros.core import schemas

    version = versions.recipe_refusal(doc)
    issues = schemas.validate(doc, "Recipe")
    if version:
        issues = [i for i in issues if i.pointer != "/cookwala"]
    if issues:
        raise LibraryError(f"{where}: not a valid Recipe: {issues[0]}")
    assert isinstance(doc, dict)
    actual = document_hash(doc)
    if "hash" in doc and doc["hash"] != actual:
        raise LibraryError(f"{where}: /hash: embedded hash {doc['hash']} but the body hashes to {actual}")
    return LibraryRecipe(id=doc["id"], hash=actual, revision=int(doc.get("revision") or 0),
                         path=path or pathlib.Path(), document=doc, unsupported=version[1] if version else "")


def require_supported(recipe: LibraryRecipe) -> LibraryRecipe:
    """The recipe, or LibraryError naming its unsupported version (what `add` installs)."""
    if recipe.unsupported:
        raise LibraryError(f"{recipe.path}: /cookwala: unsupported_version: {recipe.unsupported}")
    return recipe


class RecipeLibrary:
    """The recipes in one folder, indexed by id and hash. `reload()` re-reads the folder."""

    def __init__(self, folder: str | pathlib.Path):
        self.folder = pathlib.Path(folder).expanduser()
        self._lock = threading.Lock()
        self._by_hash: dict[str, LibraryRecipe] = {}
        self._by_id: dict[str, list[LibraryRecipe]] = {}
        self.problems: list[str] = []
        self._seen: tuple = ()
        self.reload()

    def _signature(self) -> tuple:
        if not self.folder.is_dir():
            return ()
        out = []
        for path in sorted(self.folder.glob("*" + SUFFIX)):
            try:
                stat = path.stat()
            except OSError:
                continue
            out.append((path.name, stat.st_mtime_ns, stat.st_size))
        return tuple(out)

    def refresh(self) -> bool:
        """Re-read the folder when a file was added, removed or changed (cheap when nothing was)."""
        if self._signature() == self._seen:
            return False
        self.reload()
        return True

    def reload(self) -> None:
        seen = self._signature()
        by_hash: dict[str, LibraryRecipe] = {}
        by_id: dict[str, list[LibraryRecipe]] = {}
        problems: list[str] = []
        if self.folder.is_dir():
            for path in sorted(self.folder.glob("*" + SUFFIX)):
                try:
                    recipe = check_recipe_file(path)
                except LibraryError as exc:
                    problems.append(str(exc))
                    continue
                if recipe.unsupported:
                    problems.append(f"{path}: /cookwala: unsupported_version: {recipe.unsupported}"
                                    " (requests for it are refused)")
                by_hash[recipe.hash] = recipe
                by_id.setdefault(recipe.id, []).append(recipe)
        for revisions in by_id.values():
            revisions.sort(key=lambda r: r.revision)
        with self._lock:
            self._by_hash, self._by_id, self.problems, self._seen = by_hash, by_id, problems, seen

    def find(self, ref: str, recipe_hash: str | None = None) -> LibraryRecipe | None:
        """The revision with this hash whose id matches `ref`; without a hash the newest revision
        (the newest of a supported Core version when there is one).
        When the hash is unknown but the id is held, the newest revision is returned so the
        caller can report the mismatch with both hashes."""
        rid = _ref_id(ref)
        with self._lock:
            if recipe_hash and recipe_hash in self._by_hash and self._by_hash[recipe_hash].id == rid:
                return self._by_hash[recipe_hash]
            revisions = self._by_id.get(rid)
            if not revisions:
                return None
            cookable = [r for r in revisions if not r.unsupported]
            return (cookable or revisions)[-1]

    def recipes(self) -> list[LibraryRecipe]:
        """The recipes this device can cook (an unsupported version is in `problems` instead)."""
        with self._lock:
            return [r for revisions in self._by_id.values() for r in revisions if not r.unsupported]

    def add(self, source: str | pathlib.Path) -> LibraryRecipe:
        """Check a recipe file and install it as `<id>.<hash12>.cookwala.json` (atomic rename)."""
        recipe = require_supported(check_recipe_file(source))
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"{recipe.id}.{recipe.hash.split(':', 1)[1][:12]}{SUFFIX}"
        target = self.folder / name
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(recipe.document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, target)
        self.reload()
        return replace(recipe, path=target)
