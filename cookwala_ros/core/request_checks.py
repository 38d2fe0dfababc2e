"""Request-level pre-start checks, in the project's refusal order (decision 4).

Version (the request's `core`), recipe revision (lookup and hash), the recipe's own version
(`cookwala`), signature and authorization, agent mandate, recalls, allergen blocks and busy are
decided before any step is looked at. Each check takes plain data; results the executor
computes elsewhere (a signature verification, an authorization decision) are passed in as
booleans, so this module stays pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from cookwala_ros.core import allergens, versions
from cookwala_ros.core.sensor_trust import parse_time

Refusal = tuple[str, str]  # (reason, detail)


@dataclass
class RequestContext:
    """What the executor knows about the request besides the recipe and the device.

    Every field is optional: None means "not checked here" (the caller checked it, or the
    deployment does not use it). `recipe_found=False` means the library has no such recipe.
    """

    core: str | None = None
    recipe_found: bool = True
    recipe_ref: str | None = None
    expected_hash: str | None = None
    recipe_hash: str | None = None  # hash of the recipe document, if already computed
    signature_ok: bool | None = None
    signature_detail: str = ""
    authorized: bool | None = None
    requested_by_agent: bool = False
    mandate: dict | None = None
    mandate_ok: bool | None = None
    recalls: list = field(default_factory=list)
    allergen_blocks: list = field(default_factory=list)
    inventory_allergens: list = field(default_factory=list)
    busy: bool = False
    safety_hold: str | None = None  # why the device's safety monitor holds it stopped, if it does
    food_classes: list = field(default_factory=list)
    now: Any = None

    @classmethod
    def from_wire(cls, data: dict | None) -> "RequestContext":
        """Build from the camelCase form used by vectors and the CLI."""
        data = data or {}
        if not isinstance(data, dict):
            raise ValueError("/request: must be an object")
        names = {
            "core": "core", "recipeFound": "recipe_found", "recipeRef": "recipe_ref",
            "recipeHash": "expected_hash", "recipeDocumentHash": "recipe_hash",
            "signatureOk": "signature_ok", "authorized": "authorized",
            "requestedByAgent": "requested_by_agent", "mandate": "mandate", "mandateOk": "mandate_ok",
            "recalls": "recalls", "allergenBlocks": "allergen_blocks",
            "inventoryAllergens": "inventory_allergens", "busy": "busy", "safetyHold": "safety_hold",
            "foodClasses": "food_classes", "now": "now",
        }
        unknown = [k for k in data if k not in names and not k.startswith("x-")]
        if unknown:
            raise ValueError(f"/request/{unknown[0]}: unknown field")
        return cls(**{names[k]: v for k, v in data.items() if k in names})


def _recipe_hash(recipe: dict, ctx: RequestContext) -> str | None:
    if ctx.recipe_hash:
        return ctx.recipe_hash
    try:  # written by the trust helper; optional at import time
        from cookwala_ros.core.trust import document_hash
    except ImportError:
        return recipe.get("hash") if isinstance(recipe, dict) else None
    return document_hash(recipe)


def check_version(recipe: dict, ctx: RequestContext) -> Refusal | None:
    return versions.refusal(ctx.core) if ctx.core is not None else None


def check_recipe_version(recipe: dict, ctx: RequestContext) -> Refusal | None:
    """The recipe's own `cookwala` version: known once the revision is found, so checked right
    after the lookup and hash, before anything reads the recipe's content."""
    return versions.recipe_refusal(recipe)


def check_revision(recipe: dict | None, ctx: RequestContext) -> Refusal | None:
    if recipe is None or not ctx.recipe_found:
        return "recipe_hash_mismatch", f"recipe {ctx.recipe_ref or ''} is not in the recipe library".replace("  ", " ")
    if ctx.expected_hash is None:
        return None
    actual = _recipe_hash(recipe, ctx)
    if actual != ctx.expected_hash:
        return "recipe_hash_mismatch", f"request names revision {ctx.expected_hash}, the recipe hashes to {actual}"
    return None


def check_authorization(recipe: dict, ctx: RequestContext) -> Refusal | None:
    if ctx.signature_ok is False:
        return "not_authorized", ctx.signature_detail or "the recipe signature does not verify"
    if ctx.authorized is False:
        return "not_authorized", "the requester may not start cooking on this device"
    if ctx.requested_by_agent and ctx.mandate is None and ctx.mandate_ok is None:
        return "not_authorized", "an agent request needs an AgentMandate"
    mandate = ctx.mandate
    if isinstance(mandate, dict) and "expires" in mandate:
        expires = parse_time(mandate["expires"])
        now = parse_time(ctx.now) if ctx.now is not None else None
        if expires is None:
            return "not_authorized", f"mandate expiry {mandate['expires']!r} is not a date-time"
        if now is not None and now >= expires:
            return "not_authorized", f"the mandate expired at {mandate['expires']}"
    return None


def check_mandate(recipe: dict, ctx: RequestContext) -> Refusal | None:
    if ctx.mandate_ok is False:
        return "mandate_scope", "the request is outside the agent's mandate"
    if isinstance(ctx.mandate, dict):
        scopes = ctx.mandate.get("scopes") or []
        if "start_cooking" not in scopes:
            return "mandate_scope", "the mandate does not include the start_cooking scope"
    return None


def _ref_matches(target_ref: Any, recipe: dict, ctx: RequestContext) -> bool:
    if not isinstance(target_ref, str):
        return False
    ids = {ctx.recipe_ref, recipe.get("id")} - {None}
    tail = target_ref.rsplit("#", 1)[-1].rsplit(":", 1)[-1]
    return target_ref in ids or tail in ids


def check_recalls(recipe: dict, ctx: RequestContext) -> Refusal | None:
    if not ctx.recalls:
        return None
    revision = ctx.expected_hash or _recipe_hash(recipe, ctx)
    for recall in ctx.recalls:
        if not isinstance(recall, dict) or recall.get("action", "block") == "warn":
            continue
        for target in recall.get("targets") or []:
            if not isinstance(target, dict) or not _ref_matches(target.get("ref"), recipe, ctx):
                continue
            if target.get("allRevisions") or "hash" not in target or target["hash"] == revision:
                return "recipe_recalled", f"recall {recall.get('id', '?')} ({recall.get('reason', 'unspecified')}) covers this revision"
    return None


def check_allergens(recipe: dict, ctx: RequestContext) -> Refusal | None:
    hit = allergens.blocked(recipe, ctx.allergen_blocks, ctx.inventory_allergens)
    if hit:
        return "allergen_block", f"blocked allergen {hit[0]!r} is present ({hit[1]})"
    return None


def check_busy(recipe: dict, ctx: RequestContext) -> Refusal | None:
    """Busy cooking, or held stopped by its safety monitor until somebody resets it locally."""
    if ctx.busy:
        return "busy", "the device is running another execution"
    if ctx.safety_hold:
        return "busy", ctx.safety_hold
    return None


# In refusal order; the first that fails names the reason.
REQUEST_CHECKS: tuple[Callable[[dict, RequestContext], Refusal | None], ...] = (
    check_version, check_revision, check_recipe_version, check_authorization, check_mandate,
    check_recalls, check_allergens, check_busy,
)


def first_request_refusal(recipe: dict | None, ctx: RequestContext) -> Refusal | None:
    for check in REQUEST_CHECKS:
        result = check(recipe, ctx)
        if result:  # without a recipe, check_revision always refuses, so later checks never see None
            return result
    return None
