"""The contract net live: three team nodes (each its own process, namespace and device file) and a
coordinator answer plan requests over /cookwala/team/*.

Every wait is for an event (an answer on /cookwala/team/plan) with a generous timeout; nothing
here asserts how fast it came.
"""

from __future__ import annotations

import copy
import itertools
import json
import threading
import time

import pytest

pytest.importorskip("rclpy")
yaml = pytest.importorskip("yaml")

from rclpy.action import ActionServer  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from cookwala_msgs.action import ExecuteNode  # noqa: E402

from cookwala_msgs.msg import Event, TeamAward, TeamCfp  # noqa: E402
from cookwala_ros.core import schemas  # noqa: E402
from cookwala_ros.ros import names, qos  # noqa: E402
from cookwala_ros.ros.convert import event_from_msg  # noqa: E402
from cookwala_ros.teaming import events  # noqa: E402

from ros_helpers import RosHarness, device_file_as, start_ros_module, stop_processes  # noqa: E402

TIMEOUT_S = 30.0
ACTION_WAIT_S = 3.0  # the coordinator's wait for a winner's ExecuteNode action to appear
ROBOTS = {  # namespace -> (actor id, ops)
    "robot_cut": ("cwros:cutter", ["cw.op.cut"]),
    "robot_saute": ("cwros:sauter", ["cw.op.saute"]),
    "robot_simmer": ("cwros:simmerer", ["cw.op.simmer"]),
}
ACTORS = [actor for actor, _ in ROBOTS.values()]
# cut -> saute -> simmer, chained by inputs/outputs
RECIPE = {
    "cookwala": "0.2.0", "id": "soup",
    "equipment": [{"ref": "pot", "class": "cw.eq.vessel.pot.sauce"}, {"ref": "hob", "class": "cw.eq.heat.hob"}],
    "process": {"nodes": [
        {"id": "n1", "op": "cw.op.cut", "inputs": ["onion"], "output": "diced", "until": {"minTime": "PT2M"}},
        {"id": "n2", "op": "cw.op.saute", "inputs": ["diced"], "output": "base", "equipment": ["pot", "hob"],
         "until": {"nominalTime": "PT6M"}},
        {"id": "n3", "op": "cw.op.simmer", "inputs": ["base", "water"], "output": "soup",
         "equipment": ["pot", "hob"], "until": {"maxTime": "PT20M"}},
    ]},
}


class Requester:
    """Sends plan requests and collects the coordinator's answers and awards."""

    def __init__(self, ros: RosHarness) -> None:
        self.ros = ros
        self.node = ros.node("team_test_requester")
        self._lock = threading.Lock()
        self.answers: dict[str, dict] = {}
        self.executed: dict[str, dict] = {}  # requestId -> the answer saying what became of each task
        self.awards: list[TeamAward] = []
        self.cfps: list[TeamCfp] = []
        self.events: list[dict] = []  # the coordinator's cookwala.team.* CloudEvents
        self._ids = itertools.count(1)
        self.request_pub = self.node.create_publisher(String, names.TEAM_PLAN_REQUEST, qos.team())
        self.cfp_pub = self.node.create_publisher(TeamCfp, names.TEAM_CFP, qos.team())
        self.node.create_subscription(String, names.TEAM_PLAN, self._on_plan, qos.team())
        self.node.create_subscription(TeamAward, names.TEAM_AWARD, self._append(self.awards), qos.team())
        self.node.create_subscription(TeamCfp, names.TEAM_CFP, self._append(self.cfps), qos.team())
        self.event_subscriptions = [self.node.create_subscription(
            Event, f"/{namespace}/{names.EVENTS}", lambda m: self._append(self.events)(event_from_msg(m)), qos.events())
            for namespace in ROBOTS]  # each robot's answers, on its own events topic
        self.event_subscriptions.append(self.node.create_subscription(  # the coordinator's
            Event, names.EVENTS, lambda m: self._append(self.events)(event_from_msg(m)), qos.events()))

    def _append(self, into: list):
        def callback(msg) -> None:
            with self._lock:
                into.append(msg)
        return callback

    def _on_plan(self, msg: String) -> None:
        answer = json.loads(msg.data)
        with self._lock:
            if "executed" in answer:
                self.executed[answer.get("requestId")] = answer
            else:
                self.answers.setdefault(answer.get("requestId"), answer)

    def send(self, recipe: dict, robots=ACTORS, **extra) -> str:
        request_id = f"req-{next(self._ids)}"
        body = {"requestId": request_id, "recipe": recipe, "robots": list(robots), **extra}
        self.request_pub.publish(String(data=json.dumps(body)))
        return request_id

    def plan(self, recipe: dict, robots=ACTORS, **extra) -> dict:
        """Request a plan and wait for its answer; a request lost before discovery finished is
        re-sent under the same requestId (the coordinator answers a repeat, never re-runs it)."""
        assert self.ros.wait_for(lambda: self.request_pub.get_subscription_count() > 0, timeout=TIMEOUT_S), \
            "no coordinator subscribes to the plan requests"
        request_id = f"req-{next(self._ids)}"
        body = json.dumps({"requestId": request_id, "recipe": recipe, "robots": list(robots), **extra})
        for _ in range(int(TIMEOUT_S / 5)):
            self.request_pub.publish(String(data=body))
            if self.ros.wait_for(lambda: request_id in self.answers, timeout=5.0):
                return self.answers[request_id]
        raise AssertionError(f"no answer to {request_id}")


