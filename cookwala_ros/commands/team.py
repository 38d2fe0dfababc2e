"""`cookwala-ros team plan RECIPE --robot CAPS [--robot CAPS ...]`: who does what, and when.

Runs one contract-net round offline, in this process: the recipe's process nodes become the
tasks of one call for proposals (`teaming.recipe_tasks`), each robot answers from its
capabilities document with the bidder (the executor's own pre-start checks), the auction is
closed on a fixed clock (no waiting) and the allocator plans it (greedy, then CP-SAT's plan
when shorter; `--solver`). Prints a table
`task op robot start end` (seconds from the plan's start), the makespan, the hand-offs and, for
tasks nobody can do, each robot's reason; `--json` prints the standard's TeamPlan instead.
Exit 0 every task assigned, 1 some task unassignable, 2 unreadable or malformed input.
No ROS: the same round live over topics is `ros/team/` (team_node, team_coordinator).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Any

from cookwala_ros.core import json_limits
from cookwala_ros.core.conditions import format_duration
from cookwala_ros.teaming import cpsat
from cookwala_ros.teaming.allocator import DEFAULT_HANDOFF_S, SOLVERS
from cookwala_ros.teaming.auction import Auction
from cookwala_ros.teaming.bidder import answer_cfp
from cookwala_ros.teaming.recipe_tasks import RecipeTasks, enforce_assignment, recipe_tasks
from cookwala_ros.teaming.types import Answer, Bid, CallForProposals, Decline

PLANNER_ID = "cookwala-ros:team-plan"  # the `from` of the offline call for proposals
FIXED_CLOCK_S = 0.0  # the auction's clock: one instant, so the plan never waits on time


class _BadInput(Exception):
    pass


def _read(path: str, what: str) -> Any:
    try:
        text = sys.stdin.read() if path == "-" else pathlib.Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8"
        raise _BadInput(f"{what} {path}: cannot read ({why})") from None
    try:
        return json_limits.loads(text)
    except json_limits.JsonInputError as exc:
        raise _BadInput(f"{what} {path}: {exc}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    plan = sub.add_parser("plan", help="plan a recipe over several robots (one offline auction)",
                          description="Plan a recipe over several robots: one contract-net auction, "
                                      "CP-SAT allocation over a greedy hint. Exit 0 all assigned, 1 some task unassignable, 2 bad input.")
    plan.add_argument("recipe", metavar="RECIPE", help="recipe document (JSON); - for standard input")
    plan.add_argument("--robot", action="append", required=True, metavar="CAPS",
                      help="a robot's capabilities document (JSON, naming actor.id); repeat for each robot")
    plan.add_argument("--human-present", action="store_true",
                      help="a responsible person is present (lifts the robots' presence declines)")
    plan.add_argument("--solver", choices=SOLVERS, default="auto",
                      help="auto: CP-SAT when OR-Tools imports, else greedy (default); cp-sat; greedy")
    plan.add_argument("--handoff-s", type=float, default=DEFAULT_HANDOFF_S, metavar="S",
                      help=f"seconds to pass work from one robot to another (default {DEFAULT_HANDOFF_S:g})")
    plan.add_argument("--json", action="store_true", help="print the standard's TeamPlan as JSON")


def _robot(path: str) -> tuple[str, dict]:
    """(actor id, capabilities document) of one --robot file; _BadInput naming file and field."""
    doc = _read(path, "capabilities")
    where = f"capabilities {path}"
    if not isinstance(doc, dict):
        raise _BadInput(f"{where}: /: must be a capabilities document (an object)")
    actor = doc.get("actor")
    if not isinstance(actor, dict) or not isinstance(actor.get("id"), str) or not actor["id"]:
        raise _BadInput(f"{where}: /actor/id: required non-empty string (the robot's actor id)")
    inner = doc.get("capabilities")
    if not isinstance(inner, dict):
        raise _BadInput(f"{where}: /capabilities: required object")
    for key in ("ops", "sensors", "heat", "vessels"):
        records = inner.get(key, [])
        if not isinstance(records, list):
            raise _BadInput(f"{where}: /capabilities/{key}: must be an array")
        for i, record in enumerate(records):
            if not isinstance(record, dict):
                raise _BadInput(f"{where}: /capabilities/{key}/{i}: must be an object")
    for i, record in enumerate(inner.get("ops", [])):
        if not isinstance(record.get("op"), str):
            raise _BadInput(f"{where}: /capabilities/ops/{i}/op: required string")
    return actor["id"], doc


def _answers(cfp: CallForProposals, doc: dict, path: str, recipe: RecipeTasks, actor_id: str,
             human_present: bool) -> list[Answer]:
    try:
        answers = answer_cfp(cfp, doc, actor_id=actor_id, human_present=human_present)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:  # a shape the checks above missed
        raise _BadInput(f"capabilities {path}: malformed ({type(exc).__name__}: {exc})") from None
    return [enforce_assignment(recipe, answer) for answer in answers]


def _seconds(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def _print_table(result, recipe: RecipeTasks) -> None:
    rows = [("task", "op", "robot", "start", "end")]
    for s in sorted(result.schedule.tasks.values(), key=lambda s: (s.start_s, s.task_id)):
        rows.append((recipe.node_of.get(s.task_id, s.task_id), s.op, s.actor_id, _seconds(s.start_s), _seconds(s.end_s)))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for row in rows:
        left = "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3]))
        print(f"{left}  {row[3].rjust(widths[3])}  {row[4].rjust(widths[4])}")
    makespan = result.schedule.makespan_s
    proven = ", proven shortest" if result.schedule.optimal else ""
    print(f"makespan: {_seconds(makespan)} s ({format_duration(makespan)}; {result.schedule.solver}{proven})")
    handoffs = result.schedule.handoffs()
    if not handoffs:
        print("hand-offs: none")
    for h in handoffs:
        at = result.schedule.tasks[h["item"]].end_s
        print(f"hand-off: {recipe.node_of.get(h['item'], h['item'])} {h['from']} -> {h['to']} at {_seconds(at)} s")
    for note in recipe.assumptions:
        print(f"note: {note}")


def _unassignable_lines(result, auction: Auction, recipe: RecipeTasks, roster: list[str]) -> list[str]:
    answers: dict[tuple[str, str], Answer] = {(a.actor_id, a.task_id): a for a in auction.bids + auction.declines}
    lines = []
    for lost in result.unassignable:
        parts = []
        if lost.detail.startswith("predecessor"):
            preds = [recipe.node_of.get(p, p) for p in sorted(auction.cfp.task(lost.task_id).predecessors)
                     if any(u.task_id == p for u in result.unassignable)]
            parts.append(f"predecessor {', '.join(preds)} is unassignable")
        for actor in roster:
            answer = answers.get((actor, lost.task_id))
            if isinstance(answer, Bid) and answer.can_do:
                continue
            if isinstance(answer, Decline):
                reason = f"{answer.reason} ({answer.detail})" if answer.reason == "other" and answer.detail else answer.reason
            else:
                reason = lost.reasons.get(actor, "no_answer")
            parts.append(f"{actor}: {reason}")
        lines.append(f"unassignable: {recipe.node_of.get(lost.task_id, lost.task_id)}: {'; '.join(parts)}")
    return lines


def _plan(args: argparse.Namespace) -> int:
    if not (args.handoff_s >= 0 and args.handoff_s != float("inf")):
        raise _BadInput(f"--handoff-s: must be a finite number >= 0, got {args.handoff_s}")
    if args.solver == "cp-sat" and not cpsat.available():
        raise _BadInput("--solver cp-sat: OR-Tools does not import here (requirements/python.txt pins it)")
    document = _read(args.recipe, "recipe")
    try:
        recipe = recipe_tasks(document)
    except ValueError as exc:
        raise _BadInput(f"recipe {args.recipe}: {exc}") from None
    robots: list[tuple[str, str, dict]] = []
    for path in args.robot:
        actor_id, doc = _robot(path)
        other = next((p for a, p, _ in robots if a == actor_id), None)
        if other is not None:
            raise _BadInput(f"capabilities {path}: /actor/id: {actor_id!r} is also the actor of {other}")
        robots.append((actor_id, path, doc))
    recipe_id = document.get("id") if isinstance(document.get("id"), str) else "recipe"
    cfp = CallForProposals(f"cfp:{recipe_id}", PLANNER_ID, recipe.tasks)
    roster = [actor_id for actor_id, _, _ in robots]
    auction = Auction(cfp, lambda: FIXED_CLOCK_S, roster=roster, handoff_s=args.handoff_s, solver=args.solver,
                      assumptions=recipe.assumptions)
    for actor_id, path, doc in robots:
        for answer in _answers(cfp, doc, path, recipe, actor_id, args.human_present):
            auction.submit(answer)
    try:
        result = auction.close()
    except ValueError as exc:  # a cycle in the recipe graph
        raise _BadInput(f"recipe {args.recipe}: /process: {exc}") from None
    if args.json:
        print(json.dumps(result.team_plan(), indent=1, ensure_ascii=False))
    else:
        _print_table(result, recipe)
        for line in _unassignable_lines(result, auction, recipe, roster):
            print(line)
    return 1 if result.unassignable else 0


def run(args: argparse.Namespace) -> int:
    try:
        return _plan(args)
    except _BadInput as exc:
        print(f"cookwala-ros team {args.action}: {exc}", file=sys.stderr)
        return 2
