"""Stop arbitration with injected steady-clock times."""

import math

from cookwala_ros.safety.arbiter import STANDSTILL_DWELL_S, ARMED, FAULT, STOPPED, UNCONFIGURED, Arbiter


def armed(now=0.0):
    arbiter = Arbiter(motion_deadline_s=0.5, heat_deadline_s=1.0)
    assert arbiter.state == UNCONFIGURED
    assert arbiter.activate(now) is False
    assert arbiter.state == ARMED
    return arbiter


def test_unconfigured_never_stops():
    arbiter = Arbiter()
    assert arbiter.fire("estop", "pressed", 1.0) is False and arbiter.state == UNCONFIGURED


def test_trigger_stop_verify_and_reset():
    a = armed()
    assert a.fire("stop_request", "test", 10.0) is True
    assert a.state == STOPPED and a.episode.trigger == "stop_request"
    a.halt_sent(10.002)
    a.observe_motion(False, 10.1)
    a.observe_motion(True, 10.3)
    a.observe_heat(True, 10.4)
    a.tick(11.5)
    assert a.state == STOPPED
    assert math.isclose(a.episode.halt_latency_s, 0.002, abs_tol=1e-9)
    assert math.isclose(a.episode.standstill_latency_s, 0.3) and math.isclose(a.episode.heat_off_latency_s, 0.4)
    assert a.reset(12.0) == (True, "armed") and a.state == ARMED
    assert a.reset(12.1) == (True, "already armed")


def test_reset_refused_while_a_condition_holds_or_not_halted():
    a = armed()
    assert a.set_conditions("estop", {"estop": "pressed"}, 1.0) is True
    a.observe_motion(True, 1.1)
    a.observe_heat(True, 1.1)
    ok, message = a.reset(2.0)
    assert not ok and "estop" in message and a.state == STOPPED
    assert a.set_conditions("estop", {}, 2.1) is False  # released: the stop stays latched
    assert a.state == STOPPED
    a.observe_heat(False, 2.2)  # someone turned the heater back on
    ok, message = a.reset(2.3)
    assert not ok and "heater" in message
    a.observe_heat(True, 2.4)
    assert a.reset(2.5)[0] and a.state == ARMED


def test_missed_deadlines_escalate_to_fault_and_keep_commanding():
    a = armed()
    a.fire("estop", "pressed", 5.0)
    a.observe_motion(True, 5.2)
    assert a.tick(5.9) is True and a.state == STOPPED
    assert a.tick(6.01) is True and a.state == FAULT
    assert a.fault_reasons == ["heater not at 0 W within 1 s"]
    assert a.tick(60.0) is True and a.state == FAULT  # keeps commanding, never gives up
    a.observe_heat(True, 61.0)
    assert math.isclose(a.episode.heat_off_latency_s, 56.0)  # measured even when late
    assert a.reset(62.0)[0] and a.state == ARMED


def test_standstill_deadline():
    a = armed()
    a.fire("estop", "pressed", 0.0)
    a.observe_heat(True, 0.1)
    a.tick(0.49)
    assert a.state == STOPPED
    a.tick(0.51)
    assert a.state == FAULT and "standstill" in a.fault_reasons[0]


def test_fault_condition_from_armed_and_second_trigger_keeps_episode():
    a = armed()
    assert a.set_conditions("relay/fault", {"heater_fault:relay_welded": "welded"}, 3.0, fault=True) is True
    assert a.state == FAULT and a.episode.started_at == 3.0
    assert a.fire("estop", "pressed", 3.5) is True
    assert a.episode.trigger == "heater_fault:relay_welded"
    a.observe_motion(True, 4.0)
    a.observe_heat(True, 4.0)
    assert not a.reset(4.1)[0]  # the relay condition still holds
    a.set_conditions("relay/fault", {}, 4.2, fault=True)
    assert a.reset(4.3)[0]


def test_activate_with_a_condition_already_holding_stops_at_once():
    a = Arbiter()
    a.set_conditions("estop", {"estop": "pressed"}, 0.0)
    assert a.state == UNCONFIGURED
    assert a.activate(1.0) is True and a.state == STOPPED and a.episode.trigger == "estop"
    a.deactivate()
    assert a.state == UNCONFIGURED


def test_passing_through_zero_speed_is_not_standstill():
    """An arm reversing onto its hold point, or at rest between two legs when the next leg's
    command was already in flight, is still for an instant: standstill needs the dwell."""
    a = armed()
    a.fire("estop", "pressed", 1.0)
    a.halt_sent(1.001)
    a.observe_motion(True, 1.01)  # the turning point
    a.observe_motion(False, 1.02)  # moving again: not yet at rest, and no re-energising either
    assert math.isnan(a.episode.standstill_latency_s) and a.reenergised() == {}
    a.observe_motion(True, 1.2)
    a.observe_motion(True, 1.2 + STANDSTILL_DWELL_S / 2)
    assert math.isnan(a.episode.standstill_latency_s)
    a.observe_motion(True, 1.2 + STANDSTILL_DWELL_S)
    assert math.isclose(a.episode.standstill_latency_s, 0.2)  # from the start of the still spell
    a.observe_motion(False, 1.5)
    assert "reenergised:motion" in a.reenergised()  # motion after a verified standstill


def test_still_before_the_halt_counts_from_the_halt():
    a = armed()
    a.observe_motion(True, 0.5)  # resting at a pose when the stop comes
    a.fire("stop_request", "test", 1.0)
    a.halt_sent(1.002)
    a.observe_motion(True, 1.01)  # a stop needs fresh readings: the still spell starts here
    assert math.isnan(a.episode.standstill_latency_s)  # at rest, but not yet for the dwell under the halt
    a.tick(1.01 + STANDSTILL_DWELL_S)
    assert math.isclose(a.episode.standstill_latency_s, 0.01, abs_tol=1e-9)
