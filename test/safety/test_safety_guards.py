"""The monitor's guards on its own inputs, without ROS: tighten validation, heartbeat loss from
the start, the expected executor in the graph, dead arm driver, re-energising after a stop, and
the persisted latch."""

from __future__ import annotations

import copy
import json
import math
import os

import pytest

from cookwala_ros.ros.safety_monitor_params import stop_input_args
from cookwala_ros.safety import latch as latch_file
from cookwala_ros.safety.arbiter import STANDSTILL_DWELL_S
from cookwala_ros.safety.device_rules import ExecutorPresence, unguarded_findings
from cookwala_ros.safety.monitor import HeaterReading, Monitor, MonitorConfig
from cookwala_ros.safety.packs import PackError, effective_pack

LEASE = 0.3


def heater(power=0.0, off=True, temp=25.0):
    return HeaterReading(power, off, "water", temp, 30.0)


def joints(monitor, t, v=0.0):
    return monitor.on_joints(["j1"], [0.0], [v], t)


def make(**config) -> Monitor:
    m = Monitor(effective_pack([]), MonitorConfig(heartbeat_lease_s=LEASE, **config))
    m.on_heater(heater(), 0.0)
    joints(m, 0.0)
    assert m.activate(0.0) is False and m.state == "armed"
    return m


def triggers(m: Monitor) -> list[str]:
    return [r.trigger for r in m.outbox]


# -- tighten validation -------------------------------------------------------------------
def _offer(**changes):
    limit = {"id": "oil.max_temp", "kind": "max_temp", "action": "stop_all", "max": 180, "unit": "degC",
             "appliesTo": {"medium": "oil", "ops": ["cw.op.fry", "cw.op.deep_fry"]}, "source": "hub"}
    limit.update(changes)
    return {"core": "0.2.0", "kind": "SafetyLimits", "id": "offer", "version": "0.1.0", "disclaimer": "t",
            "limits": [limit]}


@pytest.mark.parametrize("offer, pointer", [
    (_offer(max="abc"), "/limits/0/max"),
    (_offer(max=True), "/limits/0/max"),
    (_offer(max=False), "/limits/0/max"),
    (_offer(unit="furlong"), "/limits/0/unit"),
    (_offer(unit="s"), "/limits/0/unit"),  # a time unit on a temperature limit
    (_offer(kind="hot"), "/limits/0/kind"),
    (_offer(max=math.nan), "/limits/0/max"),
    (_offer(max=math.inf), "/limits/0/max"),
    (_offer(max=-math.inf), "/limits/0/max"),
    (_offer(appliesTo="oil"), "/limits/0/appliesTo"),
    ({**_offer(), "limits": {"oil.max_temp": 180}}, "/limits"),
    ({**_offer(), "limits": ["oil.max_temp"]}, "/limits/0"),
    ([_offer()], ""),
    ("oil.max_temp=180", ""),
])
def test_a_bad_tighten_raises_and_changes_nothing(offer, pointer):
    m = make()
    before = copy.deepcopy(m.pack)
    with pytest.raises(PackError) as err:
        m.tighten(offer)
    assert pointer in str(err.value)
    assert m.pack == before and [l["id"] for l in m.limits] == [l["id"] for l in before["limits"]]
    # still works afterwards: a good tighten applies, and the tighter limit stops
    assert m.tighten(_offer(max=180)).tightened_ids == ["oil.max_temp"]
    m.on_execution("running", "cw.op.deep_fry", {}, None, 0.0, 0.1)
    assert m.on_heater(HeaterReading(2000.0, False, "oil", 181.0, 190.0), 0.2) is True
    assert m.arbiter.active_triggers == ["limit:oil.max_temp"]


