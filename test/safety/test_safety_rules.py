"""Monitor rules over plain readings: each SafetyLimit kind of the default pack plus device rules."""

import math

import pytest

from cookwala_ros.core import vocab
from cookwala_ros.safety import device_rules, rules
from cookwala_ros.safety.device_rules import JointLimit, RelayWatch
from cookwala_ros.safety.incidents import classify
from cookwala_ros.safety.packs import effective_pack
from cookwala_ros.safety.rules import PresenceReading
from cookwala_ros.safety.trackers import CoolingTracker, HoldTracker, trackers_for

LIMITS = effective_pack([])["limits"]


def triggers(findings):
    return sorted(f.trigger for f in findings)


def test_oil_over_max_during_fry_or_unknown_op():
    assert triggers(rules.max_temp_findings(LIMITS, {"oil": 201.0}, "cw.op.fry")) == ["limit:oil.max_temp"]
    assert triggers(rules.max_temp_findings(LIMITS, {"oil": 201.0}, None)) == ["limit:oil.max_temp"]
    assert rules.max_temp_findings(LIMITS, {"oil": 201.0}, "cw.op.heat") == []
    assert rules.max_temp_findings(LIMITS, {"oil": 200.0}, "cw.op.fry") == []


def test_pan_surface_and_missing_readings():
    assert triggers(rules.max_temp_findings(LIMITS, {"pan_surface": 281.0}, "cw.op.sear")) == ["limit:pan.max_surface"]
    unverifiable = rules.max_temp_findings(LIMITS, {"oil": math.nan}, "cw.op.fry", heating=True)
    assert triggers(unverifiable) == ["unverifiable:oil.max_temp"] and unverifiable[0].stops
    assert rules.max_temp_findings(LIMITS, {"oil": math.nan}, "cw.op.fry", heating=False) == []


def test_pressure_only_for_its_ops():
    assert triggers(rules.pressure_findings(LIMITS, 111.0, "cw.op.pressure_cook")) == ["limit:pressure.max"]
    assert rules.pressure_findings(LIMITS, 111.0, "cw.op.boil") == []
    assert rules.pressure_findings(LIMITS, None, "cw.op.pressure_cook") == []


def test_min_core_temp_asks_a_human_at_serving_time():
    found = rules.min_core_temp_findings(LIMITS, "poultry", 70.0, "cw.op.serve", finished=False)
    assert triggers(found) == ["limit:core.poultry"] and found[0].action == "ask_human" and not found[0].stops
    assert rules.min_core_temp_findings(LIMITS, "poultry", 70.0, "cw.op.fry", finished=False) == []
    assert rules.min_core_temp_findings(LIMITS, "poultry", 75.0, None, finished=True) == []


def test_hot_holding_below_60_for_more_than_two_hours_alerts():
    tracker = HoldTracker(next(l for l in LIMITS if l["id"] == "hold.hot"))
    assert tracker.update(0.0, 55.0, "cw.op.hold") is None
    assert tracker.update(3600.0, 55.0, "cw.op.hold") is None
    assert tracker.update(5400.0, 65.0, "cw.op.hold") is None  # 1.5 h below so far
    assert tracker.update(9000.0, 55.0, "cw.op.hold") is None  # the time above 60 does not count
    found = tracker.update(11000.0, 55.0, "cw.op.hold")
    assert found is not None and found.action == "alert" and found.trigger == "limit:hold.hot"


def test_two_stage_cooling():
    limit = next(l for l in LIMITS if l["id"] == "cool.two_stage")
    ok, slow = CoolingTracker(limit), CoolingTracker(limit)
    for tracker, temps in ((ok, [(0, 70), (10, 60), (3600, 21), (7200, 10), (4 * 3600, 5)]),
                           (slow, [(0, 60), (3600, 40), (2 * 3600 + 1, 30)])):
        results = [tracker.update(t, c, "cw.op.cool") for t, c in temps]
    assert ok.stage == 2 and results is not None
    assert slow.update(2 * 3600 + 2, 30, "cw.op.cool").trigger == "limit:cool.two_stage"
    assert {type(t) for t in trackers_for(LIMITS)} == {HoldTracker, CoolingTracker}


def test_presence_for_attended_ops():
    fry_unattended = vocab.envelope("cw.op.fry")["unattended"]
    assert fry_unattended is False
    away = PresenceReading(False, math.inf, received_at=10.0)
    near = PresenceReading(True, 30.0, received_at=10.0)  # on call, can be at the hob within a minute
    assert triggers(rules.presence_findings(LIMITS, "cw.op.fry", False, away, 11.0, 5.0)) == ["limit:presence.unattended"]
    assert rules.presence_findings(LIMITS, "cw.op.fry", False, near, 11.0, 5.0) == []
    assert rules.presence_findings(LIMITS, "cw.op.boil", True, away, 11.0, 5.0) == []
    assert triggers(rules.presence_findings(LIMITS, "cw.op.fry", False, near, 20.0, 5.0))  # stale reading
    assert triggers(rules.presence_findings(LIMITS, "cw.op.fry", False, None, 20.0, 5.0))


