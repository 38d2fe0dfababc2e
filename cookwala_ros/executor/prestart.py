"""The pre-start check of an ExecuteRequest, in the project's refusal order (decision 4).

This gathers what the pure check needs (the recipe from the library, the recipe and mandate
signature verdicts, recalls, allergen blocks, busy, presence, unusable sensors) and hands it to
`core.dryrun.precheck` with a `RequestContext`; the first failing check names the reason and the
node. Version is decided before this (a request for another Core version may not even match our
schema) but is passed along too, so the order holds whoever calls this.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from cookwala_ros.core.dryrun import NodePlan, precheck
from cookwala_ros.core.request_checks import RequestContext
from cookwala_ros.core.trust import verify_document
from cookwala_ros.executor import mandate as mandate_mod
from cookwala_ros.executor.config import ExecutorConfig
from cookwala_ros.executor.events import rfc3339
from cookwala_ros.executor.library import LibraryRecipe, RecipeLibrary


@dataclass
class PrestartResult:
    accepted: bool
    reason: str | None = None
    node: str | None = None
    detail: str = ""
    plan: list[NodePlan] = field(default_factory=list)
    recipe: LibraryRecipe | None = None

    def refusal(self) -> dict | None:
        if self.accepted:
            return None
        out = {"reason": self.reason, "detail": (self.detail or self.reason or "")[:500]}
        if self.node:
            out["node"] = self.node
        return out


def _recipe_signature(recipe: LibraryRecipe | None, config: ExecutorConfig) -> tuple[bool | None, str]:
    if recipe is None or not config.require_signed_recipes:
        return None, ""
    verdict = verify_document(recipe.document, config.trusted_keys)
    if verdict:
        return True, ""
    return False, f"recipe signature: {verdict.reason}: {verdict.detail}"


def check_request(request: dict, *, config: ExecutorConfig, library: RecipeLibrary, recalls: list[dict],
                  busy: bool, human_present: bool, demoted_sensors: Iterable[str], now_s: float,
                  authorized: bool = True, safety_hold: str | None = None,
                  limits: dict | None = None) -> PrestartResult:
    """Decide whether `request` (already schema-valid) may start on this device now.

    `limits` is the effective SafetyLimits pack (default: the configured one).
    """
    recipe = library.find(request["recipe"], request.get("recipeHash"))
    signature_ok, signature_detail = _recipe_signature(recipe, config)
    mandate = mandate_mod.check_mandate(request, config.trusted_keys)
    mandate_ok = None
    if mandate.reason == "not_authorized" and signature_ok is not False:
        signature_ok, signature_detail = False, mandate.detail
    elif mandate.reason == "mandate_scope":
        mandate_ok = False
    now = rfc3339(now_s)
    ctx = RequestContext(
        core=request.get("core"),
        recipe_found=recipe is not None,
        recipe_ref=request["recipe"],
        expected_hash=request.get("recipeHash"),
        recipe_hash=recipe.hash if recipe else None,
        signature_ok=signature_ok,
        signature_detail=signature_detail,
        authorized=authorized,
        requested_by_agent=mandate_mod.is_agent_request(request),
        mandate=request.get("mandate"),
        mandate_ok=mandate_ok,
        recalls=list(recalls),
        allergen_blocks=list(request.get("allergenBlocks") or []),
        busy=busy,
        safety_hold=safety_hold,
        now=now,
    )
    result = precheck(recipe.document if recipe else None, config.capabilities, limits=limits if limits is not None else config.limits,
                      human_present=human_present, altitude_m=config.altitude_m, now=now, request=ctx,
                      demoted_sensors=demoted_sensors)
    detail = result.detail
    if result.reason == "mandate_scope" and mandate_ok is False:
        detail = mandate.detail  # the specific cap or confirmation, not the generic text
    return PrestartResult(result.accepted, result.reason, result.node, detail, list(result.plan), recipe)
