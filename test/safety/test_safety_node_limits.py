"""Tighten-only limits over ROS, and a real limit breach: oil heated past its max stops in time.

Malformed tighten requests come first: each is refused naming the JSON pointer and changes
nothing, and the tests after them prove the monitor still tightens and still stops.
"""

from __future__ import annotations

import json

import pytest

rclpy = pytest.importorskip("rclpy")

from cookwala_msgs.srv import GetSafetyLimits, TightenSafetyLimits  # noqa: E402
from safety_kitchen import Probe, check_stop, drive, rearm, start_node, start_script, stop_processes  # noqa: E402


@pytest.fixture(scope="module")
def kitchen():
    # hot oil in a light pan, so that it passes a limit within seconds at full power
    heater = {"medium": "oil", "medium_mass_kg": 0.3, "pan_mass_kg": 0.3, "initial_temp_c": 184.0}
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


def oil_max(probe) -> float:
    reply = probe.call(probe.get_client, GetSafetyLimits.Request())
    (limit,) = [l for l in reply.limits if l.id == "oil.max_temp"]
    assert limit.has_max and json.loads(reply.pack_json)["id"] == reply.pack_id
    return limit.max


def offer(probe, max_c, **changes):
    limit = {"id": "oil.max_temp", "kind": "max_temp", "action": "stop_all",
             "appliesTo": {"medium": "oil", "ops": ["cw.op.fry", "cw.op.deep_fry"]},
             "max": max_c, "unit": "degC", "source": "hub"}
    limit.update(changes)
    pack = {"core": "0.2.0", "kind": "SafetyLimits", "id": "hub-offer", "version": "0.1.0", "disclaimer": "test",
            "limits": [limit]}
    request = TightenSafetyLimits.Request(pack_json=json.dumps(pack), requested_by="hub-test")
    return probe.call(probe.tighten_client, request)


def effective_pack_json(probe) -> str:
    return probe.call(probe.get_client, GetSafetyLimits.Request()).pack_json


def incident_events(probe, event_type: str):
    with probe.lock:
        return [json.loads(e.data) for _, e in probe.events if e.type == event_type]


@pytest.mark.parametrize("max_c, changes, pointer", [
    ("abc", {}, "/limits/0/max"),                     # a string where a number belongs
    (True, {}, "/limits/0/max"),                      # a boolean is not a number (true is not 1 degC)
    (150.0, {"unit": "degF"}, "/limits/0/unit"),       # not a unit of the vocabulary
    (150.0, {"kind": "max_heat"}, "/limits/0/kind"),   # not a kind of the vocabulary
    (150.0, {"unit": "kPa"}, "/limits/0/unit"),        # a pressure unit on a temperature limit
    (float("nan"), {}, "/limits/0/max"),               # JSON NaN
    (150.0, {"appliesTo": ["oil"]}, "/limits/0/appliesTo"),  # wrong shape
], ids=["string", "boolean", "unknown-unit", "unknown-kind", "unit-of-another-kind", "nan", "shape"])
def test_malformed_tighten_is_refused_and_changes_nothing(kitchen, max_c, changes, pointer):
    probe = kitchen
    before = effective_pack_json(probe)
    with probe.lock:
        events_before = len(probe.events)
    reply = offer(probe, max_c, **changes)
    assert not reply.accepted and not reply.tightened_ids
    assert pointer in reply.message, reply.message
    assert effective_pack_json(probe) == before
    assert json.loads(reply.pack_json) == json.loads(before)

    def refused_event():
        with probe.lock:
            return [json.loads(e.data) for _, e in list(probe.events)[events_before:]
                    if e.type == "x-cookwala.safety.limits_refused"]

    event = probe.wait_for(refused_event, 2.0, "the tighten-refused incident")[-1]
    assert event["incident"] == "cw.incident.untrusted_instruction" and pointer in event["detail"]
    assert probe.status().state_label == "armed"  # a refused request is not a stop


def test_raising_oil_max_is_refused_and_logged(kitchen):
    probe = kitchen
    assert oil_max(probe) == 195.0  # the device pack's, stricter than the default 200
    reply = offer(probe, 250.0)
    assert not reply.accepted and list(reply.refused_ids) == ["oil.max_temp"] and not reply.tightened_ids
    assert "195" in reply.message and "250" in reply.message
    assert oil_max(probe) == 195.0
    events = probe.wait_for(lambda: incident_events(probe, "x-cookwala.safety.limits_refused"), 2.0, "the incident")
    assert events[-1]["incident"] == "cw.incident.untrusted_instruction"
    assert events[-1]["refusedIds"] == ["oil.max_temp"] and events[-1]["requestedBy"] == "hub-test"


def test_lowering_oil_max_takes_effect(kitchen):
    probe = kitchen
    reply = offer(probe, 190.0)
    assert reply.accepted and list(reply.tightened_ids) == ["oil.max_temp"]
    assert oil_max(probe) == 190.0
    assert [l for l in json.loads(reply.pack_json)["limits"] if l["id"] == "oil.max_temp"][0]["max"] == 190
    assert not offer(probe, 195.0).accepted  # and the device pack's old value is now a loosening


def test_oil_over_max_stops_in_time(kitchen):
    probe = kitchen
    rearm(probe)
    assert probe.last_heater().medium_temp_c < oil_max(probe)
    drive(probe, +1)
    limit = oil_max(probe)
    t_cross = probe.wait_for(lambda: probe.first_after(probe.heater, 0.0, lambda m: m.medium_temp_c > limit),
                             20.0, f"oil above {limit} degC")
    status = check_stop(probe, t_cross, "limit:oil.max_temp", extra_s=0.15)
    assert "oil" in status.last_trigger_detail
    events = incident_events(probe, "cookwala.safety.overtemp")
    assert events and events[-1]["incident"] == "cw.incident.overheat" and events[-1]["limitId"] == "oil.max_temp"
    assert status.state_label == "stopped" and "limit:oil.max_temp" in status.active_triggers
