"""One contract-net auction per call for proposals (REASONING §5.4), as a clock-injected state machine.

open -> collecting (first answer) -> closed (every roster robot answered every task, or the
deadline passed, or `close()`) -> awarded (`close()` ran the planner over the bids). All tasks of
a cfp share one window. Answers the auction cannot use (late, duplicate, unknown task or robot,
malformed) are never raised: a coordinator must survive any robot's message. They are kept in
`rejected` with the reason, so a test or an operator can see why a bid did not count.

The clock is injected (a callable returning seconds since the epoch, UTC), so the auction has no
sleeps, threads or wall clock of its own and replays exactly in tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from cookwala_ros.core.sensor_trust import parse_time
from cookwala_ros.teaming.allocator import DEFAULT_HANDOFF_S, Schedule, allocate
from cookwala_ros.teaming.types import (
    Answer, Award, Bid, CallForProposals, Decline, Unassignable, answers_from_team_data,
)

Clock = Callable[[], float]

OPEN, COLLECTING, CLOSED, AWARDED = "open", "collecting", "closed", "awarded"
REJECT_REASONS = ("late", "duplicate", "unknown_task", "unknown_robot", "malformed", "wrong_cfp")


@dataclass(frozen=True)
class Rejected:
    """An answer the auction ignored, and why (one of REJECT_REASONS)."""

    reason: str
    detail: str
    actor_id: str | None = None
    task_id: str | None = None


@dataclass(frozen=True)
class AuctionResult:
    cfp_id: str
    awards: tuple[Award, ...]  # one per winning actor, its tasks in plan order
    winner_by_task: dict[str, str]
    unassignable: tuple[Unassignable, ...]
    schedule: Schedule

    def team_plan(self) -> dict:
        return self.schedule.to_team_plan()


def deadline_seconds(deadline: str | None) -> float | None:
    """Epoch seconds of an RFC 3339 deadline; ValueError naming `deadline` when unreadable."""
    if deadline is None:
        return None
    moment = parse_time(deadline)
    if moment is None:
        raise ValueError(f"deadline: {deadline!r} is not an RFC 3339 date-time with a zone")
    return moment.timestamp()


class Auction:
    """Collects bids and declines for one cfp and awards them once.

    `roster` is the set of robots asked; without one, unknown robots are accepted and the window
    only ends at the deadline or `close()`.
    """

    def __init__(self, cfp: CallForProposals, clock: Clock, *, roster: Iterable[str] | None = None,
                 handoff_s: float = DEFAULT_HANDOFF_S, assumptions: Iterable[str] = (), solver: str = "auto"):
        self.cfp = cfp
        self.solver = solver  # allocator.SOLVERS
        self.assumptions = tuple(assumptions)  # carried into the TeamPlan's assumptions
        self._clock = clock
        self.roster = None if roster is None else frozenset(roster)
        self.handoff_s = handoff_s
        self.deadline_s = deadline_seconds(cfp.deadline)
        self.created_s = clock()
        if self.deadline_s is not None and self.created_s >= self.deadline_s:
            raise ValueError(f"deadline: {cfp.deadline} is already past; refusing cfp {cfp.cfp_id!r}")
        self._task_ids = frozenset(t.id for t in cfp.tasks)
        self._answers: dict[tuple[str, str], Answer] = {}
        self.rejected: list[Rejected] = []
        self._closed_by: str | None = None
        self._result: AuctionResult | None = None

    # -------------------------------------------------------------- state

    @property
    def state(self) -> str:
        if self._result is not None:
            return AWARDED
        if self._window_shut() is not None:
            return CLOSED
        return COLLECTING if self._answers else OPEN

    def _window_shut(self) -> str | None:
        """Why the window is shut (`closed`, `all_answered`, `deadline`), or None while it is open."""
        if self._closed_by is None and self.deadline_s is not None and self._clock() >= self.deadline_s:
            self._closed_by = "deadline"
        return self._closed_by

    def _everyone_answered(self) -> bool:
        if not self.roster:
            return False
        return all((actor, task) in self._answers for actor in self.roster for task in self._task_ids)

    @property
    def bids(self) -> list[Bid]:
        return [a for a in self._answers.values() if isinstance(a, Bid)]

    @property
    def declines(self) -> list[Decline]:
        return [a for a in self._answers.values() if isinstance(a, Decline)]

    # -------------------------------------------------------------- input

    def submit(self, answer: Any) -> bool:
        """Take a Bid, a Decline or a bid/decline TeamData dict; True when it counted."""
        if isinstance(answer, (Bid, Decline)):
            answers: list[Answer] = [answer]
        elif isinstance(answer, dict):
            try:
                answers = answers_from_team_data(answer)
            except ValueError as error:
                return self._reject("malformed", str(error), answer.get("from"), None)
        else:
            return self._reject("malformed", f"not a bid or a decline: {type(answer).__name__}", None, None)
        counted = [self._take(a) for a in answers]
        return any(counted)

    def _take(self, answer: Answer) -> bool:
        who, task = answer.actor_id, answer.task_id
        why = self._window_shut()
        if why is not None:
            return self._reject("late", f"after the {'deadline' if why == 'deadline' else 'auction closed'}", who, task)
        if answer.cfp_id != self.cfp.cfp_id:
            return self._reject("wrong_cfp", f"answers {answer.cfp_id!r}, not {self.cfp.cfp_id!r}", who, task)
        if task not in self._task_ids:
            return self._reject("unknown_task", f"{task!r} is not offered in {self.cfp.cfp_id!r}", who, task)
        if self.roster is not None and who not in self.roster:
            return self._reject("unknown_robot", f"{who!r} was not asked", who, task)
        if (who, task) in self._answers:
            return self._reject("duplicate", f"{who!r} already answered {task!r}; the first answer stands", who, task)
        self._answers[(who, task)] = answer
        if self._everyone_answered():
            self._closed_by = "all_answered"
        return True

    def _reject(self, reason: str, detail: str, actor_id: Any, task_id: Any) -> bool:
        self.rejected.append(Rejected(reason, detail, actor_id if isinstance(actor_id, str) else None,
                                      task_id if isinstance(task_id, str) else None))
        return False

    # -------------------------------------------------------------- output

    def close(self) -> AuctionResult:
        """Shut the window (if still open) and award: the team plan over the bids (greedy, CP-SAT's
        when shorter: teaming/allocator.py) decides who does what. Calling it again returns the same result."""
        if self._result is not None:
            return self._result
        if self._window_shut() is None:
            self._closed_by = "closed"
        schedule = allocate(self.cfp.tasks, self.bids, declines=self.declines, handoff_s=self.handoff_s,
                            roster=sorted(self.roster or ()), assumptions=self.assumptions, solver=self.solver)
        by_actor: dict[str, list[str]] = {}
        for scheduled in sorted(schedule.tasks.values(), key=lambda s: (s.start_s, s.task_id)):
            by_actor.setdefault(scheduled.actor_id, []).append(scheduled.task_id)
        awards = tuple(Award(self.cfp.cfp_id, actor, tuple(tasks), self.cfp.from_id)
                       for actor, tasks in sorted(by_actor.items()))
        self._result = AuctionResult(self.cfp.cfp_id, awards,
                                     {t: s.actor_id for t, s in sorted(schedule.tasks.items())},
                                     schedule.unassignable, schedule)
        return self._result

    @property
    def closed_by(self) -> str | None:
        """`all_answered`, `deadline` or `closed` (an explicit close) once the window is shut."""
        return self._window_shut()
