"""Execution lifecycle (CORE §7, core.schema.json ExecutionState) and Mission state moves.

An execution moves through a fixed table; anything not listed is illegal, and the four final
states never move again. The executor calls `transition()` for every state change so an illegal
move is an exception at the point it would happen, not a corrupted status later.
"""

from __future__ import annotations

from types import MappingProxyType

from cookwala_ros.core import vocab

EXECUTION_STATES = ("accepted", "refused", "preparing", "running", "paused", "needs_human",
                    "stopping", "stopped", "completed", "failed")

EXECUTION_TRANSITIONS = MappingProxyType({
    "accepted": frozenset({"preparing", "refused", "stopped"}),
    "preparing": frozenset({"running", "needs_human", "stopping", "failed"}),
    "running": frozenset({"paused", "needs_human", "stopping", "completed", "failed"}),
    "paused": frozenset({"running", "stopping"}),
    "needs_human": frozenset({"running", "stopping", "failed"}),
    "stopping": frozenset({"stopped"}),
    "refused": frozenset(),
    "stopped": frozenset(),
    "completed": frozenset(),
    "failed": frozenset(),
})

FINAL_STATES = frozenset(s for s, nxt in EXECUTION_TRANSITIONS.items() if not nxt)


class IllegalTransition(ValueError):
    """A state change the lifecycle table does not allow."""

    def __init__(self, state: str, to: str, machine: str = "execution"):
        super().__init__(f"illegal {machine} transition {state!r} -> {to!r}")
        self.state = state
        self.to = to


def is_state(state: object) -> bool:
    return isinstance(state, str) and state in EXECUTION_TRANSITIONS


def is_final(state: str) -> bool:
    """True for refused, stopped, completed and failed."""
    if not is_state(state):
        raise ValueError(f"unknown execution state: {state!r}")
    return state in FINAL_STATES


def can_transition(state: str, to: str) -> bool:
    """Whether an execution in `state` may move to `to` (unknown states never may)."""
    return is_state(state) and to in EXECUTION_TRANSITIONS[state]


def transition(state: str, to: str) -> str:
    """Return the new state, or raise IllegalTransition."""
    if not can_transition(state, to):
        raise IllegalTransition(state, to)
    return to


def stop_target(state: str) -> str | None:
    """Where a stop request moves an execution: `stopping` (or `stopped` from accepted);
    None in a final state, where stop is a no-op (project decision 1)."""
    if is_final(state):
        return None
    return "stopped" if state == "accepted" else "stopping"


# ------------------------------------------------------------------ Mission profile

def _mission() -> dict:
    return vocab.load("mission_states.json")


def mission_states() -> frozenset[str]:
    data = _mission()
    states = set(data["moves"]) | set(data["final"]) | {data["initial"]}
    for targets in data["moves"].values():
        states |= set(targets)
    return frozenset(states)


def mission_allowed_roles(state: str, to: str) -> tuple[str, ...]:
    """Roles that may move a Mission from `state` to `to` (empty when the move is illegal)."""
    return tuple(_mission()["moves"].get(state, {}).get(to, ()))


def can_mission_transition(state: str, to: str, role: str) -> bool:
    return role in mission_allowed_roles(state, to)


def mission_transition(state: str, to: str, role: str) -> str:
    if not can_mission_transition(state, to, role):
        raise IllegalTransition(state, to, machine=f"mission (role {role!r})")
    return to


# ------------------------------------------------------------------ conformance handlers

def vector_execution_transition(data: dict) -> dict:
    return {"allowed": can_transition(data["from"], data["to"])}


def vector_mission_transition(data: dict) -> dict:
    return {"allowed": can_mission_transition(data["from"], data["to"], data["role"])}
