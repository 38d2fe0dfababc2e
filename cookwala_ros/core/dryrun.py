"""Dry run and pre-start check: can this device cook this recipe, and how (CORE §3, §6).

Nothing is executed. Request-level checks come first (see `request_checks`), then every node in
graph order: who does it (the device, or a person when the device cannot and one is present),
its equipment, its numbers against the envelope and the SafetyLimits, presence for steps that
may not run unattended, and the sensor-ladder rung that will verify it. The first failing check
names the refusal reason and the node (project decision 4). This is a superset of the
reference dry run: it also covers equipment, time/temperature holds, minimum core temperatures,
heat levels above a limit, the recipe's own supervision level, onSensorMissing and critical
control points. One deliberate difference: a `target` on a sensor that does not measure the
envelope's medium (a core probe in an oven) is not held to the medium's band (CORE §3 speaks of
"a target on the medium's sensor").
"""

from __future__ import annotations

import dataclasses
import heapq
from dataclasses import dataclass, field
from typing import Any, Iterable

from cookwala_ros.core import envelope, ladder, limits as limits_mod, vocab
from cookwala_ros.core.request_checks import RequestContext, first_request_refusal
from cookwala_ros.core.sensor_trust import trusted_sensors

DEVICE_ROLES = {"robot", "appliance", "any"}
HUMAN_ROLES = {"human", "any"}


@dataclass(frozen=True)
class NodePlan:
    node: str
    op: str
    by: str  # device | human
    verified_by: str  # sensor | model | time | human
    rung: str  # the ladder rung used
    sensor: str | None = None  # the device's own sensor id for a sensor rung

    def to_wire(self) -> dict:
        out = {"node": self.node, "op": self.op, "by": self.by, "verifiedBy": self.verified_by, "rung": self.rung}
        if self.sensor:
            out["sensor"] = self.sensor
        return out


@dataclass
class PrecheckResult:
    accepted: bool
    reason: str | None = None
    node: str | None = None
    detail: str = ""
    plan: list[NodePlan] = field(default_factory=list)

    @property
    def state(self) -> str:
        return "accepted" if self.accepted else "refused"

    def to_wire(self) -> dict:
        out: dict[str, Any] = {"state": self.state, "plan": [p.to_wire() for p in self.plan]}
        if not self.accepted:
            out["refusal"] = {"reason": self.reason, "detail": self.detail[:500]}  # schema maxLength
            if self.node is not None:
                out["refusal"]["node"] = self.node
        return out


class _Refuse(Exception):
    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


# ------------------------------------------------------------------ input shape

def recipe_nodes(recipe: Any) -> list[dict]:
    """The recipe's nodes; raises ValueError naming the bad field."""
    if not isinstance(recipe, dict):
        raise ValueError("/: a recipe must be an object")
    process = recipe.get("process")
    if not isinstance(process, dict) or not isinstance(process.get("nodes"), list) or not process["nodes"]:
        raise ValueError("/process/nodes: a recipe needs a non-empty array of nodes")
    seen = set()
    for i, node in enumerate(process["nodes"]):
        if not isinstance(node, dict):
            raise ValueError(f"/process/nodes/{i}: must be an object")
        for key in ("id", "op"):
            if not isinstance(node.get(key), str):
                raise ValueError(f"/process/nodes/{i}/{key}: required string")
        if node["id"] in seen:
            raise ValueError(f"/process/nodes/{i}/id: duplicate node id {node['id']!r}")
        seen.add(node["id"])
        if "params" in node and not isinstance(node["params"], dict):
            raise ValueError(f"/process/nodes/{i}/params: must be an object")
    return process["nodes"]


def _dependencies(recipe: dict, nodes: list[dict]) -> dict[int, set[int]]:
    """node index -> indices of the nodes that must come after it: explicit edges (unknown ids
    ignored), and inputs (or `into`) naming another node's output."""
    index = {n["id"]: i for i, n in enumerate(nodes) if isinstance(n.get("id"), str)}
    producers = {n["output"]: i for i, n in enumerate(nodes) if isinstance(n.get("output"), str)}
    after: dict[int, set[int]] = {i: set() for i in range(len(nodes))}
    edges = recipe["process"].get("edges")
    if isinstance(edges, list):
        for e in edges:
            if isinstance(e, dict) and e.get("from") in index and e.get("to") in index:
                after[index[e["from"]]].add(index[e["to"]])
    for i, n in enumerate(nodes):
        inputs = n.get("inputs") if isinstance(n.get("inputs"), list) else []  # shapes: schema errors come later
        for ref in [r for r in inputs if isinstance(r, str)] + ([n["into"]] if isinstance(n.get("into"), str) else []):
            j = producers.get(ref)
            if j is not None and j != i:
                after[j].add(i)
    return after


