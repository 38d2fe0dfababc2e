"""The monitor without ROS: readings in, halt decisions and reports out."""

import math

import pytest

from cookwala_ros.core import vocab
from cookwala_ros.safety.device_rules import JointLimit
from cookwala_ros.safety.monitor import HeaterReading, Monitor, MonitorConfig
from cookwala_ros.safety.packs import effective_pack, load_effective_pack
from cookwala_ros.safety.rules import PresenceReading


def heater(power=0.0, off=True, medium="oil", temp=25.0, pan=30.0, welded=False):
    return HeaterReading(power, off, medium, temp, pan, welded)


def unattended(op):
    env = vocab.envelope(op) if vocab.is_known_op(op) else None
    return None if env is None else env.get("unattended")


@pytest.fixture()
def monitor():
    m = Monitor(effective_pack([]), MonitorConfig(heater_state_timeout_s=0.5),
                joint_limits={"j1": JointLimit(-1.0, 1.0, 2.0)},
                tool_position=lambda names, q: (0.5, 0.0, 1.2), unattended_of=unattended)
    m.on_heater(heater(), 0.0)
    m.on_joints(["j1"], [0.0], [0.0], 0.0)
    assert m.activate(0.0) is False and m.state == "armed"
    return m


def test_oil_over_max_halts_and_reports(monitor):
    assert monitor.on_heater(heater(power=2000, off=False, temp=150), 0.1) is False
    assert monitor.on_heater(heater(power=2000, off=False, temp=201), 0.2) is True
    assert monitor.state == "stopped" and monitor.arbiter.active_triggers == ["limit:oil.max_temp"]
    assert [r.trigger for r in monitor.outbox] == ["limit:oil.max_temp"]
    assert monitor.on_heater(heater(power=0, temp=202), 0.5) is False  # still over: no second halt
    assert monitor.reset(0.6)[0] is False


def test_presence_loss_during_an_attended_op(monitor):
    monitor.on_presence(PresenceReading(True, 0.0, 0.0), 0.0)
    assert monitor.on_execution("running", "cw.op.fry", {}, None, 0.0, 0.1) is False
    assert monitor.on_presence(PresenceReading(False, math.inf, 0.2), 0.2) is True
    assert monitor.arbiter.active_triggers == ["limit:presence.unattended"]


def test_a_false_with_default_fields_is_nobody(monitor):
    """Presence.msg defaults (reachable_within_s 0.0) must not keep an attended op running."""
    monitor.on_presence(PresenceReading(True, 0.0, 0.0), 0.0)
    assert monitor.on_execution("running", "cw.op.fry", {}, None, 0.0, 0.1) is False
    assert monitor.on_presence(PresenceReading(False, 0.0, 0.2), 0.2) is True
    assert monitor.arbiter.active_triggers == ["limit:presence.unattended"]


def test_unattended_ops_need_nobody(monitor):
    monitor.on_execution("running", "cw.op.simmer", {}, None, 0.0, 0.1)
    assert monitor.on_presence(PresenceReading(False, math.inf, 0.2), 0.2) is False
    assert monitor.state == "armed"


def test_heartbeat_loss_fires_once_and_allows_reset(monitor):
    monitor.on_heartbeat(1.0)
    monitor.on_heater(heater(), 1.0)
    monitor.on_joints(["j1"], [0.0], [0.0], 1.0)
    assert monitor.tick(1.2) is False
    assert monitor.tick(1.31) is True and monitor.state == "stopped"
    assert monitor.tick(1.4) is False  # fires once per loss
    monitor.on_heater(heater(), 1.5)
    monitor.on_joints(["j1"], [0.0], [0.0], 1.5)
    assert monitor.reset(1.6)[0]


def test_liveliness_event_alone_stops(monitor):
    monitor.on_heartbeat(1.0)
    assert monitor.on_liveliness(False, 1.05) is True


def test_stale_heater_state_cuts_heat(monitor):
    monitor.on_joints(["j1"], [0.0], [0.0], 0.3)
    assert monitor.tick(0.4) is False
    assert monitor.tick(0.51) is True and monitor.arbiter.active_triggers == ["stale:heater_state"]
    monitor.on_heater(heater(), 0.6)
    assert monitor.arbiter.active_triggers == []


def test_welded_relay_reaches_fault_and_keeps_commanding(monitor):
    monitor.on_stop_request("test", "welded relay test", 1.0)
    for t in (1.1, 1.5, 1.9, 2.05, 2.2):
        monitor.on_heater(heater(power=1800), t)
        monitor.tick(t)
    assert monitor.state == "fault" and monitor.keep_commanding
    kinds = {r.trigger for r in monitor.outbox}
    assert "heater_fault:relay_welded" in kinds and "deadline" in kinds
    assert not monitor.reset(3.0)[0]


