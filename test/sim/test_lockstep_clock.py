"""sim_clock in lock-step: /clock waits for every participant, drops the silent ones, and a
simulated hob stepped by it gives the same physics as stepping the model directly."""

from __future__ import annotations

import time

import pytest
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock

from cookwala_msgs.msg import HeaterCommand
from cookwala_ros.ros import qos
from cookwala_ros.ros.heater_sim_node import HeaterSimNode
from cookwala_ros.ros.lockstep import StepParticipant
from cookwala_ros.ros.params import ParameterError
from cookwala_ros.ros.sim_clock_node import SimClockNode
from cookwala_ros.sim.heater import HeaterMode, SimHeater
from cookwala_ros.sim.thermal_model import ThermalConfig, ThermalModel
from lockstep_commander import LockstepCommander, stamp_ns
from ros_helpers import RosHarness

START_S = 1000.0
STEP_NS = 100_000_000


def clock_ns(msg) -> int:
    return msg.clock.sec * 1_000_000_000 + msg.clock.nanosec


def lockstep_clock(ros, factor=1000.0, grace_s=30.0, step_s=0.1, expect="") -> SimClockNode:
    return ros.add(SimClockNode(context=ros.context, parameter_overrides=[
        Parameter("clock_mode", value="lockstep"),
        Parameter("lockstep_expect", value=expect),
        Parameter("real_time_factor", value=factor),
        Parameter("lockstep_step_s", value=step_s),
        Parameter("lockstep_grace_s", value=grace_s),
        Parameter("start_from_wall_clock", value=False),
        Parameter("start_time_s", value=START_S),
    ]))


class Held:
    """A participant that finishes a step only when the test says so."""

    def __init__(self, ros, name="held"):
        self.node = ros.node(name)
        self.steps: list[int] = []
        self.participant = StepParticipant(self.node, self._on_step)

    def _on_step(self, t_ns: int) -> bool:
        self.steps.append(t_ns)
        return False


def test_the_clock_waits_for_a_participant_and_steps_exactly_once_it_finished():
    with RosHarness() as ros:
        held = Held(ros)
        clock = lockstep_clock(ros)
        assert ros.wait_for(lambda: held.steps, timeout=10.0)
        first = held.steps[0]
        time.sleep(0.5)  # 500 steps' worth at the ceiling: none may go out while it has not finished
        assert held.steps == [first] and clock.t_ns == first
        for k in range(1, 6):
            held.participant.finish()
            assert ros.wait_for(lambda: len(held.steps) == k + 1, timeout=10.0)
        assert held.steps == [first + k * STEP_NS for k in range(6)]  # exact steps, none skipped
        assert (first - int(START_S * 1e9)) % STEP_NS == 0
        assert clock.gate.dropped == []


def test_a_silent_participant_is_dropped_after_the_grace_and_counted_again_when_it_reports():
    with RosHarness() as ros:
        held = Held(ros, "silent")
        ticks = []
        ros.node("tick_probe").create_subscription(Clock, "/clock", lambda m: ticks.append(clock_ns(m)),
                                                   qos.sensor(depth=10000))
        clock = lockstep_clock(ros, grace_s=0.3)
        assert ros.wait_for(lambda: clock.gate.dropped == [held.participant.name], timeout=10.0)
        dropped_at = held.steps[0]
        assert ros.wait_for(lambda: clock.t_ns > dropped_at + 10 * STEP_NS, timeout=10.0)  # it goes on
        held.participant.finish()  # back: from now on the clock waits for it again
        assert ros.wait_for(lambda: held.participant.name in clock.gate.members, timeout=10.0)
        assert ros.wait_for(lambda: clock.gate.dropped == [held.participant.name] * 2, timeout=10.0)
        stamps = sorted(set(ticks))
        assert all(b - a == STEP_NS for a, b in zip(stamps, stamps[1:]))  # never a skipped or partial step


def test_a_participant_that_leaves_is_not_waited_for():
    with RosHarness() as ros:
        held = Held(ros, "leaving")
        clock = lockstep_clock(ros, grace_s=600.0)
        assert ros.wait_for(lambda: held.steps and held.participant.name in clock.gate.members, timeout=10.0)
        stuck_at = clock.t_ns
        held.participant.leave()
        assert ros.wait_for(lambda: clock.t_ns >= stuck_at + 10 * STEP_NS, timeout=10.0)
        assert clock.gate.members == [] and clock.gate.dropped == []


