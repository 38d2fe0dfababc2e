"""heater_sim over real topics: commands in, HeaterState and temperatures out."""

from __future__ import annotations

import math
import time

import pytest
from rclpy.parameter import Parameter
from sensor_msgs.msg import Temperature

from cookwala_msgs.msg import HeaterCommand, HeaterState
from cookwala_ros.ros import qos
from cookwala_ros.ros.heater_sim_node import HeaterSimNode
from cookwala_ros.ros.params import ParameterError
from heater_keepalive import KeepAlive
from ros_helpers import RosHarness


def command(mode, power_w=0.0, setpoint_c=0.0):
    msg = HeaterCommand()
    msg.mode, msg.power_w, msg.setpoint_c, msg.source = mode, float(power_w), float(setpoint_c), "test"
    return msg


@pytest.fixture
def hob():
    # one state a minute on its own: anything faster than that is the command taking effect at once
    with RosHarness() as ros:
        node = ros.add(HeaterSimNode(context=ros.context, parameter_overrides=[Parameter("publish_rate_hz", value=1 / 60)]))
        probe = ros.node("heater_probe")
        states = ros.collect(probe, HeaterState, "/heater/state")
        medium = ros.collect(probe, Temperature, "/heater/medium_temperature")
        pan = ros.collect(probe, Temperature, "/heater/pan_temperature")
        commands = probe.create_publisher(HeaterCommand, "/heater/command", qos.command())
        assert ros.wait_for_subscribers(commands)
        assert ros.wait_for(lambda: node._state_pub.get_subscription_count() >= 1)
        yield ros, node, commands, states, medium, pan


def send(ros, commands, states, msg, until, timeout=2.0):
    before = len(states)
    start = time.monotonic()
    commands.publish(msg)
    assert ros.wait_for(lambda: any(until(s) for s in states[before:]), timeout=timeout)
    return time.monotonic() - start


@pytest.fixture
def ticking_hob():
    """The hob at its default state rate (10 Hz) and dead-man (0.5 s)."""
    with RosHarness() as ros:
        node = ros.add(HeaterSimNode(context=ros.context))
        probe = ros.node("heater_probe")
        states = []
        probe.create_subscription(HeaterState, "/heater/state", lambda m: states.append((time.monotonic(), m)),
                                  qos.sensor())
        commands = probe.create_publisher(HeaterCommand, "/heater/command", qos.command())
        assert ros.wait_for_subscribers(commands)
        assert ros.wait_for(lambda: states)
        yield ros, node, commands, states


def test_the_dead_man_cuts_heat_when_commands_stop(ticking_hob):
    ros, node, commands, states = ticking_hob
    timeout_s = node.get_parameter("command_timeout_s").value
    assert timeout_s == 0.5
    period_s = 1.0 / node.get_parameter("publish_rate_hz").value
    assert node._dead_man_timer.is_canceled()  # off: nothing to cut, so no check 20 times a second
    sent = time.monotonic()
    commands.publish(command(HeaterCommand.MODE_POWER, 1500.0))  # and then nothing: the sender died
    assert ros.wait_for(lambda: any(s.power_w == 1500.0 for _, s in states), timeout=2.0)
    assert not node._dead_man_timer.is_canceled()  # heating: the dead-man watches
    on_at = next(t for t, s in states if s.power_w == 1500.0)
    assert ros.wait_for(lambda: any(t > on_at and s.power_w == 0.0 for t, s in states), timeout=5.0)
    cut_at, cut = next((t, s) for t, s in states if t > on_at and s.power_w == 0.0)
    assert cut_at - sent <= timeout_s + period_s, f"0 W only {cut_at - sent:.3f} s after the last command"
    assert cut_at - sent >= timeout_s * 0.9  # not before its time either
    assert not cut.on and cut.commanded_mode == HeaterCommand.MODE_OFF
    assert cut.fault == HeaterState.FAULT_NONE and "dead-man" in cut.fault_detail
    time.sleep(1.0)
    assert node.dead_man_cuts == 1  # one cut, logged once
    assert node._dead_man_timer.is_canceled()  # off again: asleep until the next heat command
    assert all(s.power_w == 0.0 for t, s in states if t > cut_at)
    # a fresh command heats again and clears the note
    commands.publish(command(HeaterCommand.MODE_POWER, 800.0))
    assert ros.wait_for(lambda: states[-1][1].power_w == 800.0 and not states[-1][1].fault_detail, timeout=2.0)


def test_a_command_every_tenth_of_a_second_keeps_it_on(ticking_hob):
    ros, node, commands, states = ticking_hob
    with KeepAlive(commands, command(HeaterCommand.MODE_POWER, 1500.0)):
        assert ros.wait_for(lambda: states[-1][1].power_w == 1500.0, timeout=2.0)
        start = time.monotonic()
        time.sleep(4 * node.get_parameter("command_timeout_s").value)
        during = [s for t, s in states if t > start]
    assert during and all(s.power_w == 1500.0 for s in during)
    assert node.dead_man_cuts == 0


