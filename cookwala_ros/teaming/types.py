"""The contract-net vocabulary (REASONING §5.4) and its TeamData wire form.

The standard's `TeamData` (event.schema.json) carries task *ids* only and has no decline body,
so what a bidder needs to judge a task travels in `x-cookwala-ros-tasks`, and a decline's reason
in `x-cookwala-ros-reason` / `x-cookwala-ros-detail` (the standard allows `x-` members). Parsers
check the standard's shape first, so a malformed dict fails with a ValueError that names the
field, never a KeyError deep inside the auction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable

TASKS_KEY = "x-cookwala-ros-tasks"
REASON_KEY = "x-cookwala-ros-reason"
DETAIL_KEY = "x-cookwala-ros-detail"
COST_KEY = "x-cookwala-ros-cost"
DURATIONS_KEY = "x-cookwala-ros-durationsS"  # per-task seconds when one bid covers several tasks

DECLINE_REASONS = ("missing_op", "missing_sensor", "missing_equipment", "needs_human_present", "busy", "other")
# The coarser reasons of cookwala_msgs/TeamDecline (REASON_*); the fine one goes in its detail.
MESSAGE_REASON = {
    "missing_op": "cannot_do", "missing_sensor": "cannot_do", "missing_equipment": "cannot_do",
    "needs_human_present": "cannot_do", "busy": "busy", "other": "cannot_do",
}

# TeamData members and the JSON types the standard gives them.
_TEAM_DATA_TYPES: dict[str, type | tuple[type, ...]] = {
    "cfpId": str, "sessionId": str, "tasks": list, "from": str, "bid": dict, "award": dict, "deadline": str,
}
_BID_TYPES: dict[str, type | tuple[type, ...]] = {
    "actorId": str, "canDo": list, "etaS": (int, float), "durationS": (int, float),
    "batteryAfterPct": (int, float), "energyWh": (int, float), "confidence": (int, float), "constraints": list,
}
_AWARD_TYPES: dict[str, type | tuple[type, ...]] = {"actorId": str, "tasks": list}


def _finite_non_negative(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name}: must be a finite number >= 0, got {value!r}")
    return float(value)


def _ids(values: Iterable[Any], name: str) -> tuple[str, ...]:
    out = tuple(values)
    for i, v in enumerate(out):
        if not isinstance(v, str) or not v:
            raise ValueError(f"{name}/{i}: must be a non-empty string")
    return out


@dataclass(frozen=True)
class TaskNeeds:
    """What a robot must have to do a task; checked by the bidder with the executor's own checks."""

    equipment: tuple[str, ...] = ()  # equipment classes (cw.eq.*) the robot must declare
    sensors: tuple[str, ...] = ()  # sensor ids (cw.sense.*) it must declare, trusted
    attended: bool = False  # a person must be present while it runs

    def __post_init__(self) -> None:
        object.__setattr__(self, "equipment", _ids(self.equipment, "needs/equipment"))
        object.__setattr__(self, "sensors", _ids(self.sensors, "needs/sensors"))


@dataclass(frozen=True)
class Task:
    """One job of the job shop: a process node (id ideally `recipeId#nodeId`) and its op.

    `resources` are shared kitchen resources (e.g. `appliance:hob-1`) that no two tasks may use
    at once, whoever runs them; `needs` is what the robot itself must have.
    """

    id: str
    op: str
    duration_s: float | None = None
    predecessors: tuple[str, ...] = ()
    needs: TaskNeeds = field(default_factory=TaskNeeds)
    resources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ValueError("id: a task needs a non-empty string id")
        if not isinstance(self.op, str) or not self.op:
            raise ValueError(f"op: task {self.id!r} needs an op id")
        if self.duration_s is not None:
            object.__setattr__(self, "duration_s", _finite_non_negative(self.duration_s, "durationS"))
        object.__setattr__(self, "predecessors", _ids(self.predecessors, "predecessors"))
        object.__setattr__(self, "resources", _ids(self.resources, "resources"))
        if self.id in self.predecessors:
            raise ValueError(f"predecessors: task {self.id!r} cannot precede itself")

    def to_wire(self) -> dict:
        out: dict[str, Any] = {"id": self.id, "op": self.op}
        if self.duration_s is not None:
            out["durationS"] = self.duration_s
        if self.predecessors:
            out["predecessors"] = list(self.predecessors)
        needs: dict[str, Any] = {}
        if self.needs.equipment:
            needs["equipment"] = list(self.needs.equipment)
        if self.needs.sensors:
            needs["sensors"] = list(self.needs.sensors)
        if self.needs.attended:
            needs["attended"] = True
        if needs:
            out["needs"] = needs
        if self.resources:
            out["resources"] = list(self.resources)
        return out

    @classmethod
    def from_wire(cls, data: Any, pointer: str = "task") -> "Task":
        if not isinstance(data, dict):
            raise ValueError(f"{pointer}: must be an object")
        known = {"id", "op", "durationS", "predecessors", "needs", "resources"}
        for key in data:
            if key not in known and not key.startswith("x-"):
                raise ValueError(f"{pointer}/{key}: unknown field")
        needs = data.get("needs", {})
        if not isinstance(needs, dict):
            raise ValueError(f"{pointer}/needs: must be an object")
        for key in needs:
            if key not in ("equipment", "sensors", "attended") and not key.startswith("x-"):
                raise ValueError(f"{pointer}/needs/{key}: unknown field")
        for key in ("predecessors", "resources"):
            if not isinstance(data.get(key, []), list):
                raise ValueError(f"{pointer}/{key}: must be an array")
        for key in ("equipment", "sensors"):
            if not isinstance(needs.get(key, []), list):
                raise ValueError(f"{pointer}/needs/{key}: must be an array")
        if not isinstance(needs.get("attended", False), bool):
            raise ValueError(f"{pointer}/needs/attended: must be a boolean")
        try:
            return cls(
                id=data.get("id"), op=data.get("op"), duration_s=data.get("durationS"),
                predecessors=tuple(data.get("predecessors", [])), resources=tuple(data.get("resources", [])),
                needs=TaskNeeds(tuple(needs.get("equipment", [])), tuple(needs.get("sensors", [])),
                                needs.get("attended", False)),
            )
        except ValueError as error:
            raise ValueError(f"{pointer}/{error}") from None