def test_the_real_time_factor_is_a_ceiling():
    with RosHarness() as ros:
        StepParticipant(ros.node("eager"), lambda t_ns: None)  # finishes every step at once
        clock = lockstep_clock(ros, factor=10.0)
        assert ros.wait_for(lambda: clock.steps > 0, timeout=10.0)
        t0, w0 = clock.t_ns, time.monotonic()
        time.sleep(1.0)
        t1, w1 = clock.t_ns, time.monotonic()
        assert t1 > t0
        assert (t1 - t0) * 1e-9 <= 10.0 * (w1 - w0) + 0.1  # delays only slow it; it never runs ahead


def test_the_first_step_waits_for_the_expected_participants():
    with RosHarness() as ros:
        early = Held(ros, "early")
        clock = ros.add(SimClockNode(context=ros.context, parameter_overrides=[
            Parameter("clock_mode", value="lockstep"), Parameter("real_time_factor", value=1000.0),
            Parameter("lockstep_expect", value="early, late"), Parameter("lockstep_grace_s", value=30.0)]))
        assert ros.wait_for(lambda: early.steps, timeout=10.0)
        early.participant.finish()
        time.sleep(0.3)
        assert clock.steps == 0 and len(early.steps) == 1  # /late has not joined: nothing moves
        late = Held(ros, "late")
        assert ros.wait_for(lambda: late.steps, timeout=10.0)
        late.participant.finish()
        assert ros.wait_for(lambda: clock.steps == 1 and len(early.steps) == 2, timeout=10.0)


def test_a_lockstep_hob_gives_the_physics_of_the_model_stepped_directly():
    with RosHarness() as ros:
        ros.add(HeaterSimNode(context=ros.context, parameter_overrides=[
            Parameter("use_sim_time", value=True), Parameter("clock_mode", value="lockstep"),
            Parameter("medium", value="water"), Parameter("medium_mass_kg", value=1.0)]))

        def command_for(t_ns, state):  # 1500 W for 200 steps (20 sim s), then off
            heating = [t for t, c in commander.sent if c.mode == HeaterCommand.MODE_POWER]
            if len(heating) < 200:
                return HeaterCommand(mode=HeaterCommand.MODE_POWER, power_w=1500.0, source="test")
            return HeaterCommand(mode=HeaterCommand.MODE_OFF, source="test")

        commander = LockstepCommander(ros.node("commander"), command_for)
        assert ros.wait_for_subscribers(commander.publisher)
        lockstep_clock(ros, expect="heater_sim,commander")
        assert ros.wait_for(lambda: len(commander.sent) >= 205, timeout=60.0)
        first_on = next(t for t, c in commander.sent if c.mode == HeaterCommand.MODE_POWER)
        off_at = next(t for t, c in commander.sent if c.mode == HeaterCommand.MODE_OFF)
        assert off_at - first_on == 200 * STEP_NS
        by_stamp = {}  # each step's first state: the hob at T, before that step's command
        for state in commander.states:
            by_stamp.setdefault(stamp_ns(state), state)
        before, after = by_stamp[first_on], by_stamp[off_at]
        assert before.medium_temp_c == pytest.approx(20.0, abs=0.01) and after.power_w == pytest.approx(1500.0)
        assert all((t - int(START_S * 1e9)) % STEP_NS == 0 for t in by_stamp)  # stamped with the step's time
        reference = SimHeater(ThermalModel(ThermalConfig(medium="water", medium_mass_kg=1.0)))
        reference.command(HeaterMode.POWER, power_w=1500.0)
        reference.step(20.0)
        assert after.medium_temp_c == pytest.approx(reference.thermal.medium_c, abs=1e-6)
        assert after.pan_surface_temp_c == pytest.approx(reference.thermal.pan_c, abs=1e-6)


def test_a_bad_clock_mode_stops_the_node_naming_the_parameter():
    with RosHarness() as ros:
        with pytest.raises(ParameterError, match="parameter 'clock_mode'"):
            SimClockNode(context=ros.context, parameter_overrides=[Parameter("clock_mode", value="lockstepp")])


def test_an_idle_participant_is_stepped_every_idle_step_and_a_wake_brings_the_fine_steps_back():
    from cookwala_ros.ros.lockstep import IDLE_STEP_S

    with RosHarness() as ros:
        node = ros.node("idler")
        idle = [True]
        steps: list[int] = []
        participant = StepParticipant(node, steps.append, idle=lambda: idle[0])
        clock = lockstep_clock(ros, factor=1000.0)
        assert ros.wait_for(lambda: len(steps) >= 4, timeout=20.0)
        idle_ns = int(IDLE_STEP_S * 1e9)
        gaps = {b - a for a, b in zip(steps[1:], steps[2:])}
        assert gaps == {idle_ns}, gaps  # asleep between wakes: one step per IDLE_STEP_S, none finer
        time.sleep(0.3)  # at the ceiling that is 3,000 fine steps' worth: the clock sleeps with it
        assert len({b - a for a, b in zip(steps[1:], steps[2:])}) == 1
        idle[0] = False
        participant.wake()
        t_woken = steps[-1]
        assert ros.wait_for(lambda: len([t for t in steps if t > t_woken]) >= 3, timeout=20.0)
        after = [t for t in steps if t > t_woken]
        assert after[1] - after[0] == STEP_NS and after[2] - after[1] == STEP_NS  # every step again
        assert clock.gate.dropped == []


