"""The executor watches what it depends on (processes, real rclpy, sim time): its safety monitor's
status, the heater driver and the arm driver. Heat is read from the wire by this process."""

from __future__ import annotations

import json
import signal
import time

import pytest

from executor_procs import Client, goal_for, start_executor, start_kitchen, start_node, stop_processes
from executor_recipes import boil_recipe, request_for
from cookwala_msgs.msg import HeaterCommand, SafetyStatus
from cookwala_msgs.srv import GetExecution, GetSafetyLimits
from cookwala_ros.core.limits import default_pack
from cookwala_ros.ros import names, qos
from ros_helpers import RosHarness

FINAL = ("completed", "stopped", "failed", "refused")
MONITOR = "/fake_monitor"


@pytest.fixture()
def library(tmp_path):
    folder = tmp_path / "data" / "recipes"
    folder.mkdir(parents=True)
    recipe = boil_recipe(minutes=20)
    (folder / "boil.cookwala.json").write_text(json.dumps(recipe))
    return tmp_path / "data", recipe


class Heat:
    """Executor heater commands on the wire with steady receipt times."""

    def __init__(self, node):
        self.commands: list[tuple[float, HeaterCommand]] = []
        node.create_subscription(HeaterCommand, "/heater/command", self._on, qos.command(1000))

    def _on(self, msg: HeaterCommand) -> None:
        if msg.source == "executor":
            self.commands.append((time.monotonic(), msg))

    def on(self) -> bool:
        return bool(self.commands) and self.commands[-1][1].mode != HeaterCommand.MODE_OFF

    def final_cut(self) -> float:
        """Receipt time of the heat-off after the executor's last heat-on command: from then on
        nothing but heat-off (one writer: received in publication order)."""
        last_on = max((i for i, (_, m) in enumerate(self.commands) if m.mode != HeaterCommand.MODE_OFF), default=-1)
        assert last_on + 1 < len(self.commands), "the executor's last command turns heat on"
        return self.commands[last_on + 1][0]


def start(client: Client, ros, request: dict) -> tuple[str, dict]:
    """Send the goal; (execution id, its first status)."""
    assert client.send(goal_for(request)).accepted
    assert ros.wait_for(lambda: any(s.request == request["id"] for s in client.statuses), timeout=20)
    execution = next(s.id for s in client.statuses if s.request == request["id"])
    answer = client.call(client.get_execution, GetExecution.Request(execution_id=execution), timeout=30)
    return execution, json.loads(answer.status.status_json)


def wait_state(ros, client: Client, execution: str, states, timeout: float = 30.0) -> dict:
    found = {}

    def reached():
        answer = client.call(client.get_execution, GetExecution.Request(execution_id=execution), timeout=30)
        found["status"] = json.loads(answer.status.status_json)
        return found["status"]["state"] in states

    assert ros.wait_for(reached, timeout=timeout, interval=0.1), found.get("status")
    return found["status"]


def incidents(client: Client) -> list[dict]:
    with client._lock:
        events = list(client.events)
    return [e["data"] for e in events if e["type"].startswith("x-cookwala.incident.")]