def test_command_timeout_zero_disables_the_dead_man():
    with RosHarness() as ros:
        node = ros.add(HeaterSimNode(context=ros.context, parameter_overrides=[Parameter("command_timeout_s", value=0.0)]))
        probe = ros.node("heater_probe")
        states = ros.collect(probe, HeaterState, "/heater/state")
        commands = probe.create_publisher(HeaterCommand, "/heater/command", qos.command())
        assert ros.wait_for_subscribers(commands)
        commands.publish(command(HeaterCommand.MODE_POWER, 1500.0))
        assert ros.wait_for(lambda: states and states[-1].power_w == 1500.0, timeout=2.0)
        time.sleep(1.0)
        assert states[-1].power_w == 1500.0 and node.dead_man_cuts == 0


def test_off_is_reflected_in_the_state_at_once(hob):
    ros, node, commands, states, medium, pan = hob
    send(ros, commands, states, command(HeaterCommand.MODE_POWER, 1500.0), lambda s: s.on and s.power_w == 1500.0)
    state = states[-1]
    assert state.commanded_mode == HeaterCommand.MODE_POWER and state.medium == "water"
    assert state.medium_mass_kg == 1.0 and state.fault == HeaterState.FAULT_NONE
    elapsed = send(ros, commands, states, command(HeaterCommand.MODE_OFF), lambda s: not s.on and s.power_w == 0.0)
    assert elapsed < 1.0  # the next periodic state is a minute away
    assert states[-1].commanded_mode == HeaterCommand.MODE_OFF


def test_welded_relay_keeps_power_on_after_off_and_reports_it(hob):
    ros, node, commands, states, medium, pan = hob
    send(ros, commands, states, command(HeaterCommand.MODE_POWER, 1200.0), lambda s: s.power_w == 1200.0)
    assert node.set_parameters([Parameter("fault.relay_welded", value=True)])[0].successful
    send(ros, commands, states, command(HeaterCommand.MODE_OFF), lambda s: s.commanded_mode == HeaterCommand.MODE_OFF)
    state = states[-1]
    assert state.on and state.power_w == 1200.0
    assert state.fault == HeaterState.FAULT_RELAY_WELDED and "1200 W" in state.fault_detail


def test_temperatures_are_published_and_a_disconnected_sensor_reads_nan(hob):
    ros, node, commands, states, medium, pan = hob
    send(ros, commands, states, command(HeaterCommand.MODE_OFF), lambda s: True)
    assert ros.wait_for(lambda: medium and pan)
    assert medium[-1].temperature == pytest.approx(20.0) and medium[-1].header.frame_id == "pan_link"
    refused = node.set_parameters([Parameter("fault.medium_sensor", value="unplugged")])
    assert not refused[0].successful and "fault.medium_sensor" in refused[0].reason
    before = len(medium)
    assert node.set_parameters([Parameter("fault.medium_sensor", value="disconnected")])[0].successful
    assert ros.wait_for(lambda: len(medium) > before and states)
    assert math.isnan(medium[-1].temperature) and not math.isnan(pan[-1].temperature)
    state = states[-1]
    assert not state.medium_sensor_ok and state.pan_sensor_ok and math.isnan(state.medium_temp_c)
    assert state.fault == HeaterState.FAULT_SENSOR_DISCONNECTED


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ({"medium": "soup"}, "medium"),
        ({"medium_mass_kg": -1.0}, "medium_mass_kg"),
        ({"initial_temp_c": 120.0}, "initial_temp_c"),  # water above its boiling point
        ({"heat_source": "candle"}, "heat_source"),
        ({"fault.pan_sensor": "melted"}, "fault.pan_sensor"),
        ({"max_power_w": "lots"}, "max_power_w"),
    ],
)
def test_bad_parameters_stop_the_node_naming_the_parameter(overrides, expected):
    with RosHarness() as ros:
        params = [Parameter(k, value=v) for k, v in overrides.items()]
        with pytest.raises(ParameterError, match=f"parameter '{expected}'"):
            HeaterSimNode(context=ros.context, parameter_overrides=params)


def test_integer_override_is_accepted_for_a_float_parameter():
    with RosHarness() as ros:
        node = ros.add(HeaterSimNode(context=ros.context, parameter_overrides=[Parameter("medium_mass_kg", value=2)]))
        assert node.heater.thermal.medium_mass_kg == 2.0


def test_pot_contents_change_at_run_time_and_bad_values_are_refused(hob):
    ros, node, commands, states, medium, pan = hob
    with KeepAlive(commands, command(HeaterCommand.MODE_POWER, 1000.0)):  # it stays on while the contents change
        assert ros.wait_for(lambda: states and states[-1].power_w == 1000.0, timeout=2.0)
        node.heater.thermal.pan_c = 150.0  # a hot pan, as after a warm-up
        before = len(states)
        # as the executor sends it: SetParametersAtomically, one change of contents
        assert node.set_parameters_atomically([Parameter("medium", value="oil"), Parameter("medium_mass_kg", value=0.3),
                                               Parameter("lid", value=True)]).successful
        assert ros.wait_for(lambda: any(s.medium == "oil" for s in states[before:]), timeout=2.0)
        state = next(s for s in states[before:] if s.medium == "oil")
        assert state.medium_mass_kg == pytest.approx(0.3) and state.power_w == 1000.0
        assert state.pan_surface_temp_c > 140.0 and state.medium_temp_c < 30.0  # hot pan, fresh oil
        assert node.heater.thermal.config.lid
        for name, value in (("medium", "soup"), ("medium_mass_kg", 0.0), ("medium_mass_kg", 60.0)):
            (result,) = node.set_parameters([Parameter(name, value=value)])
            assert not result.successful and name in result.reason, (name, value, result.reason)
        assert not node.set_parameters([Parameter("medium_mass_kg", value="heavy")])[0].successful  # rclpy's type check
        assert node.heater.thermal.config.medium == "oil" and node.heater.thermal.medium_mass_kg == pytest.approx(0.3)