def stepped_after_a_command(ros, sim, state_topic, state_type, command_topic, command, active, stamp) -> list[int]:
    """`sim` alone on a lock-step clock falls asleep (idle steps only); then `command(sim)` is sent.
    Returns the stamps of the states in which `active` holds, from then until the idle wake."""
    from cookwala_ros.ros.lockstep import IDLE_STEP_S

    states: list = []
    probe = ros.node("probe")
    probe.create_subscription(state_type, state_topic, states.append, qos.sensor(depth=10000))
    message = command(sim)
    publisher = probe.create_publisher(type(message), command_topic, qos.command())
    clock = lockstep_clock(ros, factor=20.0)  # an idle step of 5 s is 0.25 s of wall time here
    assert ros.wait_for(lambda: sim.stepper.steps >= 3, timeout=20.0)  # asleep: idle steps only
    assert ros.wait_for(lambda: publisher.get_subscription_count() > 0, timeout=10.0)
    before = clock.t_ns
    publisher.publish(command(sim))
    assert ros.wait_for(lambda: clock.t_ns >= before + int(IDLE_STEP_S * 1e9), timeout=20.0)
    sim.close()  # leaves the clock, as the node does on a clean shutdown
    return sorted({stamp(m) for m in list(states) if stamp(m) > before and active(m)})


def test_a_trajectory_to_a_resting_arm_brings_the_fine_steps_back_at_once():
    """A resting lock-step arm asks to be stepped IDLE_STEP_S from now; a trajectory that arrives
    meanwhile (nobody else busy: no cook, a person driving the arm) moves it from the next step
    on, in fine steps, not in one jump seconds later."""
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from cookwala_ros.ros.arm_sim_node import ArmSimNode
    from cookwala_ros.ros.lockstep import time_ns

    def nudge(arm) -> JointTrajectory:  # the first joint 0.3 rad on, in 1 s
        point = JointTrajectoryPoint(positions=[float(q) + (0.3 if i == 0 else 0.0)
                                                for i, q in enumerate(arm.model.measured().positions)])
        point.time_from_start.sec = 1
        return JointTrajectory(joint_names=list(arm.arm.joint_names), points=[point])

    with RosHarness() as ros:
        arm = ros.add(ArmSimNode(context=ros.context, parameter_overrides=[
            Parameter("use_sim_time", value=True), Parameter("clock_mode", value="lockstep")]))
        moving = stepped_after_a_command(ros, arm, "/joint_states", JointState, "/arm_controller/joint_trajectory",
                                         nudge, lambda m: max(abs(v) for v in m.velocity) > 0.01,
                                         lambda m: time_ns(m.header.stamp))
        assert len(moving) >= 5, moving  # stepped through the motion, not one jump at the idle wake
        assert all(b - a == STEP_NS for a, b in zip(moving, moving[1:4])), moving[:5]


@pytest.mark.parametrize("stall_s", [0.1, 0.0])
def test_a_lockstep_arm_never_moves_slower_than_real_time(stall_s):
    """/clock stalls (a participant never finishes its step, as a starved process would): the arm,
    commanded 0.3 rad in 1 s, gets there on the steady clock all the same, as a real arm would (a
    stop's braking must end in wall time: the monitor's 0.5 s). With stall_s 0 it waits for /clock."""
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from cookwala_ros.ros.arm_sim_node import ArmSimNode

    with RosHarness() as ros:
        held = Held(ros)
        arm = ros.add(ArmSimNode(context=ros.context, parameter_overrides=[
            Parameter("use_sim_time", value=True), Parameter("clock_mode", value="lockstep"),
            Parameter("stall_s", value=stall_s)]))
        probe = ros.node("probe")
        states: list = []
        probe.create_subscription(JointState, "/joint_states", states.append, qos.sensor(depth=1000))
        publisher = probe.create_publisher(JointTrajectory, "/arm_controller/joint_trajectory", qos.command())
        clock = lockstep_clock(ros, expect="held, arm_sim")  # the first step waits for both: held holds it
        assert ros.wait_for(lambda: held.steps and arm.stepper.steps >= 1, timeout=10.0)
        assert ros.wait_for(lambda: publisher.get_subscription_count() > 0, timeout=10.0)
        stalled_at = clock.t_ns
        start = float(arm.model.measured().positions[0])
        point = JointTrajectoryPoint(positions=[float(q) + (0.3 if i == 0 else 0.0)
                                                for i, q in enumerate(arm.model.measured().positions)])
        point.time_from_start.sec = 1
        publisher.publish(JointTrajectory(joint_names=list(arm.arm.joint_names), points=[point]))
        arrived = ros.wait_for(lambda: states and abs(states[-1].position[0] - (start + 0.3)) < 1e-3
                               and max(abs(v) for v in states[-1].velocity) == 0.0, timeout=3.0)
        assert clock.t_ns == stalled_at and held.steps == [stalled_at]  # /clock never moved
        if stall_s:
            assert arrived, states[-1] if states else "no joint states"
            stamp = states[-1].header.stamp.sec * 1_000_000_000 + states[-1].header.stamp.nanosec
            assert stamp - stalled_at >= 0.9e9, stamp - stalled_at  # the time the state describes, not /clock's
        else:
            assert not arrived and abs(arm.model.measured().positions[0] - start) < 1e-9