# -- heartbeat loss from the start ----------------------------------------------------------
def test_unguarded_findings_rule():
    assert unguarded_findings("", None, 0.0, 10.0, LEASE, False) == []
    assert unguarded_findings("heat", None, 0.0, 0.2, LEASE, False) == []  # within the lease of activation
    assert [f.trigger for f in unguarded_findings("heat", None, 0.0, 0.31, LEASE, False)] == ["heartbeat_lost"]
    assert unguarded_findings("motion", 1.0, 0.0, 1.2, LEASE, False) == []
    assert "motion" in unguarded_findings("motion", 1.0, 0.0, 1.31, LEASE, False)[0].detail
    assert unguarded_findings("heat", 1.0, 0.0, 1.1, LEASE, True)[0].trigger == "heartbeat_lost"


def test_heat_without_any_heartbeat_stops_and_fires_once_per_spell():
    m = make()
    m.on_heater(heater(power=2000.0, off=False), 1.0)
    joints(m, 1.0)
    assert m.tick(1.0) is True and m.state == "stopped"  # never a heartbeat, active for 1 s > lease
    assert m.arbiter.episode.trigger == "heartbeat_lost" and "heat" in m.arbiter.episode.detail
    assert m.tick(1.05) is False and triggers(m).count("heartbeat_lost") == 1
    m.on_heater(heater(), 1.2)
    joints(m, 1.2)
    assert m.reset(1.3)[0] and m.state == "armed"  # nothing holds: a kitchen without an executor resets
    joints(m, 1.4, v=0.5)  # motion now, still no executor
    assert m.tick(1.4) is True and m.state == "stopped" and triggers(m).count("heartbeat_lost") == 2


def test_motion_before_the_first_heartbeat_waits_for_the_lease():
    m = make()
    joints(m, 0.1, v=0.5)
    assert m.tick(0.2) is False and m.state == "armed"
    joints(m, 0.31, v=0.5)
    assert m.tick(0.31) is True and m.state == "stopped"


def test_a_live_heartbeat_guards_heat():
    m = make()
    for i in range(10):
        t = 0.1 * i
        m.on_heartbeat(t)
        m.on_heater(heater(power=2000.0, off=False), t)
        joints(m, t, v=0.5)
        assert m.tick(t) is False
    assert m.state == "armed"
    assert m.tick(0.9 + LEASE + 0.01) is True  # the executor stops beating with the hob on


def test_a_goodbye_heartbeat_is_a_clean_exit_not_a_loss():
    m = make()
    for i in range(5):
        m.on_heartbeat(0.1 * i, "/executor")
        assert m.tick(0.1 * i) is False
    m.on_heartbeat(0.45, "/executor", "offline")  # the executor halted what it ran, then said goodbye
    assert m.on_liveliness(False, 0.5) is False  # its liveliness ending next is no loss
    for t in (0.6, 0.9, 1.2, 1.5, 1.8):  # several leases, the plant still reporting at rest
        m.on_heater(heater(), t)
        joints(m, t)
        assert m.tick(t) is False and m.state == "armed", triggers(m)
    m.on_heater(heater(power=2000.0, off=False), 2.0)  # but heat with nobody beating still stops
    joints(m, 2.0)
    assert m.tick(2.0 + LEASE + 0.01) is True and m.state == "stopped"


def test_a_loss_without_goodbye_still_stops():
    m = make()
    m.on_heartbeat(0.0, "/executor")
    assert m.tick(LEASE + 0.01) is True and m.state == "stopped"
    assert "heartbeat_lost" in triggers(m)


def test_expected_executor_in_the_graph_without_heartbeat():
    p = ExecutorPresence("/executor", grace_s=2.0)
    assert p.update(False, 0.0) == []
    assert p.update(True, 1.0) == [] and p.update(True, 2.9) == []
    (finding,) = p.update(True, 3.1)
    assert finding.trigger == "heartbeat_lost" and "/executor" in finding.detail
    assert p.update(True, 5.0) == []  # once per appearance


def test_expected_executor_leaving_before_its_first_heartbeat():
    p = ExecutorPresence("/executor", grace_s=5.0)
    p.update(True, 0.0)
    p.heartbeat("/some/other_node")  # somebody else's heartbeat does not vouch for it
    assert "left the ROS graph" in p.update(False, 0.5)[0].detail
    p.update(True, 1.0)
    p.heartbeat("/executor")
    assert p.update(True, 10.0) == [] and p.update(False, 10.5) == []  # it beat: liveliness covers the rest


