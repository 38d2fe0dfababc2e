"""A monitor that was descheduled judges what arrived meanwhile, not its own absence (issue 22).

rclpy runs a wait's ready timers before its ready subscriptions, so a monitor process that did not
run for longer than its lease used to wake into its check timer first and call a live executor's
heartbeat (and a live hob's state) lost, with the fresh messages still waiting in their
subscriptions: a spurious stop on every loaded host. Here the monitor runs in this process on an
executor the test spins by hand, so it can be held still for longer than its lease and its
heater- and joint-state timeouts while the stand-in executor keeps beating and the hob keeps
heating; when it runs again it must stay armed. The second test is the other side: a heartbeat
that really stopped is still a heartbeat loss after the same pause.

The subject is the order of reading and judging, not the device's margins: the lease and the
timeouts are 2 s here, so a stand-in thread that a loaded host holds up for a few hundred
milliseconds is not a heartbeat loss of its own.
"""

from __future__ import annotations

import time

import pytest
from rclpy.clock import Clock, ClockType
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter

from cookwala_msgs.msg import HeaterCommand, Heartbeat
from cookwala_ros.ros import names, qos
from cookwala_ros.ros.arm_sim_node import ArmSimNode
from cookwala_ros.ros.heater_sim_node import HeaterSimNode
from cookwala_ros.ros.safety_monitor_node import SafetyMonitorNode
from ros_helpers import RosHarness

LEASE_S = 2.0  # the heartbeat lease and the heater/joint state timeouts of this monitor
PAUSE_S = 2.5  # longer than all of them


class StandIn:
    """The executor's part, on the harness: heartbeats and heat commands at 10 Hz (steady clock)."""

    def __init__(self, ros: RosHarness):
        self.node = ros.node("starved_monitor_stand_in")
        self.beating = True
        self._beats = self.node.create_publisher(Heartbeat, names.HEARTBEAT, qos.heartbeat(LEASE_S))
        self._heat = self.node.create_publisher(HeaterCommand, "/heater/command", qos.command())
        self.node.create_timer(0.1, self._tick, clock=Clock(clock_type=ClockType.STEADY_TIME))

    def _tick(self) -> None:
        stamp = self.node.get_clock().now().to_msg()
        if self.beating:
            self._beats.publish(Heartbeat(stamp=stamp, device_id="sim-kitchen", state="running",
                                          node_name=self.node.get_fully_qualified_name()))
        self._heat.publish(HeaterCommand(stamp=stamp, mode=HeaterCommand.MODE_POWER, power_w=1000.0,
                                         source="executor"))


@pytest.fixture
def starved(tmp_path):
    with RosHarness(threads=2) as ros:
        ros.add(ArmSimNode(context=ros.context))
        ros.add(HeaterSimNode(context=ros.context, parameter_overrides=[Parameter("command_timeout_s", value=0.0)]))
        stand_in = StandIn(ros)
        monitor = SafetyMonitorNode(context=ros.context, parameter_overrides=[
            Parameter("state_dir", value=str(tmp_path)), Parameter("autostart", value=False),
            *(Parameter(name, value=LEASE_S) for name in ("heartbeat_lease_s", "heater_state_timeout_s",
                                                          "joint_state_timeout_s"))])
        spinner = SingleThreadedExecutor(context=ros.context)
        spinner.add_node(monitor)
        spinner.add_node(monitor.stop_inputs)

        def spin_for(seconds: float) -> None:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                spinner.spin_once(timeout_sec=0.01)

        try:
            monitor.autostart()
            end = time.monotonic() + 20.0
            while not (monitor.monitor.state == "armed" and monitor.monitor.plant_active == "heat"):
                assert time.monotonic() < end, f"monitor {monitor.monitor.state}, waiting for {monitor._waiting}, " \
                    f"plant active: {monitor.monitor.plant_active!r}"
                spin_for(0.05)
            spin_for(0.5)  # a few heartbeats and checks while running normally
            episode = monitor.monitor.arbiter.episode
            assert monitor.monitor.state == "armed", f"{episode.trigger}: {episode.detail}"
            yield monitor, stand_in, spin_for
        finally:
            spinner.shutdown(timeout_sec=1.0)
            monitor.stop_inputs.destroy_node()
            monitor.destroy_node()


def test_a_monitor_that_did_not_run_for_a_while_reads_what_arrived_before_judging(starved):
    monitor, _, spin_for = starved
    time.sleep(PAUSE_S)  # the monitor's thread does not run; the executor beats, the hob heats
    spin_for(0.3)
    episode = monitor.monitor.arbiter.episode
    assert monitor.monitor.state == "armed", f"a spurious stop: {episode.trigger}: {episode.detail}"


def test_a_heartbeat_that_stopped_is_still_lost_after_the_same_pause(starved):
    monitor, stand_in, spin_for = starved
    stand_in.beating = False
    time.sleep(PAUSE_S)
    spin_for(0.3)
    episode = monitor.monitor.arbiter.episode
    assert monitor.monitor.state != "armed" and episode is not None
    assert episode.trigger == "heartbeat_lost", f"{episode.trigger}: {episode.detail}"