def _from(source, mode, power_w=0.0):
    msg = command(mode, power_w)
    msg.source = source
    return msg


def test_an_off_from_the_safety_monitor_has_priority_while_it_is_renewed(ticking_hob):
    """A heat command another node computed before it heard of the stop cannot bring heat back."""
    ros, node, commands, states = ticking_hob
    hold_s = node.get_parameter("safety_hold_s").value
    assert hold_s == 0.3
    commands.publish(_from("executor", HeaterCommand.MODE_POWER, 1200.0))
    assert ros.wait_for(lambda: any(s.power_w == 1200.0 for _, s in states), timeout=2.0)
    commands.publish(_from("safety_monitor", HeaterCommand.MODE_OFF))
    off_at = time.monotonic()
    assert ros.wait_for(lambda: any(t > off_at and s.power_w == 0.0 for t, s in states), timeout=2.0)
    for _ in range(5):  # the monitor re-sends its OFF; each time the executor's late heat command follows it
        ignored = node.ignored_during_hold
        commands.publish(_from("safety_monitor", HeaterCommand.MODE_OFF))
        commands.publish(_from("executor", HeaterCommand.MODE_POWER, 2000.0))
        assert ros.wait_for(lambda: node.ignored_during_hold > ignored, timeout=2.0), "a heat command got through the hold"
        time.sleep(0.1)
    zero_at = next(t for t, s in states if t > off_at and s.power_w == 0.0)
    settled = [s for t, s in states if t > zero_at]
    assert settled and all(s.power_w == 0.0 for s in settled), [s.power_w for s in settled]
    time.sleep(hold_s + 0.1)  # reset: the monitor no longer sends; the hold ends by itself
    commands.publish(_from("executor", HeaterCommand.MODE_POWER, 800.0))
    assert ros.wait_for(lambda: any(s.power_w == 800.0 for _, s in states), timeout=2.0)


def test_safety_hold_zero_disables_the_priority():
    with RosHarness() as ros:
        node = ros.add(HeaterSimNode(context=ros.context, parameter_overrides=[Parameter("safety_hold_s", value=0.0)]))
        probe = ros.node("heater_probe")
        states = []
        probe.create_subscription(HeaterState, "/heater/state", lambda m: states.append(m), qos.sensor())
        commands = probe.create_publisher(HeaterCommand, "/heater/command", qos.command())
        assert ros.wait_for_subscribers(commands)
        commands.publish(_from("safety_monitor", HeaterCommand.MODE_OFF))
        commands.publish(_from("executor", HeaterCommand.MODE_POWER, 700.0))
        assert ros.wait_for(lambda: any(s.power_w == 700.0 for s in states), timeout=2.0)
        assert node.ignored_during_hold == 0


def test_commands_that_arrived_while_the_hob_did_not_run_are_not_silence():
    """rclpy runs a wait's ready timers before its ready subscriptions: a hob process that did not
    run for longer than its dead-man used to wake into the dead-man and cut a commander that never
    went quiet (ros/pending.py). Held still here for longer than its dead-man by spinning it by hand;
    the dead-man is 2 s, so a keep-alive thread that a loaded host holds up for a moment is not
    silence of its own."""
    from rclpy.executors import SingleThreadedExecutor

    with RosHarness(threads=1) as ros:
        node = HeaterSimNode(context=ros.context, parameter_overrides=[Parameter("command_timeout_s", value=2.0)])
        hob = SingleThreadedExecutor(context=ros.context)
        hob.add_node(node)
        try:
            probe = ros.node("heater_probe")
            commands = probe.create_publisher(HeaterCommand, "/heater/command", qos.command())
            assert ros.wait_for_subscribers(commands)
            with KeepAlive(commands, command(HeaterCommand.MODE_POWER, 1500.0)):
                end = time.monotonic() + 5.0
                while node.heater.snapshot().power_w != 1500.0:
                    assert time.monotonic() < end, "the hob never heated"
                    hob.spin_once(timeout_sec=0.01)
                time.sleep(2.5)  # the hob's thread does not run; commands keep coming every 0.1 s
                end = time.monotonic() + 0.3
                while time.monotonic() < end:
                    hob.spin_once(timeout_sec=0.01)
            assert node.dead_man_cuts == 0
            assert node.heater.snapshot().power_w == 1500.0
        finally:
            hob.shutdown(timeout_sec=1.0)
            node.destroy_node()
