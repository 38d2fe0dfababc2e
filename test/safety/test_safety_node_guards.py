"""The monitor's guards over real topics: an executor that dies before its first heartbeat, an
expected executor that never beats, heat after a verified stop, and a latch that survives a
restart of the monitor (state_dir).

One bring-up (arm_sim, heater_sim, safety_monitor as processes, a probe in-process). No stand-in
heartbeat runs here: heat or motion from anyone is unguarded, which is what these tests need.
"""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

rclpy = pytest.importorskip("rclpy")

from cookwala_msgs.msg import HeaterCommand  # noqa: E402
from cookwala_msgs.srv import ResetSafety, Stop  # noqa: E402
from safety_kitchen import Probe, rearm, start_node, start_script, stop_process, stop_processes  # noqa: E402

from cookwala_ros.safety import latch as latch_file  # noqa: E402

LEASE_S = 0.3
GRACE_S = 1.0
MONITOR = "cookwala_ros.ros.safety_monitor_node"


def monitor_params(state_dir) -> dict:
    return {"activation_timeout_s": 20.0, "heartbeat_lease_s": LEASE_S, "state_dir": str(state_dir),
            "executor_node": "/fake_executor", "executor_start_grace_s": GRACE_S}


@pytest.fixture(scope="module")
def kitchen(tmp_path_factory):
    state_dir = tmp_path_factory.mktemp("monitor-state")
    procs = {
        "arm": start_node("cookwala_ros.ros.arm_sim_node", {"initial_pose": "home"}),
        # a hob without the safety-priority interlock (safety_hold_s 0), as a third-party driver may
        # be: the monitor's own rule must then catch heat that comes back after its verified 0 W
        "heater": start_node("cookwala_ros.ros.heater_sim_node", {"medium": "water", "medium_mass_kg": 1.0,
                                                                  "safety_hold_s": 0.0}),
        "monitor": start_node(MONITOR, monitor_params(state_dir)),
    }
    probe = Probe()
    try:
        probe.wait_state("armed", timeout=30.0)
        probe.wait_for(probe.last_joints, 10.0, "joint states")
        probe.wait_for(probe.last_heater, 10.0, "heater state")
        yield probe, procs, state_dir
    finally:
        probe.close()
        stop_processes(procs.values())


def status_after(probe, t0: float, predicate):
    """(receipt time, status) of the first SafetyStatus after t0 that satisfies predicate."""
    with probe.lock:
        for t, msg in probe.statuses:
            if t >= t0 and predicate(msg):
                return t, msg
    return None


def events_after(probe, t0: float, trigger_prefix: str) -> list[tuple[float, dict]]:
    """(receipt time, data) of the incident events after t0 whose trigger starts with the prefix.
    Events, not the status: on a loaded host another trigger (stale state) may open the episode."""
    with probe.lock:
        data = [(t, json.loads(e.data)) for t, e in probe.events if t >= t0]
    return [(t, d) for t, d in data if str(d.get("trigger", "")).startswith(trigger_prefix)]


def test_executor_killed_before_its_first_heartbeat(kitchen):
    probe, _, _ = kitchen
    rearm(probe)
    t_start = time.monotonic()
    rogue = start_script("safety_rogue_executor.py", args=("--ros-args", "-p", "power_w:=2000.0"))
    try:
        t_heat = probe.wait_for(lambda: probe.first_after(probe.heater, t_start, lambda m: m.power_w > 1.0),
                                20.0, "heat from the stand-in executor")
        os.kill(rogue.pid, signal.SIGKILL)
        t_kill = time.monotonic()
    finally:
        stop_process(rogue)
    t_trigger, event = probe.wait_for(lambda: events_after(probe, t_start, "heartbeat_lost"), 5.0,
                                      "a heartbeat_lost incident")[0]
    print(f"heat seen -> heartbeat_lost event {t_trigger - t_heat:.3f} s; kill -> event {t_trigger - t_kill:+.3f} s")
    assert t_trigger <= t_kill + LEASE_S + 0.3  # within the lease (+ margin) of the crash, if not before
    assert "heat" in event["detail"] and event["state"] in ("stopped", "fault")
    # the status is another topic: on a busy host it may reach the probe after the event
    probe.wait_for(lambda: probe.status().state_label in ("stopped", "fault"), 10.0, "the stop on the status topic")
    t_after = max(t_kill, t_trigger)
    t_off = probe.wait_for(lambda: probe.first_after(probe.heater, t_after, lambda m: m.power_w <= 1.0),
                           2.0, "0 W after the trigger")
    assert t_off - t_after < 1.0


