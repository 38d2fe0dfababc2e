"""cookwala_team_coordinator: runs the contract-net round for a recipe, live (REASONING 5.4).

Any robot or a hub may run it. A request is a std_msgs/String JSON on
`/cookwala/team/plan_request`:

    {"requestId": "r1", "recipe": {...}, "robots": ["robot:a", "robot:b"], "windowS": 2.0,
     "sessionId": "optional", "execute": false, "executors": {"robot:a": "/robot_a/executor/execute_node"}}

`robots` is the roster (empty or absent: whoever answers, and the window runs to its deadline);
`windowS` defaults to the parameter `window_s`. The coordinator turns the recipe into tasks
(`teaming.recipe_tasks`), publishes one TeamCfp for all of them with deadline now + window, and
feeds every TeamBid/TeamDecline of that cfp into one `teaming.auction.Auction` (wall clock). The
round ends when every roster robot answered every task (the auction says so) or at the deadline
(a one-shot timer on the steady clock); then one TeamAward per winner goes out on
`/cookwala/team/award` and the answer on `/cookwala/team/plan` (std_msgs/String JSON):

    {"requestId": "r1", "accepted": true, "cfpId": "...", "closedBy": "all_answered",
     "plan": {TeamPlan}, "unassignable": [{"task", "reasons": {actor: reason}, "detail"}],
     "message": "..."}

With `"execute": true` the plan is then carried out (ros/team/team_run.py): each task's recipe
node goes as an ExecuteNode goal to its winner's executor (the action `executors` names for it)
once every predecessor completed, one task per robot at a time; `cookwala.task.*` CloudEvents
follow each task, and a second answer with the same requestId reports what became of each:

    {"requestId": "r1", "accepted": true, "cfpId": "...", "executed": {"outcome": "completed",
     "tasks": {"soup#n1": {"state": "completed", "actor": "robot:a", "detail": "..."}}}, "message": "..."}

A task whose goal is rejected or fails is `failed`, and what follows it is `blocked` (never sent);
so is one whose executor's action does not appear within `action_wait_s` (team_run.py).
While a plan runs the coordinator watches each winner's executor heartbeat (`<namespace>/cookwala/
heartbeat` beside its action) by its liveliness: a robot whose liveliness ends is lost, its
running task fails and its unstarted tasks are re-planned over the round's other bids
(TeamReplan on `/cookwala/team/replan`, `cookwala.team.replan`, then `cookwala.task.reassigned`).

A request that cannot be planned (malformed JSON or recipe) is answered `accepted: false` with
the reason; a repeated requestId is answered again, never re-run. Requests are independent: one
auction per cfp. Why topics and not a service: a new srv would need cookwala_msgs rebuilt
wherever the package runs; two topics need nothing new, and nothing here ever blocks a callback.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field

from rclpy.action import ActionClient
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.node import Node
from std_msgs.msg import String

from cookwala_msgs.action import ExecuteNode
from cookwala_msgs.msg import Event, Heartbeat, TeamAward, TeamBid, TeamCfp, TeamDecline, TeamReplan
from cookwala_ros.core import dryrun, json_limits
from cookwala_ros.core.timestamps import rfc3339
from cookwala_ros.ros import convert, names, qos
from cookwala_ros.ros.endpoints import LeanEndpoints
from cookwala_ros.ros.node_main import run_node
from cookwala_ros.ros.params import ParamSpec, declare_parameters
from cookwala_ros.ros.team import wire
from cookwala_ros.ros.team.team_run import ACTION_POLL_S, TeamRun
from cookwala_ros.teaming import events
from cookwala_ros.teaming.allocator import DEFAULT_HANDOFF_S, SOLVERS, replan
from cookwala_ros.teaming.auction import Auction
from cookwala_ros.teaming.dispatch import Dispatch
from cookwala_ros.teaming.recipe_tasks import RecipeTasks, enforce_assignment, recipe_tasks
from cookwala_ros.teaming.types import CallForProposals

MAX_WINDOW_S = 600.0
ANSWERED_KEPT = 256  # answers kept for repeated requestIds

PARAMETERS = (
    ParamSpec("coordinator_id", "", "TeamData `from` of its calls; empty = cookwala-ros:coordinator:<node name>."),
    ParamSpec("window_s", 2.0, "Default bidding window of a call [s] (a request's windowS wins).",
              minimum=0.0, maximum=MAX_WINDOW_S, exclusive_minimum=True),
    ParamSpec("handoff_s", DEFAULT_HANDOFF_S, "Seconds to pass work from one robot to another, for the plan.",
              minimum=0.0),
    ParamSpec("solver", "auto", "Team planner: auto (CP-SAT when OR-Tools imports, else greedy), cp-sat or greedy.",
              choices=SOLVERS),
    ParamSpec("robot_lease_s", 1.0, "Liveliness lease of a winner's executor heartbeat [s]: the executors' own "
              "heartbeat_lease_s (the kitchen scene's 1 s). A robot is lost this long after its last sign of life; "
              "an executor offering a longer lease does not match (logged as an incompatible QoS).",
              minimum=0.0, exclusive_minimum=True),
    ParamSpec("action_wait_s", 10.0, "How long a task waits for its winner's ExecuteNode action to appear in the "
              "graph before it fails [s, steady]; the clients are made when the request arrives.",
              minimum=0.0, maximum=600.0),
)


class BadRequest(ValueError):
    pass


@dataclass(frozen=True)
class PlanRequest:
    request_id: str
    recipe: dict
    robots: tuple[str, ...]
    window_s: float | None
    session_id: str | None
    execute: bool = False  # carry the plan out with ExecuteNode goals
    executors: tuple[tuple[str, str], ...] = ()  # (actor id, its executor's ExecuteNode action name)

    @classmethod
    def parse(cls, text: str) -> "PlanRequest":
        """A request from JSON; BadRequest naming the field (its requestId when it has one)."""
        try:
            data = json_limits.loads(text)
        except ValueError as exc:
            raise BadRequest(f"not a JSON request: {exc}") from None
        if not isinstance(data, dict):
            raise BadRequest("/: a request must be a JSON object")
        request_id = data.get("requestId")
        if not isinstance(request_id, str) or not request_id:
            raise BadRequest("/requestId: required non-empty string")
        robots = data.get("robots", [])
        if not isinstance(robots, list) or not all(isinstance(r, str) and r for r in robots):
            raise BadRequest("/robots: must be an array of actor ids")
        window = data.get("windowS")
        if window is not None and (isinstance(window, bool) or not isinstance(window, (int, float))
                                   or not math.isfinite(window) or not 0 < window <= MAX_WINDOW_S):
            raise BadRequest(f"/windowS: must be a number of seconds in (0, {MAX_WINDOW_S:g}]")
        session = data.get("sessionId")
        if session is not None and not isinstance(session, str):
            raise BadRequest("/sessionId: must be a string")
        if not isinstance(data.get("recipe"), dict):
            raise BadRequest("/recipe: required object (a Cookwala recipe)")
        execute = data.get("execute", False)
        if not isinstance(execute, bool):
            raise BadRequest("/execute: must be true or false")
        executors = data.get("executors", {})
        if not isinstance(executors, dict):
            raise BadRequest("/executors: must be an object of actor id -> ExecuteNode action name")
        for actor, action in executors.items():
            if not isinstance(action, str) or not _is_action_name(action):
                raise BadRequest(f"/executors/{actor}: must be a fully qualified action name, e.g. "
                                 "/robot_a/executor/execute_node")
        return cls(request_id, data["recipe"], tuple(dict.fromkeys(robots)),
                   None if window is None else float(window), session or None, execute,
                   tuple(sorted(executors.items())))


@dataclass
class Round:
    """One request's auction, its recipe tasks and its deadline timer."""

    request: PlanRequest
    recipe: RecipeTasks
    auction: Auction
    timer: object = None
    done: bool = field(default=False)


