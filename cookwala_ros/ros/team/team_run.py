"""A team plan carried out over ROS: ExecuteNode goals to the winners' executors (REASONING §5.4).

The coordinator hands a round whose request asked to `execute` to a TeamRun. `teaming.dispatch`
decides what may start (every predecessor completed, one task per robot, shared resources one at
a time); this sends each such task's recipe node as an ExecuteNode goal to its winner's executor
(the action the request's `executors` names for that robot), reports every task as
`cookwala.task.*` CloudEvents and, once nothing is left to run, hands the outcome back. The
coordinator never commands a robot's hardware: it asks the robot's own executor, which runs its own
admission, safety gate and monitor.

Nothing here blocks: goals and results come back through future callbacks, which the
coordinator's single-threaded executor runs one at a time.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient

from cookwala_msgs.action import ExecuteNode
from cookwala_ros.teaming import events
from cookwala_ros.teaming.dispatch import Dispatch

OK = GoalStatus.STATUS_SUCCEEDED


class TeamRun:
    def __init__(self, *, request_id: str, cfp_id: str, session: str | None, dispatch: Dispatch,
                 nodes: dict[str, dict], executors: dict[str, str], action_client: Callable[[str], ActionClient],
                 emit: Callable[[dict], None], source: str, on_done: Callable[["TeamRun"], None], log) -> None:
        self.request_id, self.cfp_id, self.session = request_id, cfp_id, session
        self.dispatch = dispatch
        self._nodes = nodes  # task id -> the recipe node to send
        self._executors = executors  # actor id -> its executor's ExecuteNode action name
        self._action_client = action_client
        self._emit, self._source, self._on_done, self._log = emit, source, on_done, log
        self._reported = False

    def start(self) -> None:
        """Announce the assignments, give up what nobody was awarded, send what may start."""
        for task_id, state in sorted(self.dispatch.summary().items()):
            if state["actor"] is not None:
                self._event("assigned", task_id, state["actor"])
            elif self.dispatch.state(task_id) == "unassigned":
                self.dispatch.give_up(task_id, "no robot was awarded it")
        self._pump()

    def summary(self) -> dict:
        return {"outcome": self.dispatch.outcome, "tasks": self.dispatch.summary()}

    # ------------------------------------------------------------------ goals

    def _pump(self) -> None:
        for task_id, actor in self.dispatch.next_goals():
            self.dispatch.start(task_id)
            action = self._executors.get(actor)
            if not action:
                self._finished(task_id, False, f"the request names no executor for {actor}")
                continue
            client = self._action_client(action)
            if not client.server_is_ready():
                self._finished(task_id, False, f"{actor}'s executor action {action} is not available")
                continue
            goal = ExecuteNode.Goal(node_json=json.dumps(self._nodes[task_id]))
            client.send_goal_async(goal).add_done_callback(lambda f, t=task_id, a=action: self._on_goal(t, a, f))
        self._maybe_done()

    def _on_goal(self, task_id: str, action: str, future) -> None:
        try:
            handle = future.result()
        except Exception as exc:  # noqa: BLE001 - the goal never reached the executor
            self._finished(task_id, False, f"{action}: {exc}")
            return
        if not handle.accepted:
            self._finished(task_id, False, f"{action} rejected the goal")
            return
        self._event("started", task_id, self.dispatch.actor(task_id))
        handle.get_result_async().add_done_callback(lambda f: self._on_result(task_id, action, f))

    def _on_result(self, task_id: str, action: str, future) -> None:
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

    def _event(self, kind: str, task_id: str, actor: str | None, detail: str | None = None) -> None:
        self._emit(events.task_event(kind, task_id, actor, cfp_id=self.cfp_id, source=self._source,
                                     time_s=time.time(), session=self.session, detail=detail or None))


def _deviation_detail(text: str) -> str:
    try:
        deviation = json.loads(text) if text else None
    except ValueError:
        return text
    if isinstance(deviation, dict):
        return str(deviation.get("detail") or deviation.get("kind") or "")
    return ""
