"""AgentMandate checks for an ExecuteRequest (CORE §6.5), beyond what `request_checks` decides.

`request_checks` already refuses an agent request without a mandate, an expired mandate
(`not_authorized`) and a mandate without the `start_cooking` scope (`mandate_scope`). This module
adds what needs keys or request data:

- the mandate is signed by its principal with a trusted key (else `not_authorized`);
- the requester is the mandate's agent (else `not_authorized`);
- spend caps: a request may declare what it will cost in `x-cookwala-ros-cost` (Money); more than
  `perOrderCap` or `spendCap`, or another currency, is `mandate_scope`;
- confirmations: a request declares the kinds of action it involves in `x-cookwala-ros-involves`
  (values of `confirmBefore`, e.g. `irreversible`, `safety_override`) and the ones its principal
  confirmed in `x-cookwala-ros-confirmed`. An involved action needs a confirmation when the
  mandate lists it, and `irreversible` and `safety_override` always do, whatever the mandate
  says; a missing one is `mandate_scope`.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Iterable

from cookwala_ros.core.trust import check_signer, verify_document

ALWAYS_CONFIRM = ("irreversible", "safety_override")
COST = "x-cookwala-ros-cost"
INVOLVES = "x-cookwala-ros-involves"
CONFIRMED = "x-cookwala-ros-confirmed"


@dataclass(frozen=True)
class MandateVerdict:
    """`reason` is None (fine), "not_authorized" or "mandate_scope"; `detail` says why."""

    reason: str | None = None
    detail: str = ""


def is_agent_request(request: dict) -> bool:
    return "mandate" in request or str(request.get("requestedBy", "")).startswith("agent:")


def _money(value: object) -> tuple[Decimal, str] | None:
    if not isinstance(value, dict):
        return None
    try:
        return Decimal(str(value.get("amount"))), str(value.get("currency"))
    except InvalidOperation:
        return None


def _check_signature(mandate: dict, keys: list[dict]) -> MandateVerdict:
    if not mandate.get("signature"):
        return MandateVerdict("not_authorized", "the mandate is not signed by its principal")
    verdict = verify_document(mandate, keys)
    if not verdict:
        return MandateVerdict("not_authorized", f"mandate signature: {verdict.reason}: {verdict.detail}")
    record, _ = check_signer(mandate["signature"], keys)
    actor = (record or {}).get("actor")
    if actor and actor != mandate.get("principal"):
        return MandateVerdict("not_authorized", f"the mandate is signed by {actor}, not by its principal")
    return MandateVerdict()


def _check_caps(request: dict, mandate: dict) -> MandateVerdict:
    if COST not in request:
        return MandateVerdict()
    cost = _money(request[COST])
    if cost is None:
        return MandateVerdict("mandate_scope", f"/{COST}: not a Money amount")
    for cap_name in ("perOrderCap", "spendCap"):
        cap = _money(mandate.get(cap_name))
        if cap is None:
            continue
        if cap[1] != cost[1]:
            return MandateVerdict("mandate_scope", f"cost is in {cost[1]}, the mandate's {cap_name} in {cap[1]}")
        if cost[0] > cap[0]:
            return MandateVerdict("mandate_scope", f"cost {cost[0]} {cost[1]} exceeds the mandate's {cap_name} {cap[0]}")
    return MandateVerdict()


def _check_confirmations(request: dict, mandate: dict) -> MandateVerdict:
    involves = [a for a in request.get(INVOLVES) or [] if isinstance(a, str)]
    confirmed = {a for a in request.get(CONFIRMED) or [] if isinstance(a, str)}
    needs = set(mandate.get("confirmBefore") or []) | set(ALWAYS_CONFIRM)
    for action in involves:
        if action in needs and action not in confirmed:
            return MandateVerdict("mandate_scope", f"{action} needs the principal's confirmation")
    return MandateVerdict()


def check_mandate(request: dict, keys: Iterable[dict]) -> MandateVerdict:
    """The first problem of the request's mandate, in the order signature, agent, caps, confirmations.
    Requests without a mandate pass here (request_checks refuses agent requests that lack one)."""
    mandate = request.get("mandate")
    if not isinstance(mandate, dict):
        return MandateVerdict()
    for verdict in (
        _check_signature(mandate, list(keys)),
        _agent_matches(request, mandate),
        _check_caps(request, mandate),
        _check_confirmations(request, mandate),
    ):
        if verdict.reason:
            return verdict
    return MandateVerdict()


def _agent_matches(request: dict, mandate: dict) -> MandateVerdict:
    by = request.get("requestedBy")
    if str(by).startswith("agent:") and by != mandate.get("agent"):
        return MandateVerdict("not_authorized", f"requested by {by} but the mandate is for {mandate.get('agent')}")
    return MandateVerdict()