@pytest.mark.timeout(180)
def test_a_monitor_is_required_armed_before_and_while_cooking(library):
    data, recipe = library
    procs = start_kitchen(real_time_factor=20.0, clock="lockstep")
    procs.append(start_executor(data, safety_monitor_node=MONITOR, clock_mode="lockstep"))
    try:
        with RosHarness() as ros:
            client = Client(ros)
            heat = Heat(client.node)
            executor = procs[-1]
            assert client.wait_ready(), ("executor did not come up: its process "
                                         + ("still runs (a start-up that hangs)" if executor.poll() is None
                                            else f"exited with {executor.returncode}"))
            # never seen: refused busy, naming the monitor
            execution, status = start(client, ros, request_for(recipe))
            status = wait_state(ros, client, execution, FINAL)
            assert status["state"] == "refused" and status["refusal"]["reason"] == "busy", status
            assert MONITOR in status["refusal"]["detail"]

            # the monitor (played here: its status every 0.5 s) is armed: cooking starts
            monitor = ros.node("fake_monitor")
            pub = monitor.create_publisher(SafetyStatus, "/cookwala/safety/status", qos.latched())
            alive = {"on": True, "last": 0.0}

            def report():
                if alive["on"]:
                    pub.publish(SafetyStatus(state=SafetyStatus.STATE_ARMED, state_label="armed"))
                    alive["last"] = time.monotonic()

            monitor.create_timer(0.2, report)  # status_period_s of the kitchen scene

            def limits(request, response):  # the executor asks the monitor's limits at every start
                response.pack_json = json.dumps(default_pack())
                return response

            monitor.create_service(GetSafetyLimits, f"{MONITOR}/{names.MONITOR_GET_LIMITS}", limits)
            # ... and its gate: the executor's commands reach the hob through the monitor while it lives
            hob = monitor.create_publisher(HeaterCommand, "/heater/command", qos.command())
            monitor.create_subscription(HeaterCommand, f"{MONITOR}/{names.GATE_HEATER_COMMAND}",
                                        lambda m: alive["on"] and hob.publish(m), qos.command())
            time.sleep(1.5)
            # the executor's own word that it would cook now (it heard the monitor and its limits service)
            assert ros.wait_for(lambda: client.readiness is not None and client.readiness[0], timeout=30), \
                client.readiness
            execution, status = start(client, ros, request_for(recipe))
            assert status["state"] != "refused", status
            assert ros.wait_for(heat.on, timeout=60), "never heated"

            # the monitor goes silent (dies): heat cut and the arm halted by the executor itself
            alive["on"] = False
            final = wait_state(ros, client, execution, FINAL)
            time.sleep(0.5)
            cut_after = heat.final_cut() - alive["last"]
            print(f"heat cut {cut_after * 1000:.0f} ms after the monitor's last status")
            assert 0 < cut_after < 1.0  # safety_status_timeout_s 0.6 + the 0.05 s check, inside 1 s
            assert final["state"] == "stopped", final
            assert "safety monitor lost" in final["x-cookwala-ros-reason"]["detail"]
            lost = [i for i in incidents(client) if i.get("execution") == execution]
            assert lost and lost[0]["incident"] == "cw.incident.equipment_failure"
            assert MONITOR in lost[0]["detail"] and "silent" in lost[0]["detail"]

            # refused while it is gone
            again, status = start(client, ros, request_for(recipe))
            status = wait_state(ros, client, again, FINAL)
            assert status["refusal"]["reason"] == "busy" and f"{MONITOR} is silent" in status["refusal"]["detail"]

            # armed again: a new execution is accepted (the refusal is lifted; the stop latch is released
            # by its admission, see test_executor_latch.py)
            alive["on"] = True
            time.sleep(1.2)
            assert ros.wait_for(lambda: client.readiness is not None and client.readiness[0], timeout=30), \
                client.readiness
            third, status = start(client, ros, request_for(recipe))
            assert status["state"] != "refused", status
    finally:
        stop_processes(procs)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("driver, names", [("heater_sim", "heater driver"), ("arm_sim", "arm driver")])
def test_a_dead_driver_stops_the_execution_with_an_incident_naming_it(library, driver, names):
    data, recipe = library
    sim = {"use_sim_time": True}
    clock = start_node("cookwala_ros.ros.sim_clock_node", {"real_time_factor": 10.0})
    drivers = {"arm_sim": start_node("cookwala_ros.ros.arm_sim_node", {**sim, "publish_rate_hz": 50.0}),
               "heater_sim": start_node("cookwala_ros.ros.heater_sim_node", sim)}
    executor = start_executor(data)
    try:
        with RosHarness() as ros:
            client = Client(ros)
            heat = Heat(client.node)
            assert client.wait_ready(to_cook=True), "executor did not come up"
            execution, _ = start(client, ros, request_for(recipe))
            assert ros.wait_for(heat.on, timeout=60), "never heated"
            time.sleep(1.0)
            drivers[driver].send_signal(signal.SIGKILL)
            killed = time.monotonic()
            assert ros.wait_for(lambda: any(i.get("execution") == execution for i in incidents(client)), timeout=10)
            seen = time.monotonic() - killed
            incident = next(i for i in incidents(client) if i.get("execution") == execution)
            print(f"{driver} SIGKILL -> incident after {seen * 1000:.0f} ms")
            assert incident["incident"] == "cw.incident.equipment_failure"
            assert names in incident["detail"], incident
            # how soon is a figure, not a test (the monitor, not the executor, is the deadline on a dead
            # driver): the incident only says the driver was silent for joint/heater_state_timeout_s
            assert "silent" in incident["detail"] and "1 s" in incident["detail"], incident
            final = wait_state(ros, client, execution, FINAL)
            assert final["state"] == "stopped", final
            assert f"{driver.split('_')[0]} fault: stale_state" in final["x-cookwala-ros-reason"]["detail"]
            time.sleep(0.5)
            assert 0 < heat.final_cut() - killed < seen + 0.5
    finally:
        stop_processes([clock, executor, *drivers.values()])
