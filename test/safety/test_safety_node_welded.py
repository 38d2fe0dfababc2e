"""A heater whose relay is welded: commanded off, it keeps heating. The monitor must notice,
reach `fault`, keep commanding off, and say so (status, event, diagnostics)."""

from __future__ import annotations

import json
import time

import pytest

rclpy = pytest.importorskip("rclpy")

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from safety_kitchen import Probe, drive, rearm, start_node, start_script, stop_processes  # noqa: E402

from cookwala_msgs.srv import ResetSafety  # noqa: E402
from cookwala_ros.ros import qos  # noqa: E402


@pytest.fixture(scope="module")
def kitchen():
    heater = {"medium": "oil", "medium_mass_kg": 0.92, "initial_temp_c": 120.0, "fault.relay_welded": True}
    procs = [start_node("cookwala_ros.ros.arm_sim_node", {}),
             start_node("cookwala_ros.ros.heater_sim_node", heater),
             start_node("cookwala_ros.ros.safety_monitor_node", {"activation_timeout_s": 20.0, "heartbeat_lease_s": 1.0}),
             # heat and motion need a live executor heartbeat; a long lease: heartbeat loss is not under test here
             start_script("safety_heartbeat_sender.py", args=("--ros-args", "-p", "lease_s:=1.0"))]
    probe = Probe()
    try:
        probe.wait_state("armed", timeout=30.0)
        probe.wait_for(probe.last_joints, 10.0, "joint states")
        yield probe
    finally:
        probe.close()
        stop_processes(procs)


def test_welded_relay_reaches_fault_and_keeps_commanding_off(kitchen):
    probe = kitchen
    diagnostics = []
    probe.node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, qos.sensor())
    rearm(probe)  # commands the heater off: the welded relay cannot comply yet (no power so far)
    drive(probe, +1)
    t0 = time.monotonic()
    probe.estop(True)
    status = probe.wait_for(lambda: (s := probe.status()) and s.state_label == "fault" and s, 1.5, "fault")
    assert "relay" in status.last_trigger_detail or "heater" in status.last_trigger_detail
    assert "heater_fault:relay_welded" in status.active_triggers
    assert probe.last_heater().power_w > 0  # the hardware fault is real: software cannot cut it
    # it keeps commanding off, periodically, long after the trigger
    time.sleep(1.0)
    t1 = time.monotonic()
    time.sleep(0.5)
    offs = [t for t, c in list(probe.heater_commands)
            if t >= t1 and c.source == "safety_monitor" and c.mode == c.MODE_OFF]
    assert len(offs) >= 3
    with probe.lock:
        faults = [json.loads(e.data) for _, e in probe.events if e.type == "cookwala.device.fault"]
    assert any(f.get("incident") == "cw.incident.actuator_failure" and "relay" in f["trigger"] for f in faults)
    probe.wait_for(lambda: any(s.level == DiagnosticStatus.ERROR for d in diagnostics for s in d.status), 2.0,
                   "an ERROR diagnostic")
    probe.estop(False)
    reply = probe.call(probe.reset_client, ResetSafety.Request(requested_by="test"))
    assert not reply.accepted and "heater_fault:relay_welded" in reply.active_triggers
    assert probe.status().state_label == "fault"
    assert time.monotonic() - t0 > 1.5