def test_heat_commanded_to_an_idle_hob_brings_the_fine_steps_back_at_once():
    """The same for the hob: off, it asks to be stepped IDLE_STEP_S from now; heat commanded
    meanwhile with nobody else busy is simulated from the next step on, in fine steps."""
    from cookwala_msgs.msg import HeaterState
    from cookwala_ros.ros.lockstep import time_ns

    with RosHarness() as ros:
        hob = ros.add(HeaterSimNode(context=ros.context, parameter_overrides=[
            Parameter("use_sim_time", value=True), Parameter("clock_mode", value="lockstep")]))
        heating = stepped_after_a_command(
            ros, hob, "/heater/state", HeaterState, "/heater/command",
            lambda _: HeaterCommand(mode=HeaterCommand.MODE_POWER, power_w=1000.0, source="person"),
            lambda m: m.power_w > 0, lambda m: time_ns(m.stamp))
        assert len(heating) >= 5, heating  # stepped while it heats, not one jump at the idle wake
        assert all(b - a == STEP_NS for a, b in zip(heating, heating[1:4])), heating[:5]


def test_a_resting_lockstep_arm_publishes_the_first_step_of_its_rest_then_only_its_steady_tick():
    """While something else keeps the clock stepping finely, an arm at rest does not publish every
    step (its listeners would wake for an unchanged state): one state on the first step of the
    rest, then its steady tick; a trajectory brings one state per step back until the next rest."""
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from cookwala_ros.ros.arm_sim_node import ArmSimNode
    from cookwala_ros.ros.lockstep import time_ns

    with RosHarness() as ros:
        arm = ros.add(ArmSimNode(context=ros.context, parameter_overrides=[
            Parameter("use_sim_time", value=True), Parameter("clock_mode", value="lockstep"),
            Parameter("steady_rate_hz", value=2.0)]))
        busy = ros.node("busy")
        steps: list[int] = []
        StepParticipant(busy, steps.append)  # never idle: every step is a fine one
        probe = ros.node("probe")
        states: list[JointState] = []
        probe.create_subscription(JointState, "/joint_states", states.append, qos.sensor(depth=10000))
        publisher = probe.create_publisher(JointTrajectory, "/arm_controller/joint_trajectory", qos.command())
        lockstep_clock(ros, factor=50.0)  # 500 steps a second at most: many steps per steady tick
        assert ros.wait_for(lambda: len(steps) >= 200, timeout=30.0)
        window = (steps[50], steps[199])
        resting = [time_ns(m.header.stamp) for m in list(states) if window[0] <= time_ns(m.header.stamp) <= window[1]]
        assert len(resting) < 20, len(resting)  # 150 steps: the steady tick's few states, not one a step
        point = JointTrajectoryPoint(positions=[float(q) + (0.3 if i == 0 else 0.0)
                                                for i, q in enumerate(arm.model.measured().positions)])
        point.time_from_start.sec = 1
        assert ros.wait_for(lambda: publisher.get_subscription_count() > 0, timeout=10.0)
        before = steps[-1]
        publisher.publish(JointTrajectory(joint_names=list(arm.arm.joint_names), points=[point]))
        assert ros.wait_for(lambda: arm.model.idle and len([t for t in steps if t > before]) > 40, timeout=30.0)
        moving = sorted({time_ns(m.header.stamp) for m in list(states)
                         if time_ns(m.header.stamp) > before and max(abs(v) for v in m.velocity) > 0.0})
        assert len(moving) >= 8 and all(b - a == STEP_NS for a, b in zip(moving[1:4], moving[2:5])), moving[:6]
