"""Allergen blocks (CORE §6.7, project decision 10).

A blocked allergen that appears in the recipe (its safety declaration, its ingredients or its
may-contain list) or in the inventory refuses the request; nothing is substituted around it.
Names are compared case-insensitively after folding synonyms (peanuts -> peanut, tree nuts ->
tree_nuts); a name the table does not know matches only itself.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Iterable

from cookwala_ros.core import vocab


def _fold(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


@functools.lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    data = vocab.load("allergen_synonyms.json")
    canon: dict[str, str] = {}
    for name, others in data["synonyms"].items():
        canon[_fold(name)] = name
        for other in others:
            canon[_fold(other)] = name
    implies = {name: tuple(v) for name, v in data.get("implies", {}).items()}
    return canon, implies


def canonical(name: str) -> str:
    """The canonical allergen token for `name` (unknown names: folded, otherwise unchanged)."""
    folded = _fold(name)
    return _tables()[0].get(folded, folded)


def expand(name: str) -> set[str]:
    """`name` and everything it contains (wheat -> {wheat, gluten})."""
    token = canonical(name)
    return {token, *_tables()[1].get(token, ())}


def recipe_allergens(recipe: dict) -> dict[str, str]:
    """canonical allergen -> where the recipe declares it (a JSON pointer)."""
    found: dict[str, str] = {}
    safety = recipe.get("safety") if isinstance(recipe, dict) else None
    declared = safety.get("allergens") if isinstance(safety, dict) else None
    for key, names in (declared.items() if isinstance(declared, dict) else ()):
        if isinstance(names, list):
            for i, name in enumerate(names):
                if isinstance(name, str):
                    for token in expand(name):
                        found.setdefault(token, f"/safety/allergens/{key}/{i}")
    ingredients = recipe.get("ingredients") if isinstance(recipe, dict) else None
    for i, ing in enumerate(ingredients if isinstance(ingredients, list) else ()):
        names = ing.get("allergens") if isinstance(ing, dict) else None
        for j, name in enumerate(names if isinstance(names, list) else ()):
            if isinstance(name, str):
                for token in expand(name):
                    found.setdefault(token, f"/ingredients/{i}/allergens/{j}")
    return found


def blocked(recipe: dict, blocks: Iterable[Any], inventory_allergens: Iterable[Any] = ()) -> tuple[str, str] | None:
    """(blocked name, where it was found) for the first block the recipe or inventory hits."""
    present = recipe_allergens(recipe)
    for name in inventory_allergens:
        if isinstance(name, str):
            for token in expand(name):
                present.setdefault(token, "inventory")
    for block in blocks:
        if not isinstance(block, str):
            continue
        token = canonical(block)
        if token in present:
            return block, present[token]
    return None