def test_monitor_fires_on_the_graph_rule():
    m = make(executor_node="/executor", executor_start_grace_s=1.0)
    assert m.on_executor_graph(True, 0.5) is False
    assert m.on_executor_graph(True, 1.6) is True and m.state == "stopped"
    assert make().on_executor_graph(True, 100.0) is False  # none expected


# -- dead arm driver ------------------------------------------------------------------------
def test_stale_joint_states_stop():
    m = make(joint_state_timeout_s=0.5)
    m.on_heartbeat(0.5)
    m.on_heater(heater(), 0.5)
    assert m.tick(0.5) is False
    m.on_heater(heater(), 0.55)
    assert m.tick(0.55) is True and m.state == "stopped"
    assert m.arbiter.active_triggers == ["stale:joint_states"] and triggers(m) == ["stale:joint_states"]
    joints(m, 0.6)
    assert m.arbiter.active_triggers == []  # fresh again: the condition drops, the stop stays latched
    assert m.state == "stopped"


def test_never_received_joint_states_count_from_activation():
    m = Monitor(effective_pack([]), MonitorConfig(joint_state_timeout_s=0.5))
    m.on_heater(heater(), 0.0)
    m.activate(10.0)
    m.on_heater(heater(), 10.4)
    assert m.tick(10.4) is False
    m.on_heater(heater(), 10.6)
    assert m.tick(10.6) is True and "never received" in m.arbiter.detail_of("stale:joint_states")


# -- nothing re-energises after a stop ------------------------------------------------------
def stopped_and_verified(m: Monitor, t: float = 1.0) -> float:
    m.on_heartbeat(t)
    assert m.on_stop_request("test", "re-energise test", t) is True
    m.on_heater(heater(), t + 0.1)
    joints(m, t + 0.1)
    joints(m, t + 0.1 + STANDSTILL_DWELL_S)  # at rest for the dwell
    assert m.arbiter.episode.verified
    m.outbox.clear()
    return t + 0.1 + STANDSTILL_DWELL_S


def test_heat_after_a_verified_stop_is_a_fault():
    m = make()
    t = stopped_and_verified(m)
    m.on_heartbeat(t)
    assert m.on_heater(heater(power=350.0, off=False), t + 0.05) is True
    assert m.state == "fault" and "reenergised:heat" in m.arbiter.active_triggers
    assert triggers(m) == ["reenergised:heat"] and m.outbox[0].action == "fault"
    assert m.keep_commanding
    assert m.on_heater(heater(power=340.0, off=False), t + 0.1) is False  # one report while it lasts
    assert not m.reset(t + 0.15)[0]
    m.on_heater(heater(), t + 0.2)
    ok, message = m.reset(t + 0.25)
    assert ok and m.state == "armed", message


def test_a_zero_watt_reading_from_before_the_halt_verifies_nothing():
    """A regulating executor had the hob at 0 W when the stop came; its last forwarded heat
    command was already on its way ahead of the monitor's off (stop trials: 3 of 50 faults)."""
    m = make()
    m.on_heartbeat(1.0)
    assert m.on_stop_request("test", "a stop while the hob regulates at 0 W", 1.0) is True
    m.on_heater(heater(power=0.0, off=False), 1.01)  # the state from before the off reached the hob
    assert math.isnan(m.arbiter.episode.heat_off_latency_s)
    assert m.on_heater(heater(power=2000.0, off=False), 1.02) is False  # the command in flight: not a fault
    assert m.state == "stopped"
    m.on_heater(heater(), 1.03)  # the off has arrived: now it is verified
    assert m.arbiter.episode.heat_off_latency_s == pytest.approx(0.03)
    assert m.on_heater(heater(power=350.0, off=False), 1.1) is True  # and heat after that is a fault
    assert "reenergised:heat" in m.arbiter.active_triggers