@dataclass(frozen=True)
class CallForProposals:
    """team.cfp: many tasks offered in one window (one deadline for all)."""

    cfp_id: str
    from_id: str
    tasks: tuple[Task, ...]
    deadline: str | None = None  # RFC 3339; after it bids are ignored
    session_id: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tasks", tuple(self.tasks))
        if not self.tasks:
            raise ValueError("tasks: a call for proposals needs at least one task")
        ids = [t.id for t in self.tasks]
        duplicate = next((i for i in ids if ids.count(i) > 1), None)
        if duplicate is not None:
            raise ValueError(f"tasks: duplicate task id {duplicate!r}")

    def task(self, task_id: str) -> Task | None:
        return next((t for t in self.tasks if t.id == task_id), None)

    def to_team_data(self) -> dict:
        out: dict[str, Any] = {"cfpId": self.cfp_id, "from": self.from_id, "tasks": [t.id for t in self.tasks],
                               TASKS_KEY: [t.to_wire() for t in self.tasks]}
        if self.deadline is not None:
            out["deadline"] = self.deadline
        if self.session_id is not None:
            out["sessionId"] = self.session_id
        return out

    @classmethod
    def from_team_data(cls, data: Any) -> "CallForProposals":
        check_team_data(data)
        _require(data, "cfpId", "from")
        details = data.get(TASKS_KEY)
        if not isinstance(details, list):
            raise ValueError(f"{TASKS_KEY}: required array of task descriptions (TeamData.tasks holds ids only)")
        tasks = tuple(Task.from_wire(d, f"{TASKS_KEY}/{i}") for i, d in enumerate(details))
        if "tasks" in data and list(data["tasks"]) != [t.id for t in tasks]:
            raise ValueError(f"tasks: ids {data['tasks']} differ from those described in {TASKS_KEY}")
        return cls(data["cfpId"], data["from"], tasks, data.get("deadline"), data.get("sessionId"))


@dataclass(frozen=True)
class Bid:
    """team.bid for one task: the bidder can start in `eta_s` and needs `duration_s` (seconds)."""

    cfp_id: str
    actor_id: str
    task_id: str
    can_do: bool = True
    eta_s: float = 0.0
    duration_s: float = 0.0
    cost: float | None = None  # lower is better; eta + duration when not given
    battery_after_pct: float | None = None

    def __post_init__(self) -> None:
        for name in ("cfp_id", "actor_id", "task_id"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"{name}: must be a non-empty string")
        object.__setattr__(self, "eta_s", _finite_non_negative(self.eta_s, "bid/etaS"))
        object.__setattr__(self, "duration_s", _finite_non_negative(self.duration_s, "bid/durationS"))
        cost = self.eta_s + self.duration_s if self.cost is None else _finite_non_negative(self.cost, f"bid/{COST_KEY}")
        object.__setattr__(self, "cost", cost)
        if self.battery_after_pct is not None:
            pct = _finite_non_negative(self.battery_after_pct, "bid/batteryAfterPct")
            if pct > 100:
                raise ValueError(f"bid/batteryAfterPct: {pct} is above 100")
            object.__setattr__(self, "battery_after_pct", pct)

    def to_team_data(self) -> dict:
        bid: dict[str, Any] = {"actorId": self.actor_id, "canDo": [self.task_id] if self.can_do else [],
                               "etaS": self.eta_s, "durationS": self.duration_s, COST_KEY: self.cost}
        if self.battery_after_pct is not None:
            bid["batteryAfterPct"] = self.battery_after_pct
        return {"cfpId": self.cfp_id, "from": self.actor_id, "tasks": [self.task_id], "bid": bid}