def node_predecessors(recipe: dict) -> dict[str, tuple[str, ...]]:
    """node id -> ids of the nodes it directly follows (the dependencies `graph_order` uses),
    in recipe order. Unlike `graph_order` a cycle is kept: the caller decides what it means."""
    nodes = recipe_nodes(recipe)
    before: dict[int, set[int]] = {i: set() for i in range(len(nodes))}
    for i, targets in _dependencies(recipe, nodes).items():
        for t in targets:
            before[t].add(i)
    return {nodes[i]["id"]: tuple(nodes[j]["id"] for j in sorted(before[i])) for i in range(len(nodes))}


def graph_order(recipe: dict) -> list[dict]:
    """Nodes in dependency order (explicit edges, or inputs naming another node's output);
    ties and unrelated nodes keep the recipe's order. A cycle falls back to the recipe order."""
    nodes = recipe_nodes(recipe)
    after = _dependencies(recipe, nodes)
    indegree = {i: 0 for i in after}
    for targets in after.values():
        for t in targets:
            indegree[t] += 1
    ready = [i for i, d in indegree.items() if d == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for t in sorted(after[i]):
            indegree[t] -= 1
            if indegree[t] == 0:
                heapq.heappush(ready, t)
    if len(order) != len(nodes):
        return list(nodes)
    return [nodes[i] for i in order]


def _caps(capabilities: Any) -> dict:
    if not isinstance(capabilities, dict):
        raise ValueError("capabilities: must be a capability document (an object)")
    inner = capabilities.get("capabilities", capabilities)
    if not isinstance(inner, dict):
        raise ValueError("capabilities/capabilities: must be an object")
    return inner


def device_ops(capabilities: dict) -> set[str]:
    """Operations the device declares and may run (non-executable ops are ignored)."""
    out = set()
    ops = _caps(capabilities).get("ops") or []
    if not isinstance(ops, list):
        raise ValueError("capabilities/capabilities/ops: must be an array")
    for record in ops:
        op_id = record.get("op") if isinstance(record, dict) else None
        if not isinstance(op_id, str):
            continue
        if vocab.is_known_op(op_id) and not vocab.is_executable(op_id):
            continue
        out.add(op_id)
    return out


def _packs(limits: Any) -> dict:
    if limits is None:
        return limits_mod.default_pack()
    if isinstance(limits, dict):
        limits_mod.check_pack(limits, "limits")
        return limits
    if isinstance(limits, (list, tuple)):
        return limits_mod.merge_packs(*limits) if limits else limits_mod.default_pack()
    raise ValueError("limits: must be a SafetyLimits pack or a list of packs")


# ------------------------------------------------------------------ per-node checks

def _who(node: dict, op_id: str, ops: set[str], human_present: bool) -> str:
    allowed = set((node.get("assignment") or {}).get("allowed") or ["any"])
    if not vocab.is_known_op(op_id) and not op_id.startswith("x-"):
        raise _Refuse("missing_capability", f"{op_id} is not a known operation")
    if op_id in ops and allowed & DEVICE_ROLES:
        return "device"
    if human_present and allowed & HUMAN_ROLES:
        return "human"
    if op_id in ops and not human_present:
        raise _Refuse("needs_human_present", f"node may only be done by a person ({', '.join(sorted(allowed))})")
    raise _Refuse("missing_capability", f"device cannot perform {op_id} and no person is present to do it")


def _class_available(required: str, declared: Iterable[str]) -> bool:
    return any(d == required or d.startswith(required + ".") for d in declared if isinstance(d, str))


def _check_equipment(node: dict, recipe: dict, capabilities: dict) -> None:
    refs = node.get("equipment") or []
    if not refs:
        return
    catalogue = {e.get("ref"): e for e in recipe.get("equipment") or [] if isinstance(e, dict)}
    caps = _caps(capabilities)
    declared = {
        "cw.eq.heat.": [h.get("class") for h in caps["heat"]] if isinstance(caps.get("heat"), list) else None,
        "cw.eq.vessel.": [v.get("class") for v in caps["vessels"]] if isinstance(caps.get("vessels"), list) else None,
    }
    for ref in refs:
        item = catalogue.get(ref)
        if item is None:
            raise _Refuse("missing_equipment", f"equipment {ref!r} is not listed in the recipe's equipment")
        if item.get("optional"):
            continue
        cls = item.get("class", "")
        for prefix, classes in declared.items():
            if isinstance(cls, str) and cls.startswith(prefix) and classes is not None and not _class_available(cls, classes):
                raise _Refuse("missing_equipment", f"device declares no {cls} (equipment {ref!r})")


def _check_limits(op_id: str, node: dict, pack: dict, food_classes: list) -> None:
    env = vocab.envelope(op_id) or {}
    medium = env.get("medium")
    params = node.get("params") or {}
    temps = [(k, v) for k, v in envelope.node_temperatures(op_id, node) if envelope.is_number(v)]
    limit = limits_mod.strictest_max(pack, "max_temp", medium, op_id)
    if limit is not None:
        for key, t in temps:
            if t > limit["max"]:
                raise _Refuse("safety_limit", f"{key} {t:g} °C exceeds local limit {limit.get('id')} ({limit['max']:g} °C)")
        heat = params.get("heat")
        if medium == "pan_surface" and isinstance(heat, str) and (limit.get("appliesTo") or {}).get("medium") == "pan_surface":
            lo, _hi = vocab.heat_level(heat)
            if lo > limit["max"]:
                raise _Refuse("safety_limit", f"heat level {heat} (pan from {lo} °C) exceeds local limit {limit.get('id')} ({limit['max']:g} °C)")
    hold = limits_mod.strictest_min(pack, "time_temp", medium, op_id)
    if hold is not None:
        for key, t in temps:
            if t < hold["min"]:
                raise _Refuse("safety_limit", f"{key} {t:g} °C is below local limit {hold.get('id')} ({hold['min']:g} °C)")
    if "pressureKPa" in params and envelope.is_number(params["pressureKPa"]):
        plimit = limits_mod.strictest_max(pack, "pressure", medium, op_id, unit="kPa")
        if plimit is not None and params["pressureKPa"] > plimit["max"]:
            raise _Refuse("safety_limit", f"pressure {params['pressureKPa']:g} kPa exceeds local limit {plimit.get('id')} ({plimit['max']:g} kPa)")
    core = limits_mod.strictest_min(pack, "min_core_temp", medium, op_id, food_classes)
    if core is not None:
        for threshold in _core_temp_thresholds(node.get("until")):
            if envelope.is_number(threshold) and threshold < core["min"]:
                raise _Refuse("safety_limit", f"end condition core {threshold:g} °C is below local limit {core.get('id')} ({core['min']:g} °C)")


def _core_temp_thresholds(condition: Any) -> list:
    """`gte` thresholds of non-optional core-temperature checks in an end condition tree."""
    out: list = []
    if not isinstance(condition, dict):
        return out
    if condition.get("sensor") == "cw.sense.core_temp" and "gte" in condition and not condition.get("optional"):
        out.append(condition["gte"])
    for key in ("all", "any"):
        for child in condition.get(key) or []:
            out.extend(_core_temp_thresholds(child))
    return out


def _plan_node(node: dict, recipe: dict, capabilities: dict, ops: set[str], sensors: frozenset[str],
               pack: dict, human_present: bool, allow_model: bool, altitude_m: Any,
               food_classes: list) -> NodePlan:
    op_id = node["op"]
    by = _who(node, op_id, ops, human_present)
    known = vocab.is_known_op(op_id)
    if by == "device":
        _check_equipment(node, recipe, capabilities)
    if known:
        problem = envelope.node_problem(op_id, node, altitude_m)
        if problem:
            raise _Refuse("envelope_out_of_range", problem)
    if by == "human":
        return NodePlan(node["id"], op_id, "human", "human", "human")
    if known:
        _check_limits(op_id, node, pack, food_classes)
    env = vocab.envelope(op_id) if known else None
    if not human_present:
        if env and not env.get("unattended", True):
            raise _Refuse("needs_human_present", f"{op_id} may not run unattended and nobody is present")
        why = _recipe_presence_reason(recipe, node["id"])
        if why:
            raise _Refuse("needs_human_present", f"{why} and nobody is present")
    policy = ladder.sensor_policy(node)
    if known:
        rung = ladder.choose_rung(op_id, sensors, allow_model, human_present, policy)
    else:  # vendor operation: no envelope, verified by time unless the step says otherwise
        rung = None if policy == "refuse" else ("time" if policy in (None, "time") else None)
    if rung is None:
        raise _Refuse("missing_sensor_no_fallback",
                      ladder.describe_refusal(op_id, policy) if known else f"no way to verify {op_id}")
    if ladder.is_sensor_rung(rung):
        return NodePlan(node["id"], op_id, "device", "sensor", rung, ladder.device_sensor_for(rung, _declared_sensors(capabilities)))
    return NodePlan(node["id"], op_id, "device", rung, rung)


def _recipe_presence_reason(recipe: dict, node_id: str) -> str | None:
    """Why the recipe itself asks for a person at this node (its supervision level, or the node
    being one the recipe says never to leave), or None."""
    safety = recipe.get("safety") if isinstance(recipe.get("safety"), dict) else {}
    supervision = (safety.get("supervision") or {}).get("default") if isinstance(safety.get("supervision"), dict) else None
    if supervision in ("presence_required", "hands_on_required"):
        return f"the recipe's supervision is {supervision}"
    never_leave = (safety.get("abort") or {}).get("neverLeave") if isinstance(safety.get("abort"), dict) else None
    if isinstance(never_leave, list) and node_id in never_leave:
        return f"the recipe says never to leave node {node_id}"
    return None


def _declared_sensors(capabilities: dict) -> list[str]:
    out = []
    for record in _caps(capabilities).get("sensors") or []:
        if isinstance(record, dict) and isinstance(record.get("sensor"), str):
            out.append(record["sensor"])
            out.extend(c for c in record.get("visionCues") or [] if isinstance(c, str))
    return out


# ------------------------------------------------------------------ entry points

def precheck(recipe: dict | None, capabilities: dict, *, limits: Any = None, human_present: bool = False,
             allow_model: bool = True, altitude_m: Any = 0, now: Any = None,
             request: RequestContext | None = None, demoted_sensors: Iterable[str] = ()) -> PrecheckResult:
    """The full pre-start check. `limits` is a pack, a list of packs (merged, stricter wins) or
    None (the standard's default pack). Raises ValueError for malformed input."""
    ctx = request or RequestContext()
    if ctx.now is None:
        ctx = dataclasses.replace(ctx, now=now)
    refusal = first_request_refusal(recipe, ctx)
    if refusal:
        return PrecheckResult(False, refusal[0], None, refusal[1])
    nodes = graph_order(recipe)
    envelope.altitude_shift("water", altitude_m)  # validates altitude early
    pack = _packs(limits)
    ops = device_ops(capabilities)
    sensors = trusted_sensors(capabilities, now, demoted_sensors)
    plan: list[NodePlan] = []
    for node in nodes:
        try:
            plan.append(_plan_node(node, recipe, capabilities, ops, sensors, pack, human_present,
                                   allow_model, altitude_m, list(ctx.food_classes)))
        except _Refuse as refused:
            return PrecheckResult(False, refused.reason, node["id"], refused.detail, plan)
    return PrecheckResult(True, plan=plan)


def dry_run(recipe: dict, capabilities: dict, **kwargs: Any) -> dict:
    """`precheck` as a wire dict: {'state', 'plan', 'refusal'?}."""
    return precheck(recipe, capabilities, **kwargs).to_wire()


def precheck_from_wire(data: dict) -> PrecheckResult:
    """`precheck` from the camelCase input of a dry-run vector."""
    return precheck(
        data.get("recipe"), data.get("capabilities") or {}, limits=data.get("limits"),
        human_present=bool(data.get("humanPresent", False)), allow_model=bool(data.get("allowModel", True)),
        altitude_m=data.get("altitudeM", 0), now=data.get("now"),
        request=RequestContext.from_wire(data.get("request")),
    )


def vector_dryrun(data: dict) -> dict:
    """Conformance handler for `dryrun` vectors: {state, reason, by}."""
    result = precheck_from_wire(data)
    return {"state": result.state, "reason": result.reason, "by": [p.by for p in result.plan]}