def test_an_off_from_before_the_halt_then_a_zero_watt_command_is_not_heat_back():
    """The executor's regulation sent off, then a 0 W power command, both forwarded before the stop;
    the off's state verifies the stop, the 0 W state that follows is no heat (stop trials: 1 of 100
    faulted on it), and real power afterwards still is."""
    m = make()
    m.on_heartbeat(1.0)
    assert m.on_stop_request("test", "a stop while the hob regulates", 1.0) is True
    m.on_heater(heater(), 1.01)  # the regulation's off, from before the halt
    assert m.arbiter.episode.heat_off_latency_s == pytest.approx(0.01)
    assert m.on_heater(heater(power=0.0, off=False), 1.02) is False  # its 0 W power command
    assert m.state == "stopped" and not any(t.startswith("reenergised") for t in m.arbiter.active_triggers)
    m.on_heater(heater(), 1.03)  # the halt's off
    assert m.on_heater(heater(power=350.0, off=False), 1.1) is True  # heat back: a fault
    assert m.state == "fault" and "reenergised:heat" in m.arbiter.active_triggers


def test_a_hob_that_names_whom_it_obeys_verifies_the_stop_only_under_the_monitors_off():
    """The regulation's off reached the hob before the stop, an executor ON was still in flight
    behind it, then the halt's off: only the last state (commanded_by the monitor) verifies, so
    the ON in between is the stop landing, not heat coming back (stop trials: 1 of 50 faulted)."""
    import dataclasses

    m = make()
    m.on_heartbeat(1.0)
    assert m.on_stop_request("test", "a stop while the hob regulates", 1.0) is True
    by = lambda reading, obeyed: dataclasses.replace(reading, halt_obeyed=obeyed)  # noqa: E731
    m.on_heater(by(heater(), False), 1.01)  # off and 0 W, but the executor's off
    assert math.isnan(m.arbiter.episode.heat_off_latency_s)
    assert m.on_heater(by(heater(power=2000.0, off=False), False), 1.02) is False  # the ON in flight
    assert m.state == "stopped"
    m.on_heater(by(heater(), True), 1.03)  # the monitor's off obeyed: verified
    assert m.arbiter.episode.heat_off_latency_s == pytest.approx(0.03)
    joints(m, 1.04)  # at rest
    m.on_heater(by(heater(), False), 1.05)  # the executor's own OFF, forwarded while stopped
    assert m.reset(1.06)[0] and m.state == "armed"  # 0 W is 0 W for a reset, whoever's OFF it obeys
    assert m.on_stop_request("test", "again", 1.1) is True
    m.on_heater(by(heater(), True), 1.11)
    assert m.on_heater(by(heater(power=350.0, off=False), False), 1.2) is True  # heat back after that
    assert m.state == "fault" and "reenergised:heat" in m.arbiter.active_triggers


def test_motion_after_a_verified_stop_is_a_fault():
    m = make()
    t = stopped_and_verified(m)
    assert joints(m, t + 0.05, v=0.2) is True
    assert m.state == "fault" and m.arbiter.active_triggers == ["reenergised:motion"]


def test_heat_before_the_stop_is_verified_is_not_a_fault():
    m = make()
    m.on_heartbeat(1.0)
    m.on_stop_request("test", "", 1.0)
    assert m.on_heater(heater(power=2000.0, off=False), 1.05) is False  # the halt has not landed yet
    assert m.state == "stopped"


def test_no_reenergise_rule_while_armed():
    m = make()
    m.on_heartbeat(0.1)
    m.on_heater(heater(power=2000.0, off=False), 0.1)
    joints(m, 0.1, v=0.5)
    assert m.state == "armed"


# -- the exit halt --------------------------------------------------------------------------
def test_halted_since_needs_fresh_readings_of_both():
    m = make()
    m.on_heater(heater(power=500.0, off=False), 1.0)
    assert not m.halted_since(0.5)
    m.on_heater(heater(), 1.1)
    assert not m.halted_since(1.05)  # joint states not read since
    joints(m, 1.2, v=0.3)
    assert not m.halted_since(1.05)
    joints(m, 1.3)
    assert m.halted_since(1.05) and not m.halted_since(1.25)