@pytest.fixture(scope="module")
def kitchen(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("team")
    procs = []
    try:
        for namespace, (actor, ops) in ROBOTS.items():
            procs.append(start_ros_module("cookwala_ros.ros.team.team_node", {
                "device_file": device_file_as(tmp, actor, ops), "human_present": True}, f"/{namespace}"))
        procs.append(start_ros_module("cookwala_ros.ros.team.coordinator_node",
                                      {"window_s": 3.0, "action_wait_s": ACTION_WAIT_S}))
        with RosHarness() as ros:
            requester = Requester(ros)
            # warm-up: until every team node and the coordinator have discovered each other, a
            # round closes at its deadline instead of when all three answered
            assert ros.wait_for(lambda: requester.cfp_pub.get_subscription_count() >= 3, timeout=TIMEOUT_S)
            # events are volatile: every robot's events topic matched before a round, or its answers are lost
            assert ros.wait_for(lambda: all(s.get_publisher_count() >= 1 for s in requester.event_subscriptions),
                                timeout=TIMEOUT_S), "a team node's events topic never matched"
            for _ in range(10):
                if requester.plan(RECIPE, windowS=3.0).get("closedBy") == "all_answered":
                    break
            else:
                raise AssertionError("the team nodes never all answered a call")
            yield requester
    finally:
        stop_processes(procs)
        for proc in procs:
            assert proc.returncode in (0, -2), f"a node exited with {proc.returncode}"


def assigned(answer: dict) -> dict[str, str]:
    return {item["ref"]: a["actorId"] for a in answer["plan"]["assignments"] for item in a["tasks"]}


def test_each_node_goes_to_the_robot_that_can_do_it(kitchen):
    answer = kitchen.plan(RECIPE)
    assert answer["accepted"] is True, answer
    assert answer["closedBy"] == "all_answered"  # every robot answered every task: no waiting for the deadline
    assert assigned(answer) == {"soup#n1": "cwros:cutter", "soup#n2": "cwros:sauter", "soup#n3": "cwros:simmerer"}
    assert answer["winners"] == assigned(answer)
    assert answer["unassignable"] == []
    assert answer["plan"]["criticalPath"] == ["soup#n1", "soup#n2", "soup#n3"]
    # one award per winner, for this call
    assert kitchen.ros.wait_for(lambda: len([a for a in kitchen.awards if a.cfp_id == answer["cfpId"]]) == 3,
                                timeout=TIMEOUT_S)
    awards = {a.actor_id: list(a.tasks) for a in kitchen.awards if a.cfp_id == answer["cfpId"]}
    assert awards == {"cwros:cutter": ["soup#n1"], "cwros:sauter": ["soup#n2"], "cwros:simmerer": ["soup#n3"]}
    # the same round as CloudEvents on the events topic: the call, an award per winner, the plan

    def of_this_call() -> list[dict]:
        return [e for e in list(kitchen.events) if e["subject"] == answer["cfpId"]]

    assert kitchen.ros.wait_for(lambda: len(of_this_call()) == 5 + 9, timeout=TIMEOUT_S), \
        sorted((e["type"], e["source"], e["id"]) for e in of_this_call())
    made = of_this_call()
    kinds = sorted(e["type"] for e in made)
    assert kinds == ["cookwala.team.award"] * 3 + ["cookwala.team.bid"] * 3 + ["cookwala.team.cfp"] + \
        ["cookwala.team.decline"] * 6 + ["cookwala.team.plan"]  # each robot answers every task once
    bids = {e["data"]["bid"]["actorId"]: e["data"]["bid"]["canDo"] for e in made if e["type"] == "cookwala.team.bid"}
    assert bids == {actor: [task] for task, actor in answer["winners"].items()}
    assert {e["data"]["award"]["actorId"]: e["data"]["award"]["tasks"] for e in made
            if e["type"] == "cookwala.team.award"} == awards
    assert next(e for e in made if e["type"] == "cookwala.team.plan")["data"][events.PLAN_KEY] == answer["plan"]
    for event in made:
        assert schemas.validate(event, "CloudEvent") == [], event


def test_a_goal_waits_for_its_executors_action_and_fails_when_it_never_comes(kitchen):
    """The executors' actions are not in the graph when the plan is carried out: the cutter's and
    the sauter's appear a while later (a robot still starting) and get their goals in order; the
    simmerer's never does, so its task fails once the coordinator's action_wait_s has passed, naming
    the action. Played by this process's action servers: the subject is the coordinator."""
    executors = {actor: f"/late_{namespace}/executor/execute_node" for namespace, (actor, _) in ROBOTS.items()}
    answer = kitchen.plan(RECIPE, execute=True, executors=executors)
    assert answer["accepted"] is True and answer["unassignable"] == [], answer
    time.sleep(1.5)  # the harness spins on its own thread meanwhile
    goals: list[str] = []

    def execute(goal_handle):
        goals.append(json.loads(goal_handle.request.node_json)["id"])
        goal_handle.succeed()
        return ExecuteNode.Result(envelope_ok=True, verified_by="time")

    # the servers stay until the harness closes: destroying one while the harness spins races its
    # own callbacks (the result service), which then raise on the destroyed handle
    for actor in ("cwros:cutter", "cwros:sauter"):
        ActionServer(kitchen.node, ExecuteNode, executors[actor], execute_callback=execute)
    assert kitchen.ros.wait_for(lambda: answer["requestId"] in kitchen.executed, timeout=TIMEOUT_S + ACTION_WAIT_S)
    tasks = kitchen.executed[answer["requestId"]]["executed"]["tasks"]
    assert goals == ["n1", "n2"]
    assert [tasks[t]["state"] for t in ("soup#n1", "soup#n2")] == ["completed", "completed"], tasks
    assert tasks["soup#n3"]["state"] == "failed", tasks
    assert executors["cwros:simmerer"] in tasks["soup#n3"]["detail"], tasks
    assert "not available" in tasks["soup#n3"]["detail"], tasks
    assert kitchen.ros.errors == []


def test_a_task_nobody_can_do_comes_back_unassignable_with_every_robots_reason(kitchen):
    recipe = copy.deepcopy(RECIPE)
    recipe["process"]["nodes"].append({"id": "n4", "op": "cw.op.serve", "inputs": ["soup"],
                                       "until": {"minTime": "PT1M"}})
    answer = kitchen.plan(recipe)
    assert answer["accepted"] is True and answer["closedBy"] == "all_answered"
    assert assigned(answer) == {"soup#n1": "cwros:cutter", "soup#n2": "cwros:sauter", "soup#n3": "cwros:simmerer"}
    assert [u["task"] for u in answer["unassignable"]] == ["soup#n4"]
    assert answer["unassignable"][0]["reasons"] == {actor: "missing_op" for actor in sorted(ACTORS)}
    assert answer["plan"]["solver"]["status"] == "infeasible"


def test_requests_are_independent_and_a_silent_robot_ends_the_round_at_its_deadline(kitchen):
    """Two requests at once, one naming a robot that never answers: each gets its own call; the
    first closes when all answered, the second at its deadline with what it got."""
    recipe = copy.deepcopy(RECIPE)
    recipe["id"] = "soup2"
    first = kitchen.send(RECIPE)
    second = kitchen.send(recipe, robots=[*ACTORS, "cwros:ghost"], windowS=2.0)
    assert kitchen.ros.wait_for(lambda: first in kitchen.answers and second in kitchen.answers, timeout=TIMEOUT_S)
    one, two = kitchen.answers[first], kitchen.answers[second]
    assert one["cfpId"] != two["cfpId"]
    assert one["closedBy"] == "all_answered" and two["closedBy"] == "deadline"
    assert set(assigned(one).values()) == set(assigned(two).values()) == set(ACTORS)
    assert two["unassignable"] == []


def test_malformed_input_is_ignored_or_refused_and_nothing_stops(kitchen):
    from builtin_interfaces.msg import Time

    for data in ("{not json", "[]", json.dumps({"cfpId": "x", "from": "me", "tasks": ["a"]})):
        kitchen.cfp_pub.publish(TeamCfp(stamp=Time(), cfp_id="x", from_id="me", data_json=data))
    refused = kitchen.plan({"process": {"nodes": [{"id": "n1"}]}})
    assert refused["accepted"] is False and "/process/nodes/0/op" in refused["message"]
    kitchen.request_pub.publish(String(data="{not json"))  # no requestId: logged, answered without one
    answer = kitchen.plan(RECIPE)  # the team nodes and the coordinator still answer
    assert answer["accepted"] is True and answer["closedBy"] == "all_answered"


def test_a_cfp_past_its_deadline_is_not_answered(kitchen):
    """A call whose deadline has passed gets no bids or declines; the same call with a deadline
    ahead, sent after it on the same topic, gets every robot's answers (so the first was read)."""
    import time

    from builtin_interfaces.msg import Time

    from cookwala_ros.core.timestamps import rfc3339
    from cookwala_ros.ros.team import wire
    from cookwala_ros.teaming.types import CallForProposals, Task

    task = Task("late#n1", "cw.op.cut", 60.0)
    late = CallForProposals("cfp:late:past", "test", (task,), rfc3339(time.time() - 60))
    timely = CallForProposals("cfp:late:ahead", "test", (task,), rfc3339(time.time() + 60))
    for call in (late, timely):
        kitchen.cfp_pub.publish(wire.cfp_msg(call, Time()))

    def answered(cfp_id: str) -> list[dict]:
        return [e for e in list(kitchen.events)
                if e["subject"] == cfp_id and e["type"] in ("cookwala.team.bid", "cookwala.team.decline")]

    assert kitchen.ros.wait_for(lambda: len(answered(timely.cfp_id)) == 3, timeout=TIMEOUT_S), answered(timely.cfp_id)
    assert answered(late.cfp_id) == []


def test_an_answer_after_the_round_closed_is_logged_and_ignored(kitchen):
    """A bid that arrives after its round was awarded changes nothing, and the coordinator says
    so (on /rosout) rather than dropping it silently like another coordinator's call."""
    from builtin_interfaces.msg import Time
    from rcl_interfaces.msg import Log

    from cookwala_msgs.msg import TeamBid
    from cookwala_ros.ros.team import wire
    from cookwala_ros.teaming.types import Bid

    logged: list[str] = []
    kitchen.node.create_subscription(Log, "/rosout", lambda m: logged.append(m.msg), 100)
    bid_pub = kitchen.node.create_publisher(TeamBid, names.TEAM_BID, qos.team())
    answer = kitchen.plan(RECIPE)
    assert answer["closedBy"] == "all_answered"
    assert kitchen.ros.wait_for(lambda: bid_pub.get_subscription_count() >= 1, timeout=TIMEOUT_S)
    late = Bid(answer["cfpId"], "cwros:latecomer", next(iter(assigned(answer))), True, 0.0, 1.0)
    bid_pub.publish(wire.bid_msg(late, Time()))
    assert kitchen.ros.wait_for(lambda: any("late answer from 'cwros:latecomer'" in m for m in logged),
                                timeout=TIMEOUT_S), logged[-5:]
    assert kitchen.plan(RECIPE)["closedBy"] == "all_answered"  # nothing stopped


def test_a_robot_that_is_cooking_or_held_stopped_declines_busy_naming_why(kitchen):
    """A team node reads its own robot's executor status and safety-monitor status (latched, in its
    namespace): while an execution runs there, or the monitor holds the robot stopped, it declines
    every task `busy`, as its executor would refuse the goal; once that ends it bids again. The
    statuses and the calls travel on different topics, so each state is waited for by planning
    until the answer shows it (every plan request is answered; none is retried)."""
    from cookwala_msgs.msg import ExecutionStatus, SafetyStatus
    from cookwala_ros.teaming.types import DETAIL_KEY, REASON_KEY

    everyone = {"soup#n1": "cwros:cutter", "soup#n2": "cwros:sauter", "soup#n3": "cwros:simmerer"}
    answers: list[dict] = []

    def plan_shows(winners: dict[str, str]) -> bool:
        answers.append(kitchen.plan(RECIPE))
        return answers[-1]["closedBy"] == "all_answered" and assigned(answers[-1]) == winners

    status_pub = kitchen.node.create_publisher(ExecutionStatus, f"/robot_simmer/{names.EXECUTION_STATUS}", qos.latched())
    safety_pub = kitchen.node.create_publisher(SafetyStatus, f"/robot_saute/{names.SAFETY_STATUS}", qos.latched())
    try:
        status_pub.publish(ExecutionStatus(id="exec-7", state="running"))
        safety_pub.publish(SafetyStatus(state=SafetyStatus.STATE_STOPPED, state_label="stopped", last_trigger="estop"))
        assert kitchen.ros.wait_for(lambda: plan_shows({"soup#n1": "cwros:cutter"}), timeout=TIMEOUT_S), answers[-1]
        answer = answers[-1]
        reasons = {u["task"]: u["reasons"] for u in answer["unassignable"]}
        assert reasons["soup#n2"]["cwros:sauter"] == "busy" and reasons["soup#n3"]["cwros:simmerer"] == "busy", reasons

        def busy_declines() -> dict[str, set[str]]:
            found: dict[str, set[str]] = {}
            for e in list(kitchen.events):
                if e["subject"] == answer["cfpId"] and e["type"] == "cookwala.team.decline" \
                        and e["data"][REASON_KEY] == "busy":
                    found.setdefault(e["data"]["from"], set()).add(e["data"].get(DETAIL_KEY, ""))
            return found

        assert kitchen.ros.wait_for(lambda: {"cwros:sauter", "cwros:simmerer"} <= set(busy_declines()),
                                    timeout=TIMEOUT_S), busy_declines()
        assert busy_declines() == {"cwros:simmerer": {"running execution exec-7 (running)"},
                                   "cwros:sauter": {"the safety monitor is stopped (estop)"}}
    finally:
        status_pub.publish(ExecutionStatus(id="exec-7", state="completed"))
        safety_pub.publish(SafetyStatus(state=SafetyStatus.STATE_ARMED, state_label="armed"))
    assert kitchen.ros.wait_for(lambda: plan_shows(everyone), timeout=TIMEOUT_S), answers[-1]


def test_the_coordinator_plans_what_the_offline_planner_plans(kitchen, tmp_path, capsys):
    """Hub or no hub, the same plan (REASONING §5.4: without a hub the requesting robot runs the
    same solver): the live round over topics and `cookwala-ros team plan` on the same robots'
    capabilities give the same TeamPlan."""
    from cookwala_ros import cli
    from cookwala_ros.capabilities import ServedInterfaces, capabilities_document
    from cookwala_ros.device import load_device_config

    argv = ["team", "plan", str(tmp_path / "recipe.json"), "--human-present", "--json"]
    (tmp_path / "recipe.json").write_text(json.dumps(RECIPE), encoding="utf-8")
    for namespace, (actor, ops) in ROBOTS.items():
        document = capabilities_document(load_device_config(device_file_as(tmp_path, actor, ops)),
                                         ServedInterfaces(namespace=f"/{namespace}"))
        (tmp_path / f"{namespace}.json").write_text(json.dumps(document), encoding="utf-8")
        argv += ["--robot", str(tmp_path / f"{namespace}.json")]
    assert cli.main(argv) == 0
    offline = json.loads(capsys.readouterr().out)
    live = kitchen.plan(RECIPE)
    assert live["closedBy"] == "all_answered", live
    assert live["plan"] == offline
    assert offline["leases"] and offline["handoffs"]  # the comparison covers resources and hand-offs
