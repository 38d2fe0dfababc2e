"""Acceptance: a 30-minute simulated simmer of 1 L of water in lock-step holds the setpoint and
gives exactly the physics of the model stepped directly, however loaded the host is.

The hob steps only when /clock steps and /clock waits for the commander, so a stalled process
stretches wall time, never the simulation. How fast it runs is a benchmark's figure
(benchmarks/sim_bench.py), not this test's.
"""

from __future__ import annotations

import pytest
from rclpy.parameter import Parameter

from cookwala_msgs.msg import HeaterCommand
from cookwala_ros.ros.heater_sim_node import HeaterSimNode
from cookwala_ros.ros.sim_clock_node import SimClockNode
from cookwala_ros.sim.heater import HeaterMode, SimHeater
from cookwala_ros.sim.thermal_model import ThermalConfig, ThermalModel
from lockstep_commander import LockstepCommander, stamp_ns
from ros_helpers import RosHarness

SIMMER_S = 1800.0
SETPOINT_C = 90.0
STEP_S = 0.5


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_thirty_minute_lockstep_simmer_holds_the_setpoint_with_the_model_physics():
    with RosHarness() as ros:
        hob = ros.add(HeaterSimNode(context=ros.context, parameter_overrides=[
            Parameter("use_sim_time", value=True),
            Parameter("clock_mode", value="lockstep"),
            Parameter("medium", value="water"),
            Parameter("medium_mass_kg", value=1.0),
        ]))
        simmer = HeaterCommand(mode=HeaterCommand.MODE_SETPOINT, setpoint_c=SETPOINT_C, source="test")
        commander = LockstepCommander(ros.node("simmer_probe"), lambda t_ns, state: simmer)
        assert ros.wait_for_subscribers(commander.publisher)
        ros.add(SimClockNode(context=ros.context, parameter_overrides=[
            Parameter("clock_mode", value="lockstep"),
            Parameter("lockstep_step_s", value=STEP_S),
            Parameter("lockstep_expect", value="heater_sim,simmer_probe"),
            Parameter("lockstep_grace_s", value=60.0),  # nothing in this test may be dropped
            Parameter("real_time_factor", value=1000.0),
            Parameter("start_from_wall_clock", value=False),
            Parameter("start_time_s", value=1000.0),
        ]))
        assert ros.wait_for(lambda: commander.sent, timeout=30.0)
        start_ns = commander.sent[0][0]
        end_ns = start_ns + int(SIMMER_S * 1e9)
        assert ros.wait_for(lambda: commander.sent[-1][0] >= end_ns, timeout=240.0), \
            f"only {(commander.participant.t_ns - start_ns) * 1e-9:.0f} of {SIMMER_S:.0f} simulated s"

        by_stamp = {}  # each step's first state: the hob at T, before that step's command
        for state in list(commander.states):
            by_stamp.setdefault(stamp_ns(state), state)
        run = [by_stamp[t] for t in sorted(by_stamp) if start_ns < t <= end_ns]
        assert len(run) == int(SIMMER_S / STEP_S)  # a state for every step, none skipped
        assert all(s.commanded_mode == HeaterMode.SETPOINT for s in run)
        assert hob.dead_man_cuts == 0
        # simmered: from 15 minutes on the water stays at the setpoint
        late = [s.medium_temp_c for s in run if stamp_ns(s) - start_ns >= 900e9]
        assert min(late) > SETPOINT_C - 1.0 and max(late) < SETPOINT_C + 1.0
        # the model's own physics for the same time, from the same start (the hob sat off at ambient)
        reference = SimHeater(ThermalModel(ThermalConfig(medium="water", medium_mass_kg=1.0)))
        reference.command(HeaterMode.SETPOINT, setpoint_c=SETPOINT_C)
        reference.step(SIMMER_S)
        final = by_stamp[end_ns]
        assert final.medium_temp_c == pytest.approx(reference.thermal.medium_c, abs=1e-3)
        assert final.medium_mass_kg == pytest.approx(reference.thermal.medium_mass_kg, abs=1e-6)