def test_joint_velocity_and_workspace(monitor):
    assert monitor.on_joints(["j1"], [0.0], [3.0], 0.1) is True
    assert "joint_velocity:j1" in monitor.arbiter.active_triggers
    outside = Monitor(effective_pack([]), tool_position=lambda n, q: (0.5, 0.0, 0.2))
    outside.activate(0.0)
    assert outside.on_joints(["j1"], [0.0], [0.0], 0.1) is True
    assert outside.arbiter.active_triggers == ["workspace"]


def test_standstill_and_heat_off_latencies(monitor):
    monitor.on_joints(["j1"], [0.0], [1.0], 0.9)
    assert monitor.on_estop(True, 1.0) is True
    monitor.arbiter.halt_sent(1.001)
    monitor.on_joints(["j1"], [0.0], [0.5], 1.1)
    monitor.on_joints(["j1"], [0.0], [0.0], 1.25)
    monitor.on_joints(["j1"], [0.0], [0.0], 1.31)  # still for the dwell: at rest from 1.25 on
    monitor.on_heater(heater(), 1.4)
    ep = monitor.arbiter.episode
    assert math.isclose(ep.standstill_latency_s, 0.25) and math.isclose(ep.heat_off_latency_s, 0.4)
    assert monitor.reset(1.5)[0] is False  # button still pressed
    monitor.on_estop(False, 1.6)
    assert monitor.reset(1.7)[0] and monitor.state == "armed"


def test_tighten_updates_what_the_rules_enforce(monitor):
    offered = {"core": "0.2.0", "kind": "SafetyLimits", "id": "t", "version": "0.1.0", "disclaimer": "t",
               "limits": [{"id": "oil.max_temp", "kind": "max_temp", "action": "cut_heat",
                           "appliesTo": {"medium": "oil", "ops": ["cw.op.fry", "cw.op.deep_fry"]},
                           "max": 190, "unit": "degC", "source": "test"}]}
    assert monitor.tighten(offered).tightened_ids == ["oil.max_temp"]
    assert monitor.on_heater(heater(power=100, off=False, temp=195), 0.1) is True
    stricter_stop = dict(offered, limits=[{"id": "stop.local", "kind": "stop", "action": "stop_all",
                                           "max": 0.3, "unit": "s", "source": "t"}])
    monitor.tighten(stricter_stop)
    assert monitor.arbiter.motion_deadline_s == 0.3


def test_device_pack_is_at_least_as_strict_as_the_defaults(repo_root):
    defaults = {l["id"]: l for l in effective_pack([])["limits"]}
    device = {l["id"]: l for l in load_effective_pack([repo_root / "config/safety/device-pack.json"])["limits"]}
    assert device.keys() == defaults.keys()
    for limit_id, limit in defaults.items():
        if "max" in limit:
            assert device[limit_id]["max"] <= limit["max"], limit_id
    assert device["oil.max_temp"]["max"] == 195


def test_food_class_from_the_status_document():
    from cookwala_ros.safety.monitor import food_class_of

    assert food_class_of('{"step": {"node": "n1", "foodClass": "poultry"}}') == "poultry"
    assert food_class_of('{"foodClass": "leftovers"}') == "leftovers"
    assert food_class_of("not json") is None and food_class_of("") is None
    assert food_class_of('{"a": {"b": {"c": {"d": {"e": {"foodClass": "x"}}}}}}') is None  # too deep


def test_bad_device_packs_name_the_file_and_field(tmp_path):
    from cookwala_ros.safety.packs import PackError

    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(PackError, match="broken.json"):
        load_effective_pack([broken])
    looser = tmp_path / "bad-action.yaml"
    looser.write_text("core: 0.2.0\nkind: SafetyLimits\nid: x\nversion: 0.1.0\ndisclaimer: t\n"
                      "limits:\n  - {id: oil.max_temp, kind: max_temp, action: shrug, max: 300, unit: degC, source: t}\n")
    with pytest.raises(PackError, match="bad-action.yaml"):
        load_effective_pack([looser])


@pytest.mark.parametrize("name, content, message", [
    ("deep.json", b"[" * 2000 + b"]" * 2000, "nested 2000 levels deep"),  # once a RecursionError
    ("deep.yaml", b"- " * 3000 + b"x\n", "nested more than 64 levels deep"),
    ("flow.yml", b"[" * 3000 + b"]" * 3000, "nested more than 64 levels deep"),
    ("cycle.yaml", b"limits: &l [*l]\n", "contain itself"),
    ("latin1.json", b'{"id": "caf\xe9"}', "not UTF-8"),
    ("latin1.yaml", b"id: caf\xe9\n", "not UTF-8"),
    ("list.yaml", b"- kind: SafetyLimits\n", "must be an object at the top level"),
    ("string.json", b'"SafetyLimits"', "must be an object at the top level"),
])
def test_hostile_device_packs_are_a_pack_error_naming_the_file(tmp_path, name, content, message):
    """Issue 15: what the safety monitor and the executor catch at start-up, never a traceback."""
    from cookwala_ros.safety.packs import PackError

    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(PackError) as caught:
        load_effective_pack([path])
    assert str(path) in str(caught.value) and message in str(caught.value), caught.value