@pytest.mark.parametrize("present, reach", [
    (False, 0.0),  # the message's defaults: nobody, though reachable_within_s says 0 s
    (False, 30.0),  # only person_present says somebody is there
    (True, 61.0),  # the other fields only narrow it: too far away
    (True, float("nan")),
    (True, -1.0),
])
def test_presence_means_nobody_unless_person_present_and_near(present, reach):
    reading = PresenceReading(present, reach, received_at=10.0)
    finding = rules.presence_findings(LIMITS, "cw.op.fry", False, reading, 11.0, 5.0)
    assert triggers(finding) == ["limit:presence.unattended"]
    assert "needs a person" in finding[0].detail


def test_smoke_stops_everything_and_stop_deadline():
    found = rules.smoke_findings(LIMITS, True)
    assert triggers(found) == ["limit:smoke.fire"] and found[0].action == "stop_all"
    assert rules.smoke_findings(LIMITS, False) == []
    assert rules.stop_deadline_s(LIMITS) == 0.5
    assert rules.stop_deadline_s([{"kind": "stop", "max": 300, "unit": "min"}, {"kind": "stop", "max": 0.3, "unit": "s"}]) == 0.3


def test_joint_limits_and_workspace():
    limits = {"a": JointLimit(-1.0, 1.0, 2.0), "b": JointLimit(-1.0, 1.0, 2.0)}
    found = device_rules.joint_findings(["a", "b"], [1.5, 0.0], [0.0, 2.5], limits, 0.02, 1.05)
    assert triggers(found) == ["joint_position:a", "joint_velocity:b"]
    assert device_rules.joint_findings(["a"], [1.01], [2.09], limits, 0.02, 1.05) == []
    assert triggers(device_rules.workspace_findings((0.5, 0.0, 0.5), (-1, -1, 0.9), (1, 1, 2))) == ["workspace"]
    assert device_rules.workspace_findings((0.5, 0.0, 1.0), (-1, -1, 0.9), (1, 1, 2)) == []
    assert device_rules.max_abs([0.1, -0.3]) == 0.3 and device_rules.max_abs([math.nan]) == math.inf


def test_stale_relay_and_heartbeat():
    assert triggers(device_rules.stale_findings("heater_state", 1.0, 0.0, 1.6, 0.5)) == ["stale:heater_state"]
    assert device_rules.stale_findings("heater_state", 1.0, 0.0, 1.4, 0.5) == []
    assert device_rules.stale_findings("heater_state", None, 0.0, 0.4, 0.5) == []
    relay = RelayWatch(grace_s=1.0, power_threshold_w=1.0)
    assert relay.update(True, 1500.0, False, 0.0) == []
    assert relay.update(True, 1500.0, False, 0.9) == []
    assert relay.update(True, 1500.0, False, 1.1)[0].action == "fault"
    assert relay.update(False, 1500.0, False, 1.2) == []
    assert relay.update(False, 0.0, True, 1.3)[0].trigger == "heater_fault:relay_welded"
    assert device_rules.heartbeat_findings(False, None, 10.0, 0.3, False) == []
    assert triggers(device_rules.heartbeat_findings(True, 1.0, 1.31, 0.3, False)) == ["heartbeat_lost"]
    assert triggers(device_rules.heartbeat_findings(True, 1.0, 1.1, 0.3, True)) == ["heartbeat_lost"]
    assert device_rules.heartbeat_findings(True, 1.0, 1.2, 0.3, False) == []


@pytest.mark.parametrize("trigger,kind", [
    ("limit:oil.max_temp", "max_temp"), ("limit:smoke.fire", "smoke_or_fire"), ("limit:hold.hot", "time_temp"),
    ("limit:core.poultry", "min_core_temp"), ("heartbeat_lost", None), ("stale:heater_state", None),
    ("heater_fault:relay_welded", None), ("workspace", None), ("deadline", None),
])
def test_incident_ids_are_vocabulary_ids(trigger, kind):
    event_type, incident = classify(trigger, kind)
    assert event_type.startswith(("cookwala.safety.", "cookwala.device."))
    assert incident in vocab.incident_types()


def test_fast_kinematics_matches_the_robot_description():
    import numpy as np

    from cookwala_ros.robot.kinematics import ToolKinematics
    from cookwala_ros.robot.description import default_arm, load_poses

    arm = default_arm()
    fast = ToolKinematics(arm.chain)
    rng = np.random.default_rng(6)
    poses = list(load_poses(arm=arm).values())
    poses += [dict(zip(arm.joint_names, rng.uniform(arm.lower, arm.upper))) for _ in range(20)]
    for pose in poses:
        assert np.allclose(fast.position(pose), arm.tool_position(pose), atol=1e-9)