@dataclass(frozen=True)
class Decline:
    """A robot's answer that it will not do a task, with a named reason (DECLINE_REASONS)."""

    cfp_id: str
    actor_id: str
    task_id: str
    reason: str
    detail: str = ""

    def __post_init__(self) -> None:
        for name in ("cfp_id", "actor_id", "task_id"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"{name}: must be a non-empty string")
        if self.reason not in DECLINE_REASONS:
            raise ValueError(f"{REASON_KEY}: {self.reason!r} is not one of {', '.join(DECLINE_REASONS)}")

    def to_team_data(self) -> dict:
        out = {"cfpId": self.cfp_id, "from": self.actor_id, "tasks": [self.task_id], REASON_KEY: self.reason}
        if self.detail:
            out[DETAIL_KEY] = self.detail
        return out


@dataclass(frozen=True)
class Award:
    """team.award: the tasks one actor won in one call."""

    cfp_id: str
    actor_id: str
    tasks: tuple[str, ...]
    from_id: str = ""

    def to_team_data(self) -> dict:
        out = {"cfpId": self.cfp_id, "award": {"actorId": self.actor_id, "tasks": list(self.tasks)}}
        if self.from_id:
            out["from"] = self.from_id
        return out

    @classmethod
    def from_team_data(cls, data: Any) -> "Award":
        check_team_data(data)
        _require(data, "cfpId", "award")
        _require(data["award"], "actorId", "tasks", pointer="award/")
        return cls(data["cfpId"], data["award"]["actorId"], tuple(data["award"]["tasks"]), data.get("from", ""))


@dataclass(frozen=True)
class Unassignable:
    """A task nobody will do, with each robot's reason (actor id -> decline reason)."""

    task_id: str
    reasons: dict[str, str]
    detail: str = ""

    def to_wire(self) -> dict:
        out: dict[str, Any] = {"task": self.task_id, "reasons": dict(sorted(self.reasons.items()))}
        if self.detail:
            out["detail"] = self.detail
        return out


Answer = Bid | Decline


# ------------------------------------------------------------------ TeamData shape

def _check_members(obj: dict, types: dict, pointer: str) -> None:
    for key, value in obj.items():
        if key.startswith("x-"):
            continue
        expected = types.get(key)
        if expected is None:
            raise ValueError(f"{pointer}{key}: not a TeamData member")
        if isinstance(value, bool) or not isinstance(value, expected):
            raise ValueError(f"{pointer}{key}: wrong type {type(value).__name__}")


def check_team_data(data: Any) -> None:
    """Raise ValueError naming the field when `data` is not the standard's TeamData shape."""
    if not isinstance(data, dict):
        raise ValueError("TeamData: must be an object")
    _check_members(data, _TEAM_DATA_TYPES, "")
    if "tasks" in data:
        _ids(data["tasks"], "tasks")
    if "bid" in data:
        _check_members(data["bid"], _BID_TYPES, "bid/")
        for key in ("canDo", "constraints"):
            if key in data["bid"]:
                _ids(data["bid"][key], f"bid/{key}")
    if "award" in data:
        _check_members(data["award"], _AWARD_TYPES, "award/")
        if "tasks" in data["award"]:
            _ids(data["award"]["tasks"], "award/tasks")


def _require(obj: dict, *keys: str, pointer: str = "") -> None:
    for key in keys:
        if key not in obj:
            raise ValueError(f"{pointer}{key}: required")


def answers_from_team_data(data: Any) -> list[Answer]:
    """A bid or decline TeamData -> one Bid or Decline per task it covers.

    A bid covering several tasks gives each its `x-cookwala-ros-durationsS` entry, else an equal
    share of `durationS`; tasks listed in `tasks` but not in `canDo` become `can_do=False` bids.
    """
    check_team_data(data)
    _require(data, "cfpId")
    if "bid" in data:
        bid = data["bid"]
        _require(bid, "actorId", "etaS", "durationS", pointer="bid/")
        can_do = list(bid.get("canDo", []))
        listed = list(data.get("tasks", []))
        task_ids = can_do + [t for t in listed if t not in can_do]
        if not task_ids:
            raise ValueError("bid/canDo: names no task (nor does tasks)")
        durations = bid.get(DURATIONS_KEY)
        if durations is not None and not isinstance(durations, dict):
            raise ValueError(f"bid/{DURATIONS_KEY}: must be an object of task id -> seconds")
        share = bid["durationS"] / max(1, len(can_do))
        out: list[Answer] = []
        for task_id in task_ids:
            duration = (durations or {}).get(task_id, share)
            out.append(Bid(data["cfpId"], bid["actorId"], task_id, task_id in can_do, bid["etaS"], duration,
                           bid.get(COST_KEY), bid.get("batteryAfterPct")))
        return out
    _require(data, "from", "tasks")
    reason = data.get(REASON_KEY, "other")
    detail = data.get(DETAIL_KEY, "")
    if not isinstance(detail, str):
        raise ValueError(f"{DETAIL_KEY}: must be a string")
    if not data["tasks"]:
        raise ValueError("tasks: a decline names the tasks it declines")
    return [Decline(data["cfpId"], data["from"], task_id, reason, detail) for task_id in data["tasks"]]
