"""The engine's safety inputs (no ROS): a silent heater or arm driver and a lost safety monitor
stop the execution with an equipment-failure incident naming what went silent; MonitorWatch
decides when the monitor counts as gone."""

from __future__ import annotations

import pytest

from executor_kitchen import drive
from executor_recipes import boil_recipe, request_for
from cookwala_ros.core.run_types import HeatCommand
from cookwala_ros.ros.monitor_watch import MonitorWatch

FINAL = ("completed", "stopped", "failed")


def _heating(service, install, kitchen):
    recipe = boil_recipe(minutes=10)
    install(recipe)
    svc = service()
    status, _ = svc.start_execution(request_for(recipe))
    eid = status["id"]
    assert drive(svc, kitchen, lambda: kitchen.heater.power_w > 0, max_s=300)
    return svc, eid


def _incidents(events: list[dict]) -> list[dict]:
    return [e["data"] for e in events if e["type"].startswith("x-cookwala.incident.")]


def _run_with(svc, kitchen, eid, patch, max_s=30.0):
    """Drive on, with `patch(obs)` changing every observation (what the ROS adapter would report)."""
    events: list[dict] = []
    svc.add_event_listener(events.append)
    end = kitchen.now + max_s
    while kitchen.now < end and svc.get_status(eid)["state"] not in FINAL:
        obs = kitchen.observe()
        patch(obs)
        kitchen.apply(svc.tick(kitchen.now, obs))
        kitchen.step(0.2)
    return events


@pytest.mark.parametrize("field, value, detail, reason", [
    ("heater", "no heater state on /heater/state for 0.61 s: the heater driver is silent", "heater driver",
     "heater fault: stale_state"),
    ("arm", "no joint states on /joint_states for 0.62 s: the arm driver is silent", "arm driver",
     "arm fault: stale_state"),
])
def test_a_silent_driver_stops_with_an_equipment_failure_naming_it(service, install, kitchen, field, value, detail,
                                                                     reason):
    svc, eid = _heating(service, install, kitchen)

    def silent(obs):
        obs.fault_details = {field: value}
        if field == "heater":
            obs.heater_fault, obs.medium_temp_c, obs.pan_temp_c, obs.heater_power_w = "stale_state", None, None, None
        else:
            obs.arm_fault, obs.arm_positions, obs.arm_pose = "stale_state", {}, None

    events = _run_with(svc, kitchen, eid, silent)
    final = svc.get_status(eid)
    assert final["state"] == "stopped"
    assert reason in final["x-cookwala-ros-reason"]["detail"]
    incidents = _incidents(events)
    assert [i["incident"] for i in incidents] == ["cw.incident.equipment_failure"]
    assert detail in incidents[0]["detail"]
    assert kitchen.heater.power_w == 0
    assert f"{field}.stale_state" in [e["limit"] for e in svc.get_log(eid).get("safetyEvents", [])]


def test_a_lost_safety_monitor_stops_with_an_incident_and_a_tripped_one_without(service, install, kitchen):
    svc, eid = _heating(service, install, kitchen)
    why = "the safety monitor /safety_monitor is silent: no status for 0.80 s"

    def lost(obs):
        obs.safety_armed, obs.safety_fault = False, why

    events = _run_with(svc, kitchen, eid, lost)
    final = svc.get_status(eid)
    assert final["state"] == "stopped"
    assert "safety monitor lost" in final["x-cookwala-ros-reason"]["detail"]
    assert [i["detail"] for i in _incidents(events)] == [why]


def test_a_tripped_safety_monitor_stops_without_an_incident_of_the_executor(service, install, kitchen):
    svc, eid = _heating(service, install, kitchen)

    def tripped(obs):
        obs.safety_armed = False  # the monitor reports its own trigger and incident

    events = _run_with(svc, kitchen, eid, tripped)
    assert svc.get_status(eid)["state"] == "stopped"
    assert "the safety monitor tripped" in svc.get_status(eid)["x-cookwala-ros-reason"]["detail"]
    assert _incidents(events) == []


def test_monitor_watch_freshness_and_arming():
    watch = MonitorWatch("/safety_monitor", timeout_s=0.75)
    assert "no status from the safety monitor /safety_monitor yet" in watch.hold(0.0)
    assert not watch.may_cook(0.0) and watch.check(5.0) is None  # never seen: nothing to lose
    watch.on_status(False, "stopped", "estop", 1.0)
    assert "is stopped after estop" in watch.hold(1.0) and not watch.may_cook(1.0)
    watch.on_status(True, "armed", "", 2.0)
    assert watch.hold(2.5) is None and watch.may_cook(2.5) and watch.check(2.5) is None
    assert watch.check(2.74) is None
    why = watch.check(2.8)
    assert why and "/safety_monitor is silent" in why and "safety_status_timeout_s" in why
    assert watch.check(2.9) is None  # reported once
    assert not watch.may_cook(2.9) and "/safety_monitor is silent" in watch.hold(2.9)
    watch.on_status(True, "armed", "", 3.0)  # a monitor seen armed again
    assert watch.may_cook(3.0) and watch.check(3.0) is None
    assert watch.check(4.0) is not None  # and lost again


def test_an_unguarded_watch_follows_what_arrives():
    watch = MonitorWatch("")
    assert watch.hold(0.0) is None and watch.may_cook(100.0) and watch.check(100.0) is None
    watch.on_status(False, "stopped", "estop", 1.0)
    assert "stopped after estop" in watch.hold(50.0)


def test_a_safety_input_at_the_first_tick_stops_an_accepted_execution_cleanly(service, install, kitchen):
    recipe = boil_recipe(minutes=10)
    install(recipe)
    svc = service()
    status, _ = svc.start_execution(request_for(recipe))
    eid = status["id"]
    obs = kitchen.observe()
    obs.safety_armed, obs.safety_fault = False, "the safety monitor /safety_monitor is silent"
    commands = svc.tick(kitchen.now, obs)  # accepted -> stopped directly, no step handler for it
    assert svc.get_status(eid)["state"] == "stopped"
    assert commands.heater in (None, HeatCommand.off()) and commands.arm_pose is None