class CoordinatorNode(LeanEndpoints, Node):
    def __init__(self, **kwargs) -> None:
        super().__init__(names.TEAM_COORDINATOR_NODE, **kwargs)
        params = declare_parameters(self, PARAMETERS)
        self.coordinator_id = params["coordinator_id"] or f"cookwala-ros:coordinator:{self.get_fully_qualified_name()}"
        self.window_s = float(params["window_s"])
        self.handoff_s = float(params["handoff_s"])
        self.solver = params["solver"]
        self.robot_lease_s = float(params["robot_lease_s"])
        self.action_wait_s = float(params["action_wait_s"])
        self._lock = threading.Lock()  # rounds and answers (callbacks may run on several threads)
        self._rounds: dict[str, Round] = {}  # cfp id -> open round
        self._answered: dict[str, str] = {}  # request id -> answer JSON (repeats are answered again)
        self._closed: dict[str, str] = {}  # cfp id -> why its round closed (the latest ANSWERED_KEPT): late answers
        self._runs: dict[str, TeamRun] = {}  # cfp id -> plan being carried out
        self._actions: dict[str, ActionClient] = {}  # ExecuteNode action name -> its client
        self._action_ready_at: dict[str, float] = {}  # action name -> steady time its server was first seen
        self._due: list[tuple[float, object]] = []  # (steady time, callback) of TeamRun.later
        self._heartbeats: dict[str, object] = {}  # heartbeat topic -> its liveliness-watching subscription
        self._replan_pub = self.create_publisher(TeamReplan, names.TEAM_REPLAN, qos.team())
        self._replans = itertools.count(1)
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        group = MutuallyExclusiveCallbackGroup()  # one round's state is only ever touched by one callback
        profile = qos.team()
        self._cfp_pub = self.create_publisher(TeamCfp, names.TEAM_CFP, profile)
        self._award_pub = self.create_publisher(TeamAward, names.TEAM_AWARD, profile)
        self._plan_pub = self.create_publisher(String, names.TEAM_PLAN, profile)
        self._event_pub = self.create_publisher(Event, names.EVENTS, qos.events())  # cookwala.team.* CloudEvents
        self.create_subscription(String, names.TEAM_PLAN_REQUEST, self._on_request, profile, callback_group=group)
        self.create_subscription(TeamBid, names.TEAM_BID, self._on_answer, profile, callback_group=group)
        self.create_subscription(TeamDecline, names.TEAM_DECLINE, self._on_answer, profile, callback_group=group)
        self._group = group
        self._due_timer = self.create_timer(ACTION_POLL_S, self._on_due, callback_group=group, clock=self._steady)
        self._due_timer.cancel()
        self.get_logger().info(f"planning requests from {names.TEAM_PLAN_REQUEST} as {self.coordinator_id}")

    def _event(self, event: dict) -> None:
        self._event_pub.publish(convert.event_msg(event))

    # ------------------------------------------------------------------ requests

    def _on_request(self, msg: String) -> None:
        try:
            request = PlanRequest.parse(msg.data)
        except BadRequest as exc:
            self.get_logger().warning(f"ignoring plan request: {exc}")
            self._answer_refusal(_request_id_of(msg.data), str(exc))
            return
        with self._lock:
            if request.request_id in self._answered:
                self._plan_pub.publish(String(data=self._answered[request.request_id]))
                return
            if any(r.request.request_id == request.request_id for r in self._rounds.values()):
                return  # still collecting: it will be answered once
        try:
            tasks = recipe_tasks(request.recipe)
        except ValueError as exc:
            self._answer_refusal(request.request_id, f"recipe: {exc}")
            return
        for _, action in request.executors if request.execute else ():
            self._action_client(action)  # discovery runs while the robots bid (team_run.ACTION_SETTLE_S)
            self._watch_heartbeat(_heartbeat_topic(action))
        window = request.window_s or self.window_s
        recipe_id = request.recipe.get("id") if isinstance(request.recipe.get("id"), str) else "recipe"
        cfp = CallForProposals(f"cfp:{recipe_id}:{uuid.uuid4().hex[:12]}", self.coordinator_id, tasks.tasks,
                               rfc3339(time.time() + window), request.session_id)
        auction = Auction(cfp, time.time, roster=request.robots or None, handoff_s=self.handoff_s,
                          assumptions=tasks.assumptions, solver=self.solver)
        round_ = Round(request, tasks, auction)
        with self._lock:
            self._rounds[cfp.cfp_id] = round_
            # steady clock: a wall-clock jump cannot end or stretch the window; the auction's own
            # deadline check (wall time) only rejects answers that arrive after it
            round_.timer = self.create_timer(window, lambda: self._finish(cfp.cfp_id, "deadline"),
                                             callback_group=self._group, clock=self._steady)
        self._cfp_pub.publish(wire.cfp_msg(cfp, self.get_clock().now().to_msg()))
        self._event(events.cfp_event(cfp, source=self.coordinator_id, time_s=time.time()))
        self.get_logger().info(f"request {request.request_id}: cfp {cfp.cfp_id} with {len(cfp.tasks)} tasks, "
                               f"window {window:g} s, roster {list(request.robots) or 'open'}")

    def _answer_refusal(self, request_id: str | None, message: str) -> None:
        answer = {"requestId": request_id, "accepted": False, "message": message}
        self._publish_answer(request_id, answer)

    def _publish_answer(self, request_id: str | None, answer: dict) -> None:
        text = json.dumps(answer, separators=(",", ":"), ensure_ascii=False)
        with self._lock:
            if request_id:
                self._answered[request_id] = text
                while len(self._answered) > ANSWERED_KEPT:
                    self._answered.pop(next(iter(self._answered)))
        self._plan_pub.publish(String(data=text))

    # ------------------------------------------------------------------ answers

    def _on_answer(self, msg: TeamBid | TeamDecline) -> None:
        with self._lock:
            round_ = self._rounds.get(msg.cfp_id)
        if round_ is None:  # another coordinator's call, or one of ours already awarded: say so for ours
            with self._lock:
                closed_by = self._closed.get(msg.cfp_id)
            if closed_by is not None:
                self.get_logger().info(f"cfp {msg.cfp_id}: ignored a late answer from {msg.from_id!r}: the round "
                                       f"closed ({closed_by}) before it came")
            return
        try:
            answers = wire.answers_from_msg(msg)
        except ValueError as exc:
            self.get_logger().warning(f"ignoring malformed answer from {msg.from_id!r} to {msg.cfp_id}: {exc}")
            return
        for answer in answers:
            round_.auction.submit(enforce_assignment(round_.recipe, answer))
        if round_.auction.closed_by == "all_answered":
            self._finish(round_.auction.cfp.cfp_id, "all_answered")

    # ------------------------------------------------------------------ award

    def _finish(self, cfp_id: str, why: str) -> None:
        """Award the round once; `why` it ends when the auction has not shut its window itself
        (the steady timer may fire a hair before the wall-clock deadline)."""
        with self._lock:
            round_ = self._rounds.pop(cfp_id, None)
            if round_ is not None:
                self._closed[cfp_id] = round_.auction.closed_by or why
                while len(self._closed) > ANSWERED_KEPT:
                    self._closed.pop(next(iter(self._closed)))
        if round_ is None:
            return  # already finished (every robot answered just before the deadline timer ran)
        round_.timer.cancel()
        self.destroy_timer(round_.timer)
        auction = round_.auction
        closed_by = auction.closed_by or why
        try:
            result = auction.close()
        except ValueError as exc:  # a cycle in the recipe graph
            self._answer_refusal(round_.request.request_id, f"recipe: /process: {exc}")
            return
        stamp = self.get_clock().now().to_msg()
        session = auction.cfp.session_id or ""
        now = time.time()
        for award in result.awards:
            self._award_pub.publish(wire.award_msg(award, stamp, session))
            self._event(events.award_event(award, source=self.coordinator_id, time_s=now, session=session or None))
        self._event(events.plan_event(auction.cfp, result.team_plan(), source=self.coordinator_id, time_s=now))
        for rejected in auction.rejected:
            self.get_logger().info(f"cfp {cfp_id}: ignored {rejected.reason} answer from {rejected.actor_id} "
                                   f"for {rejected.task_id}: {rejected.detail}")
        unassignable = [u.to_wire() for u in result.unassignable]
        message = (f"{len(result.winner_by_task)} of {len(auction.cfp.tasks)} tasks assigned"
                   + (f"; unassignable: {', '.join(u['task'] for u in unassignable)}" if unassignable else ""))
        self._publish_answer(round_.request.request_id, {
            "requestId": round_.request.request_id, "accepted": True, "cfpId": cfp_id,
            "closedBy": closed_by, "plan": result.team_plan(), "winners": result.winner_by_task,
            "unassignable": unassignable, "message": message})
        self.get_logger().info(f"request {round_.request.request_id}: cfp {cfp_id} closed by "
                               f"{closed_by}: {message}")
        if round_.request.execute:
            self._execute(round_, result.schedule)

    # ------------------------------------------------------------------ execution

    def _execute(self, round_: Round, schedule) -> None:
        request, auction = round_.request, round_.auction
        by_node = {node["id"]: node for node in dryrun.recipe_nodes(request.recipe)}
        nodes = {task_id: by_node[node_id] for task_id, node_id in round_.recipe.node_of.items()}
        current = [schedule]  # the plan in force (a re-plan replaces it)
        run: TeamRun

        def replanned(started: list[str], lost: str, now_s: float):
            bids = [b for b in auction.bids if b.actor_id not in run.lost]
            current[0] = replan(current[0], round_.recipe.tasks, bids, started=started, lost_actor=lost, now_s=now_s,
                                declines=auction.declines, roster=request.robots, solver=self.solver)
            return current[0]

        run = TeamRun(request_id=request.request_id, cfp_id=auction.cfp.cfp_id,
                      session=auction.cfp.session_id, dispatch=Dispatch(round_.recipe.tasks, schedule),
                      nodes=nodes, executors=dict(request.executors), action_client=self._action_client,
                      emit=self._event, source=self.coordinator_id, on_done=self._executed, log=self.get_logger(),
                      replan=replanned, on_replan=lambda r, tasks, lost: self._announce_replan(auction.cfp, tasks, lost),
                      later=self._later, action_seen=self._action_seen, action_wait_s=self.action_wait_s)
        self._runs[run.cfp_id] = run
        for actor, action in request.executors:
            self._watch_heartbeat(_heartbeat_topic(action))
        run.start()

    def _watch_heartbeat(self, topic: str) -> None:
        """Liveliness of the executor heartbeat on `topic`: its end loses that robot in every run."""
        if topic in self._heartbeats:
            return
        self._heartbeats[topic] = self.create_subscription(
            Heartbeat, topic, lambda msg: None, qos.heartbeat(self.robot_lease_s), callback_group=self._group,
            event_callbacks=SubscriptionEventCallbacks(
                liveliness=lambda info, t=topic: self._on_liveliness(t, info),
                incompatible_qos=lambda info, t=topic: self.get_logger().warning(
                    f"{t}: the executor's heartbeat offers a longer liveliness lease than robot_lease_s "
                    f"{self.robot_lease_s:g} s: it is not watched, a lost robot goes unnoticed")))

    def _on_liveliness(self, topic: str, info) -> None:
        if info.alive_count > 0 or info.not_alive_count_change <= 0:
            return  # alive, or a writer that went away cleanly (its goodbye) rather than lost
        for run in list(self._runs.values()):
            for actor, action in run.executors.items():
                if _heartbeat_topic(action) == topic and actor in run.actors:
                    run.lose(actor, f"its executor heartbeat on {topic} lost liveliness")

    def _announce_replan(self, cfp, tasks: list[str], lost: str) -> None:
        data = events.replan_event(cfp, tasks, lost, source=self.coordinator_id, time_s=time.time(),
                                   seq=next(self._replans))
        self._event(data)
        self._replan_pub.publish(TeamReplan(stamp=self.get_clock().now().to_msg(), cfp_id=cfp.cfp_id,
                                            session_id=cfp.session_id or "", from_id=self.coordinator_id,
                                            tasks=list(tasks), reason="actor_lost", data_json=json.dumps(data["data"])))

    def _action_client(self, name: str) -> ActionClient:
        if name not in self._actions:
            self._actions[name] = ActionClient(self, ExecuteNode, name, callback_group=self._group)
        return self._actions[name]

    def _action_seen(self, name: str) -> float | None:
        """Steady time since which the action's server has been ready without a break, or None."""
        if self._action_client(name).server_is_ready():
            return self._action_ready_at.setdefault(name, time.monotonic())
        self._action_ready_at.pop(name, None)
        return None

    def _later(self, delay_s: float, callback) -> None:
        """Run `callback` after `delay_s` on this node's callback group (one poll timer for all)."""
        self._due.append((time.monotonic() + delay_s, callback))
        if self._due_timer.is_canceled():
            self._due_timer.reset()

    def _on_due(self) -> None:
        now = time.monotonic()
        due = [cb for at, cb in self._due if at <= now]
        self._due = [(at, cb) for at, cb in self._due if at > now]
        if not self._due:
            self._due_timer.cancel()
        for callback in due:
            callback()

    def _executed(self, run: TeamRun) -> None:
        self._runs.pop(run.cfp_id, None)
        summary = run.summary()
        states = [t["state"] for t in summary["tasks"].values()]
        message = f"{states.count('completed')} of {len(states)} tasks completed" + "".join(
            f", {states.count(s)} {s}" for s in ("failed", "blocked", "unassigned") if states.count(s))
        self._publish_answer(run.request_id, {"requestId": run.request_id, "accepted": True, "cfpId": run.cfp_id,
                                              "executed": summary, "message": message})
        self.get_logger().info(f"request {run.request_id}: cfp {run.cfp_id} carried out, "
                               f"{summary['outcome']}: {message}")


def _heartbeat_topic(action: str) -> str:
    """The heartbeat of the executor serving `action` (<namespace>/<executor>/execute_node): its
    namespace's cookwala/heartbeat, as the executor publishes it."""
    namespace = action.rsplit("/", 2)[0]
    return f"{namespace}/{names.HEARTBEAT}"


def _is_action_name(name: str) -> bool:
    parts = name.split("/")
    return name.startswith("/") and all(p and (p[0].isalpha() or p[0] == "_") and p.replace("_", "a").isalnum()
                                        for p in parts[1:])


def _request_id_of(text: str) -> str | None:
    try:
        data = json_limits.loads(text)
    except ValueError:
        return None
    value = data.get("requestId") if isinstance(data, dict) else None
    return value if isinstance(value, str) and value else None


def main(args: list[str] | None = None) -> int:
    return run_node("cookwala_team_coordinator", CoordinatorNode, args, threads=1)


if __name__ == "__main__":
    sys.exit(main())
