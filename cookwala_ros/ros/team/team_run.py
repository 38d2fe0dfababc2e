"""A team plan carried out over ROS: ExecuteNode goals to the winners' executors (REASONING §5.4).

The coordinator hands a round whose request asked to `execute` to a TeamRun. `teaming.dispatch`
decides what may start (every predecessor completed, one task per robot, shared resources one at
a time); this sends each such task's recipe node as an ExecuteNode goal to its winner's executor
(the action the request's `executors` names for that robot), reports every task as
`cookwala.task.*` CloudEvents (and `cookwala.handoff.*` where a task takes over what another
robot made) and, once nothing is left to run, hands the outcome back. The
coordinator never commands a robot's hardware: it asks the robot's own executor, which runs its own
admission, safety gate and monitor.

A winner lost mid-run (its executor's heartbeat liveliness ended: the coordinator calls `lose`)
fails the task it was running and blocks what follows that task; its unstarted tasks go back to
the planner (`allocator.replan` over the round's bids: only unstarted tasks move, REASONING §5.3)
and on to the robots that bid for them (`cookwala.task.reassigned`), or fail when nobody can.

Nothing here blocks: goals and results come back through future callbacks, which the
coordinator's single-threaded executor runs one at a time.

A goal goes to an executor's action only once that action has been in the graph for
ACTION_SETTLE_S (the coordinator creates its clients when the request arrives, so this usually
passed during the bidding). Discovery is not symmetric in time: the client sees the server before
the server's DDS writers have matched the client's new readers, and a goal answer sent before that
is dropped (the goal would hang, neither started nor failed). A winner whose action does not
appear within `action_wait_s` fails its task, naming the action.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient

from cookwala_msgs.action import ExecuteNode
from cookwala_ros.teaming import events
from cookwala_ros.teaming.allocator import Schedule
from cookwala_ros.teaming.dispatch import Dispatch, TaskState

OK = GoalStatus.STATUS_SUCCEEDED
ACTION_SETTLE_S = 1.0  # an action seen this long also sees us: goal answers are not lost [s, steady]
ACTION_POLL_S = 0.1  # how often a task waiting for its executor's action looks again [s, steady]


class TeamRun:
    def __init__(self, *, request_id: str, cfp_id: str, session: str | None, dispatch: Dispatch,
                 nodes: dict[str, dict], executors: dict[str, str], action_client: Callable[[str], ActionClient],
                 emit: Callable[[dict], None], source: str, on_done: Callable[["TeamRun"], None], log,
                 replan: Callable[[list[str], str, float], Schedule] | None = None,
                 on_replan: Callable[["TeamRun", list[str], str], None] | None = None,
                 later: Callable[[float, Callable[[], None]], None] | None = None,
                 action_seen: Callable[[str], float | None] | None = None, action_wait_s: float = 10.0) -> None:
        self.request_id, self.cfp_id, self.session = request_id, cfp_id, session
        self.dispatch = dispatch
        self._replan = replan  # (started task ids, lost actor, seconds since the start) -> a new schedule
        self._on_replan = on_replan  # (run, tasks to allocate again, lost actor): TeamReplan on the wire
        self._t0 = time.monotonic()
        self.lost: set[str] = set()
        self._nodes = nodes  # task id -> the recipe node to send
        self.executors = executors  # actor id -> its executor's ExecuteNode action name
        self._action_client = action_client
        self._emit, self._source, self._on_done, self._log = emit, source, on_done, log
        self._reported = False
        self._pumping = self._again = False
        self._later = later  # (delay [s], callback): run it later on the coordinator's executor
        self._action_seen = action_seen  # action name -> steady time its server was first seen ready, or None
        self.action_wait_s = action_wait_s

    def start(self) -> None:
        """Announce the assignments, give up what nobody was awarded, send what may start."""
        for task_id, state in sorted(self.dispatch.summary().items()):
            if state["actor"] is not None:
                self._event("assigned", task_id, state["actor"])
            elif self.dispatch.state(task_id) == TaskState.UNASSIGNED:
                self.dispatch.give_up(task_id, "no robot was awarded it")
        self._pump()

    @property
    def actors(self) -> set[str]:
        """The robots with a task that has not ended (the ones worth watching)."""
        live = (TaskState.PENDING, TaskState.RUNNING)
        return {s["actor"] for s in self.dispatch.summary().values() if s["state"] in live and s["actor"]}

    def lose(self, actor: str, why: str) -> None:
        """`actor` is gone: fail what it ran, re-plan what it had not started (see the module doc)."""
        if actor in self.lost or self._reported:
            return
        self.lost.add(actor)
        moved, failed = self.dispatch.lose(actor, why)
        for task_id in failed:
            self._event("failed", task_id, actor, f"{actor} lost: {why}")
        self._log.warning(f"cfp {self.cfp_id}: {actor} lost ({why}); failed: {', '.join(failed) or 'nothing'}, "
                          f"to re-plan: {', '.join(moved) or 'nothing'}")
        if moved:
            if self._on_replan is not None:
                self._on_replan(self, moved, actor)
            placed: list[str] = []
            if self._replan is not None:
                try:
                    placed = self.dispatch.apply(self._replan(self.dispatch.started, actor, time.monotonic() - self._t0))
                except ValueError as exc:  # the planner found no way: what moved fails below
                    self._log.warning(f"cfp {self.cfp_id}: re-plan failed: {exc}")
            for task_id in placed:
                self._event("reassigned", task_id, self.dispatch.actor(task_id), previous_actor=actor)
            for task_id in moved:
                if self.dispatch.state(task_id) == TaskState.UNASSIGNED:
                    self.dispatch.give_up(task_id, f"{actor} lost and no other robot bid for it")
                    self._event("failed", task_id, actor, f"{actor} lost and no other robot bid for it")
        self._pump()

    def summary(self) -> dict:
        return {"outcome": self.dispatch.outcome, "tasks": self.dispatch.summary()}

    # ------------------------------------------------------------------ goals

    def _pump(self) -> None:
        """Send every task that may start now. Re-entrant calls (a goal refused at once, a future
        already done) only ask for another pass, so no task is taken from a stale list twice."""
        if self._pumping:
            self._again = True
            return
        self._pumping = True
        try:
            self._again = True
            while self._again:
                self._again = False
                for task_id, actor in self.dispatch.next_goals():
                    self._send(task_id, actor)
        finally:
            self._pumping = False
        self._maybe_done()

    def _send(self, task_id: str, actor: str) -> None:
        self.dispatch.start(task_id)
        action = self.executors.get(actor)
        if not action:
            self._finished(task_id, False, f"the request names no executor for {actor}")
            return
        self._deliver(task_id, action, time.monotonic())

    def _deliver(self, task_id: str, action: str, since: float) -> None:
        """Send the goal once the action has settled (see the module doc), or fail the task when it
        has not appeared within `action_wait_s`."""
        if self.dispatch.state(task_id) != TaskState.RUNNING:
            return  # its robot was lost meanwhile: the task is already failed or moved
        client = self._action_client(action)
        now = time.monotonic()
        seen = self._action_seen(action) if self._action_seen is not None else (now - ACTION_SETTLE_S
                                                                                if client.server_is_ready() else None)
        if seen is None or now - seen < ACTION_SETTLE_S:
            if self._later is not None and now - since < self.action_wait_s:
                self._later(ACTION_POLL_S, lambda: self._deliver(task_id, action, since))
                return
            if seen is None:
                self._finished(task_id, False, f"{self.dispatch.actor(task_id)}'s executor action {action} is not "
                                               f"available (waited {now - since:.1f} s)")
                return
        self._handoffs("proposed", task_id)
        goal = ExecuteNode.Goal(node_json=json.dumps(self._nodes[task_id]))
        client.send_goal_async(goal).add_done_callback(lambda f: self._on_goal(task_id, action, f))

    def _on_goal(self, task_id: str, action: str, future) -> None:
        if self.dispatch.state(task_id) != TaskState.RUNNING:
            return  # its robot was lost meanwhile: the task is already failed
        try:
            handle = future.result()
        except Exception as exc:  # noqa: BLE001 - the goal never reached the executor
            self._handoffs("refused", task_id, f"{action}: {exc}")
            self._finished(task_id, False, f"{action}: {exc}")
            return
        if not handle.accepted:
            self._handoffs("refused", task_id, f"{action} rejected the goal")
            self._finished(task_id, False, f"{action} rejected the goal")
            return
        self._handoffs("completed", task_id)
        self._event("started", task_id, self.dispatch.actor(task_id))
        handle.get_result_async().add_done_callback(lambda f: self._on_result(task_id, action, f))

    def _on_result(self, task_id: str, action: str, future) -> None:
        if self.dispatch.state(task_id) != TaskState.RUNNING:
            return
        try:
            wrapped = future.result()
        except Exception as exc:  # noqa: BLE001
            self._finished(task_id, False, f"{action}: {exc}")
            return
        result = wrapped.result
        deviation = _deviation_detail(result.deviation_json)
        if wrapped.status == OK:
            detail = f"verified by {result.verified_by or 'nothing'}" + (f"; {deviation}" if deviation else "")
            self._finished(task_id, True, detail)
        else:
            self._finished(task_id, False, deviation or f"{action} ended the goal with status {wrapped.status}")

    def _finished(self, task_id: str, ok: bool, detail: str) -> None:
        actor = self.dispatch.actor(task_id)
        blocked = self.dispatch.finish(task_id, ok, detail)
        self._event("completed" if ok else "failed", task_id, actor, detail)
        if blocked:
            self._log.warning(f"cfp {self.cfp_id}: {task_id} failed ({detail}); not run: {', '.join(blocked)}")
        self._pump()

    def _maybe_done(self) -> None:
        if self.dispatch.done and not self._reported:
            self._reported = True
            self._on_done(self)

    def _event(self, kind: str, task_id: str, actor: str | None, detail: str | None = None,
               previous_actor: str | None = None) -> None:
        self._emit(events.task_event(kind, task_id, actor, cfp_id=self.cfp_id, source=self._source,
                                     time_s=time.time(), session=self.session, detail=detail or None,
                                     previous_actor=previous_actor))


    def _handoffs(self, state: str, task_id: str, detail: str | None = None) -> None:
        to_actor = self.dispatch.actor(task_id)
        for item, from_actor in self.dispatch.handoffs_into(task_id):
            self._emit(events.handoff_event(state, item, from_actor, to_actor, for_task=task_id,
                                            item_op=self.dispatch.op(item), cfp_id=self.cfp_id, source=self._source,
                                            time_s=time.time(), session=self.session, detail=detail))


def _deviation_detail(text: str) -> str:
    try:
        deviation = json.loads(text) if text else None
    except ValueError:
        return text
    if isinstance(deviation, dict):
        return str(deviation.get("detail") or deviation.get("kind") or "")
    return ""
