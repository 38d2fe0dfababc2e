"""The safety monitor over real topics with the simulated kitchen: every trigger stops in time.

One bring-up (arm_sim, heater_sim, safety_monitor as processes, a probe node in-process) serves
every test of this module. Each test drives the arm at speed with the heater on, fires one
trigger, then checks the stop twice: the latencies the monitor measured (SafetyStatus) and what
the probe itself saw on /joint_states and /heater/state, on the same steady clock.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

rclpy = pytest.importorskip("rclpy")

from cookwala_msgs.srv import ResetSafety, Stop  # noqa: E402
from safety_kitchen import Probe, check_stop, drive, rearm, start_node, start_script, stop_processes, tails  # noqa: E402

MONITOR_PARAMS = {"heater_state_timeout_s": 0.5, "activation_timeout_s": 20.0}


@pytest.fixture(scope="module")
def kitchen():
    """The kitchen, the local stop button and a hub process on another ROS domain, all started at
    once (process start-up is the slow part); then a stand-in executor heartbeat. Started with the
    others, the stand-in shared the cores with five Python start-ups and missed the device's
    0.3 s lease (a heartbeat_lost stop before any test had begun)."""
    other_domain = str((int(os.environ["ROS_DOMAIN_ID"]) + 37) % 101)
    procs = {
        "arm": start_node("cookwala_ros.ros.arm_sim_node", {"initial_pose": "home"}),
        "heater": start_node("cookwala_ros.ros.heater_sim_node", {"medium": "oil", "medium_mass_kg": 0.92}),
        "monitor": start_node("cookwala_ros.ros.safety_monitor_node", MONITOR_PARAMS),
        "hub": start_script("safety_heartbeat_sender.py", env={"ROS_DOMAIN_ID": other_domain},
                            args=("--ros-args", "-r", "__node:=hub")),
        # publishes its state on change only (long period), so the probe's own presses are not overwritten
        "button": start_node("cookwala_ros.ros.estop_button_node", {"period_s": 600.0}),
    }
    probe = Probe()
    try:
        try:
            probe.wait_state("armed", timeout=30.0)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{tails(procs)}") from None
        probe.wait_for(probe.last_joints, 10.0, "joint states")
        probe.wait_for(probe.last_heater, 10.0, "heater state")
        procs["heartbeat"] = start_script("safety_heartbeat_sender.py")
        probe.wait_for(lambda: (s := probe.status()) and s.executor_heartbeat == "live", 30.0,
                       lambda: f"the monitor hearing the stand-in executor (status: {probe._describe(probe.status())})")
        probe.wait_state("armed")
        yield probe, procs
    finally:
        probe.close()
        stop_processes(procs.values())


def test_stop_service(kitchen):
    probe, _ = kitchen
    rearm(probe)
    drive(probe, +1)
    probe.stop_client.wait_for_service(timeout_sec=5.0)
    t0 = time.monotonic()
    future = probe.stop_client.call_async(Stop.Request(requested_by="test", reason="stop service test"))
    probe.wait_for(future.done, 5.0, "the Stop reply")
    assert future.result().accepted
    check_stop(probe, t0, "stop_request")


def test_estop_topic_latches_until_reset(kitchen):
    probe, _ = kitchen
    rearm(probe)
    drive(probe, -1)
    t0 = time.monotonic()
    probe.estop(True)
    check_stop(probe, t0, "estop")
    refused = probe.call(probe.reset_client, ResetSafety.Request(requested_by="test"))
    assert not refused.accepted and "estop" in refused.active_triggers
    probe.estop(False)
    probe.wait_for(lambda: "estop" not in probe.status().active_triggers, 2.0, "the estop released")
    assert probe.status().state_label == "stopped"  # released is not reset


def test_heartbeat_loss_by_sigkill(kitchen):
    probe, procs = kitchen
    sender = procs["heartbeat"]
    before = probe.heartbeats
    probe.wait_for(lambda: probe.heartbeats > before + 3, 15.0, "heartbeats from the stand-in executor")
    rearm(probe)
    drive(probe, +1)
    t_kill = time.monotonic()
    os.kill(sender.pid, signal.SIGKILL)
    sender.wait()
    # the trigger is the lease running out (0.3 s), then the usual deadlines
    status = check_stop(probe, t_kill, "heartbeat_lost", extra_s=0.4)
    assert "heartbeat" in status.last_trigger_detail or "liveliness" in status.last_trigger_detail
    # the tests after this one heat and move: they need a live executor heartbeat again
    procs["heartbeat"] = start_script("safety_heartbeat_sender.py")
    before = probe.heartbeats
    probe.wait_for(lambda: probe.heartbeats > before + 3, 15.0, "heartbeats from the restarted stand-in")


def test_presence_loss_during_an_attended_op(kitchen):
    probe, _ = kitchen
    rearm(probe)
    drive(probe, -1)
    probe.execution("running", "cw.op.fry")  # fry: unattended=false, and a person is present
    time.sleep(0.2)
    assert probe.status().state_label == "armed"
    t0 = time.monotonic()
    probe.presence(False)
    status = check_stop(probe, t0, "limit:presence.unattended")
    assert "cw.op.fry" in status.last_trigger_detail


def test_stale_heater_state(kitchen):
    probe, procs = kitchen
    rearm(probe)
    drive(probe, +1)
    heater = procs["heater"]
    os.kill(heater.pid, signal.SIGSTOP)  # the heater controller hangs: no state, no commands
    t_stop = time.monotonic()
    try:
        time.sleep(0.75)
    finally:
        os.kill(heater.pid, signal.SIGCONT)
    # the trigger is the state going stale (0.5 s after the last one, at most 0.6 s after SIGSTOP)
    # resumed, the heater works off its queue: heat commands sent while it hung may briefly win
    # after its 0 W (a misbehaving device: fault); either way the stop by staleness came first
    status = check_stop(probe, t_stop, "stale:heater_state", extra_s=0.6, fault_ok=True)
    assert "heater_state" in status.last_trigger_detail


def test_local_button_stops_with_the_hub_on_another_domain(kitchen):
    """The kitchen needs nothing beyond its own domain: the hub sits on another ROS domain (no
    path to the monitor), and the local button node's press still stops everything in time."""
    from std_srvs.srv import SetBool

    probe, procs = kitchen
    assert procs["hub"].poll() is None  # the hub is running, on its own domain
    client = probe.node.create_client(SetBool, "/estop_button/set")
    try:
        assert client.wait_for_service(timeout_sec=10.0)
        rearm(probe)
        drive(probe, -1)
        assert "/hub" not in probe.heartbeat_senders  # nothing from the hub's domain reaches the kitchen
        t_call = time.monotonic()
        future = client.call_async(SetBool.Request(data=True))
        # the trigger is the button's message (the service call to the button is not part of the stop)
        t0 = probe.wait_for(lambda: probe.first_after(probe.estops, t_call, lambda m: m.data), 5.0, "the press")
        check_stop(probe, t0, "estop")
        probe.wait_for(future.done, 2.0, "the button's reply")
        future = client.call_async(SetBool.Request(data=False))
        probe.wait_for(future.done, 2.0, "the button's reply")
    finally:
        probe.node.destroy_client(client)