def test_expected_executor_in_the_graph_without_a_heartbeat(kitchen):
    probe, _, _ = kitchen
    rearm(probe)
    t_start = time.monotonic()
    fake = start_script("safety_rogue_executor.py", args=("--ros-args", "-r", "__node:=fake_executor"))
    try:
        t_seen = probe.wait_for(
            lambda: ("fake_executor", "/") in probe.node.get_node_names_and_namespaces() and time.monotonic(),
            20.0, "/fake_executor in the graph")
        t_trigger, event = probe.wait_for(lambda: events_after(probe, t_start, "heartbeat_lost"), GRACE_S + 5.0,
                                          "a heartbeat_lost incident for the silent executor")[0]
        print(f"in the probe's graph -> incident {t_trigger - t_seen:.3f} s (grace {GRACE_S} s)")
        assert "/fake_executor" in event["detail"]
        # the incident goes out just before the status that says stopped: wait for that one too
        probe.wait_for(lambda: (s := probe.status()) and s.state_label in ("stopped", "fault"), 2.0, "stopped")
        assert t_trigger - t_start >= GRACE_S  # not before its grace ran out
    finally:
        stop_process(fake)


def test_heat_after_a_verified_stop_is_a_fault(kitchen):
    probe, _, _ = kitchen
    rearm(probe)
    reply = probe.call(probe.stop_client, Stop.Request(requested_by="test", reason="re-energise test"))
    assert reply.accepted
    # (on a loaded host a staleness trigger may have opened the episode just before: same stop)
    probe.wait_for(lambda: (s := probe.status()) and s.state_label in ("stopped", "fault")
                   and s.last_heat_off_latency_s == s.last_heat_off_latency_s  # not NaN: verified
                   and s.last_standstill_latency_s == s.last_standstill_latency_s, 3.0, "a verified stop")
    t0 = time.monotonic()
    end = t0 + 1.0
    while time.monotonic() < end and not events_after(probe, t0, "reenergised:heat"):  # a rogue keeps commanding
        probe.heat(500.0)
        time.sleep(0.05)
    t_fault, event = probe.wait_for(lambda: events_after(probe, t0, "reenergised:heat"), 2.0, "the incident")[0]
    assert event["action"] == "fault" and event["incident"] == "cw.incident.actuator_failure"
    probe.wait_state("fault", timeout=2.0)
    # the halt keeps being re-sent: off commands from the monitor after the fault, and 0 W again
    probe.wait_for(lambda: probe.first_after(probe.heater_commands, t0 + 0.1,
                                             lambda m: m.mode == HeaterCommand.MODE_OFF and m.source == "safety_monitor"),
                   2.0, "the monitor's off command after the fault")
    t1 = time.monotonic()
    probe.wait_for(lambda: probe.first_after(probe.heater, t1, lambda m: m.power_w <= 1.0), 2.0, "0 W")
    rearm(probe)  # a local reset clears the fault once nothing holds


def test_a_latched_stop_survives_a_monitor_restart(kitchen):
    probe, procs, state_dir = kitchen
    rearm(probe)
    assert latch_file.read(state_dir) is None  # armed: nothing persisted
    reply = probe.call(probe.stop_client, Stop.Request(requested_by="test", reason="latch test"))
    assert reply.accepted
    latched = probe.wait_for(lambda: latch_file.read(state_dir), 3.0, "the latch file")
    assert latched.trigger == "stop_request" and "latch test" in latched.reason and not latched.corrupt
    os.kill(procs["monitor"].pid, signal.SIGKILL)
    procs["monitor"].wait()
    t_restart = time.monotonic()
    procs["monitor"] = start_node(MONITOR, monitor_params(state_dir))
    _, status = probe.wait_for(
        lambda: status_after(probe, t_restart, lambda s: s.last_trigger == "latched_before_restart"),
        30.0, "the restarted monitor's latched status")
    assert status.state_label == "stopped" and "latch test" in status.last_trigger_detail
    time.sleep(1.0)
    assert probe.status().state_label == "stopped"  # stays stopped with nothing else holding
    rearm(probe)  # a local reset works as usual
    assert latch_file.read(state_dir) is None
    reply = probe.call(probe.reset_client, ResetSafety.Request(requested_by="test"))
    assert reply.accepted and reply.state == "armed"


def test_a_corrupt_latch_file_brings_the_monitor_up_stopped(kitchen):
    probe, procs, state_dir = kitchen
    rearm(probe)
    os.kill(procs["monitor"].pid, signal.SIGKILL)
    procs["monitor"].wait()
    latch_file.path_of(state_dir).write_text('{"state": "stopp')  # torn or garbled
    t_restart = time.monotonic()
    procs["monitor"] = start_node(MONITOR, monitor_params(state_dir))
    _, status = probe.wait_for(
        lambda: status_after(probe, t_restart, lambda s: s.last_trigger == "latched_before_restart"),
        30.0, "the restarted monitor's latched status")
    assert status.state_label == "stopped" and "corrupt" in status.last_trigger_detail
    rearm(probe)
    assert latch_file.read(state_dir) is None