# -- the persisted latch --------------------------------------------------------------------
def test_latch_file_round_trip_is_atomic(tmp_path):
    assert latch_file.read(tmp_path) is None
    latch_file.write(tmp_path, latch_file.Latch("stopped", "estop", "button", ["estop"], "2026-01-01T00:00:00Z"))
    latch_file.write(tmp_path, latch_file.Latch("fault", "estop", "button; fault", ["estop"], "2026-01-01T00:00:01Z"))
    assert os.listdir(tmp_path) == [latch_file.LATCH_FILE]  # no temp file left behind
    found = latch_file.read(tmp_path)
    assert (found.state, found.trigger, found.reason, found.triggers, found.corrupt) == (
        "fault", "estop", "button; fault", ["estop"], False)
    latch_file.clear(tmp_path)
    assert latch_file.read(tmp_path) is None
    latch_file.clear(tmp_path)  # clearing twice is fine


@pytest.mark.parametrize("text", ["", "{", "[]", '{"state": "stopped"}', "\x00\x01"])
def test_a_corrupt_latch_file_is_a_latch(tmp_path, text):
    (tmp_path / latch_file.LATCH_FILE).write_text(text)
    found = latch_file.read(tmp_path)
    assert found is not None and found.corrupt and "corrupt" in found.reason


def test_monitor_comes_up_stopped_with_a_persisted_latch():
    m = Monitor(effective_pack([]), MonitorConfig())
    m.on_heater(heater(), 0.0)
    joints(m, 0.0)
    assert m.activate(0.0, latched_reason="estop: button") is True
    assert m.state == "stopped" and m.arbiter.episode.trigger == "latched_before_restart"
    assert triggers(m) == ["latched_before_restart"]
    m.on_heater(heater(), 0.1)
    joints(m, 0.1)
    ok, message = m.reset(0.2)  # a momentary trigger: a local reset re-arms as usual
    assert ok and m.state == "armed", message


# -- the stop-input node's arguments --------------------------------------------------------
def test_stop_inputs_take_topic_remaps_only():
    argv = ["safety_monitor", "--ros-args", "-r", "__node:=my_monitor", "-p", "use_sim_time:=true",
            "-r", "/cookwala/estop:=/kitchen/estop", "--remap", "__ns:=/robot1", "-r", "other:/a:=/b",
            "--params-file", "x.yaml", "--", "-r", "/ignored:=/x"]
    assert stop_input_args(argv) == ["--ros-args", "-r", "/cookwala/estop:=/kitchen/estop"]
    assert stop_input_args(["safety_monitor"]) == []
    assert json.dumps(stop_input_args(None)) == "[]"


def test_the_shipped_device_file_lists_every_monitor_setting_with_its_default(repo_root):
    """The device file's safety_monitor: section is the monitor's parameter file: every parameter
    not taken from the robot's shared sections (id, packs, URDF) is there with its default."""
    import yaml

    from cookwala_ros.ros.safety_monitor_params import SPECS

    shipped = yaml.safe_load((repo_root / "config" / "device.yaml").read_text())["safety_monitor"]
    shared = {"device_file", "device_id", "device_packs", "urdf_path"}
    assert {k: v for k, v in shipped.items() if k != "estop_topic"} == {
        spec.name: spec.default for spec in SPECS if spec.name not in shared}
    for spec in SPECS:
        assert spec.problem(spec.default) is None, spec.name


def test_the_status_says_whether_the_executor_is_heard():
    m = make()
    assert m.heartbeat_label(0.0) == "none"
    m.on_heartbeat(1.0, "/executor", "idle")
    assert m.heartbeat_label(1.0 + LEASE - 0.01) == "live"
    assert m.heartbeat_label(1.0 + LEASE + 0.01) == "lapsed"
    m.on_heartbeat(2.0, "/executor", "idle")
    m.on_liveliness(False, 2.05)
    assert m.heartbeat_label(2.05) == "lapsed"  # its liveliness lease expired: not live, however recent
    m.on_heartbeat(3.0, "/executor", "offline")
    assert m.heartbeat_label(3.0) == "none"  # a goodbye: nobody guards, and nothing was lost
