"""Core version negotiation (CORE §9, project decision 3).

This implementation reads Core 0.2: any patch of 0.2 is accepted ("0.2", "0.2.1", "0.2.10");
any other minor or major, or a string that is not a version ("0.2.banana"), is refused with
`unsupported_version` (a refusal, not a 400, when the request itself parses). Both versions are
checked: the request's `core` and the recipe's own `cookwala`.
"""

from __future__ import annotations

import re
from typing import Any

from cookwala_ros import CORE_VERSION

SUPPORTED_MAJOR = 0
SUPPORTED_MINOR = 2
IMPLEMENTED = CORE_VERSION

_VERSION = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*))?$")


def parse(version: Any) -> tuple[int, int, int | None] | None:
    """(major, minor, patch or None) of a version string, or None when it is not one."""
    if not isinstance(version, str):
        return None
    match = _VERSION.match(version)
    if not match:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), None if patch is None else int(patch)


def is_supported(version: Any) -> bool:
    parsed = parse(version)
    return parsed is not None and parsed[:2] == (SUPPORTED_MAJOR, SUPPORTED_MINOR)


def refusal(version: Any, what: str = "core version") -> tuple[str, str] | None:
    """('unsupported_version', detail) when `version` cannot be read by Core 0.2, else None."""
    if is_supported(version):
        return None
    if parse(version) is None:
        return "unsupported_version", f"{what} {version!r} is not a version string; this implementation reads 0.2.x"
    return "unsupported_version", f"{what} {version} is not 0.2.x; this implementation reads 0.2.x"


def recipe_refusal(recipe: Any, what: str = "recipe version (cookwala)") -> tuple[str, str] | None:
    """The same for a recipe's own version, its `cookwala` member (CORE §9 applies to documents,
    not only to requests). None when the recipe does not say: the Recipe schema requires the
    member, and the partial recipes of dry-run vectors leave it out."""
    if not isinstance(recipe, dict) or "cookwala" not in recipe:
        return None
    return refusal(recipe["cookwala"], what)
