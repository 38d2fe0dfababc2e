"""Nothing re-energises after a stop, and the heater keep-alive (real rclpy, executor in-process).

The executor node runs in this process (so a test can play a control tick computed before a
stop); what it sends is read from the wire by a separate observer node: HeaterCommand and
JointTrajectory messages from one publisher arrive in publication order.
"""

from __future__ import annotations

import json
import signal
import threading
import time

import pytest
from rclpy.parameter import Parameter
from trajectory_msgs.msg import JointTrajectory

from executor_procs import Client, goal_for, start_executor, start_node, stop_processes
from executor_recipes import boil_recipe, request_for
from cookwala_msgs.msg import HeaterCommand
from cookwala_msgs.srv import Stop
from cookwala_ros.core.run_types import Commands, HeatCommand
from cookwala_ros.ros import qos
from cookwala_ros.ros.executor_node import ExecutorNode
from ros_helpers import RosHarness

HEAT_ON = (HeaterCommand.MODE_POWER, HeaterCommand.MODE_SETPOINT)


class Wire:
    """Every executor heater command and arm trajectory, with its steady receipt time."""

    def __init__(self, ros):
        self.node = ros.node("wire_observer")
        self.heat: list[tuple[float, HeaterCommand]] = []
        self.traj: list[tuple[float, JointTrajectory]] = []
        self.node.create_subscription(HeaterCommand, "/heater/command", self._on_heat, qos.command(1000))
        self.node.create_subscription(JointTrajectory, "/arm_controller/joint_trajectory",
                                      lambda m: self.traj.append((time.monotonic(), m)), qos.command(1000))

    def _on_heat(self, msg: HeaterCommand) -> None:
        if msg.source == "executor":
            self.heat.append((time.monotonic(), msg))

    def heating(self) -> bool:
        return any(m.mode in HEAT_ON and m.power_w > 0 or m.mode == HeaterCommand.MODE_SETPOINT
                   for _, m in self.heat[-3:])


def is_move(msg: JointTrajectory) -> bool:
    """The executor's moves to a pose last >= 0.5 s by construction (URDF speeds at half speed);
    a halt is a trajectory without points or a hold point."""
    if not msg.points:
        return False
    t = msg.points[-1].time_from_start
    return t.sec + t.nanosec * 1e-9 >= 0.5


def after_first(items, predicate):
    for i, (_, msg) in enumerate(items):
        if predicate(msg):
            return items[i + 1:]
    raise AssertionError("never seen")


def executor(ros, tmp_path, **params) -> ExecutorNode:
    values = {"data_dir": str(tmp_path / "data"), "http_port": 0, "safety_monitor_node": "none",
              "presence_default": True, **params}
    return ros.add(ExecutorNode(context=ros.context,
                                parameter_overrides=[Parameter(k, value=v) for k, v in values.items()]))


@pytest.mark.timeout(60)
def test_commands_computed_before_a_halt_never_reach_the_wire_after_it(tmp_path):
    with RosHarness() as ros:
        node = executor(ros, tmp_path)
        wire = Wire(ros)
        assert ros.wait_for_subscribers(node.io.heater_pub, timeout=30)
        assert ros.wait_for_subscribers(node.io.trajectory_pub, timeout=30)
        for trial in range(20):
            wire.heat.clear()
            wire.traj.clear()
            node.io.safety_hold()  # the admission check of a new execution ...
            assert node.io.admit()  # ... accepted: commands flow again
            running = threading.Event()
            running.set()

            def ticks():  # stale ticks: computed with heat and motion, published whenever they get the chance
                while running.is_set():
                    node.io.apply(Commands(heater=HeatCommand.power(1500.0), arm_pose="home"))

            assert node.io.keepalive_timer.is_canceled()  # no heat in force: the keep-alive sleeps
            thread = threading.Thread(target=ticks)
            thread.start()
            time.sleep(0.05 + 0.01 * (trial % 5))
            assert not node.io.keepalive_timer.is_canceled()  # heat in force: kept alive
            node.io.halt(None)
            time.sleep(0.1)
            running.clear()
            thread.join()
            assert node.io.keepalive_timer.is_canceled()  # the halt ended the keep-alive
            assert ros.wait_for(lambda: any(m.mode == HeaterCommand.MODE_OFF for _, m in wire.heat), timeout=5)
            time.sleep(0.2)  # what was published has arrived
            assert any(m.mode == HeaterCommand.MODE_POWER for _, m in wire.heat), "the ticks published before the halt"
            later = after_first(wire.heat, lambda m: m.mode == HeaterCommand.MODE_OFF)
            assert [m for _, m in later if m.mode != HeaterCommand.MODE_OFF] == [], f"trial {trial}: heat after the halt"
            assert any(is_move(m) for _, m in wire.traj)
            moves = [m for _, m in after_first(wire.traj, lambda m: not is_move(m)) if is_move(m)]
            assert moves == [], f"trial {trial}: motion after the halt"
            assert node.io.dropped > 0


@pytest.mark.timeout(60)
def test_the_latch_is_released_only_by_a_new_admission_without_a_stop_in_between(tmp_path):
    with RosHarness() as ros:
        node = executor(ros, tmp_path)
        wire = Wire(ros)
        assert ros.wait_for_subscribers(node.io.heater_pub, timeout=30)
        io = node.io
        io.halt("first stop")
        io.safety_hold()  # admission check ...
        io.halt("a stop after the check")  # ... a stop for the new execution before it was recorded
        assert not io.admit() and io.latched() == "first stop"
        io.apply(Commands(heater=HeatCommand.power(800.0)))
        io.safety_hold()
        assert io.admit() and io.latched() is None
        io.apply(Commands(heater=HeatCommand.power(900.0)))
        assert ros.wait_for(lambda: any(m.power_w == 900.0 for _, m in wire.heat), timeout=5)
        assert not any(m.power_w == 800.0 for _, m in wire.heat)
        # somebody else's heat-off (the monitor, an operator) latches too, without a halt of ours
        other = ros.node("operator").create_publisher(HeaterCommand, "/heater/command", qos.command())
        assert ros.wait_for_subscribers(other, 2, timeout=30)
        other.publish(HeaterCommand(mode=HeaterCommand.MODE_OFF, source="safety_monitor"))
        assert ros.wait_for(lambda: io.latched() is not None, timeout=5)
        assert "safety_monitor" in io.latched()


@pytest.mark.timeout(120)
def test_heater_command_is_kept_alive_at_10_hz_while_the_ros_clock_is_paused(tmp_path):
    recipe = boil_recipe(minutes=20)
    (tmp_path / "data" / "recipes").mkdir(parents=True)
    (tmp_path / "data" / "recipes" / "boil.cookwala.json").write_text(json.dumps(recipe))
    wall = {"use_sim_time": False}  # the plant keeps publishing fresh states while /clock is paused
    clock = start_node("cookwala_ros.ros.sim_clock_node", {"real_time_factor": 5.0})
    procs = [clock, start_node("cookwala_ros.ros.arm_sim_node", {**wall, "publish_rate_hz": 50.0}),
             start_node("cookwala_ros.ros.heater_sim_node", wall), start_executor(tmp_path / "data")]
    try:
        with RosHarness() as ros:
            client = Client(ros)
            wire = Wire(ros)
            assert client.wait_ready(to_cook=True), "executor did not come up"
            request = request_for(recipe)
            assert client.send(goal_for(request)).accepted
            assert ros.wait_for(wire.heating, timeout=60), "never heated"
            clock.send_signal(signal.SIGSTOP)  # no /clock: the executor's control tick pauses
            try:
                time.sleep(0.5)
                start = time.monotonic()
                time.sleep(2.0)
                window = [(t, m) for t, m in wire.heat if t >= start]
                times = [t for t, _ in window]
                gaps = [b - a for a, b in zip(times, times[1:])] or [2.0]
                print(f"keep-alive while /clock is paused: {len(window)} commands in 2 s, "
                      f"max gap {max(gaps) * 1000:.0f} ms")
                assert len(window) >= 20, f"{len(window)} heater commands in 2 s"
                assert all(m.mode in HEAT_ON for _, m in window)
                # a stop ends the keep-alive at once, clock or no clock
                stop = client.node.create_client(Stop, "/executor/stop")
                answer = client.call(stop, Stop.Request(requested_by="human:tester", reason="keep-alive test"))
                assert answer.accepted, answer
                stopped_at = time.monotonic()
                time.sleep(0.5)
                assert [m for t, m in wire.heat if t > stopped_at and m.mode in HEAT_ON] == []
                assert wire.heat[-1][1].mode == HeaterCommand.MODE_OFF
            finally:
                clock.send_signal(signal.SIGCONT)
    finally:
        stop_processes(procs)


@pytest.mark.timeout(60)
def test_a_heat_cut_the_monitor_sent_before_its_reset_does_not_stop_the_next_execution(tmp_path):
    """Its status and its heat cuts travel on two topics, so a cut from the stop before a reset can
    arrive after the status that says armed again: by the monitor's stamps it is the old stop's."""
    from builtin_interfaces.msg import Time

    from cookwala_msgs.msg import SafetyStatus
    from cookwala_ros.ros import names

    with RosHarness() as ros:
        node = executor(ros, tmp_path)
        io = node.io
        monitor = ros.node("monitor")
        status = monitor.create_publisher(SafetyStatus, names.SAFETY_STATUS, qos.latched())
        heat = monitor.create_publisher(HeaterCommand, "/heater/command", qos.command())
        assert ros.wait_for_subscribers(heat, 1, timeout=30) and ros.wait_for_subscribers(status, 1, timeout=30)

        def cut(sec: int, source: str = names.MONITOR_HEAT_SOURCE) -> HeaterCommand:
            return HeaterCommand(stamp=Time(sec=sec), mode=HeaterCommand.MODE_OFF, source=source)

        status.publish(SafetyStatus(stamp=Time(sec=10), state=SafetyStatus.STATE_STOPPED, state_label="stopped"))
        assert ros.wait_for(lambda: io.latched() is not None, timeout=5)
        status.publish(SafetyStatus(stamp=Time(sec=20), state=SafetyStatus.STATE_ARMED, state_label="armed"))
        assert ros.wait_for(lambda: io.safety is not None and io.safety.state == SafetyStatus.STATE_ARMED, timeout=5)
        io.safety_hold()
        assert io.admit(), io.latched()
        heat.publish(cut(15))  # sent while stopped, delivered after the reset
        heat.publish(cut(0, source="operator"))  # one publisher: arrives after it
        assert ros.wait_for(lambda: io.latched() is not None, timeout=5)
        assert "operator" in io.latched(), io.latched()  # the first latch names its cause: not the old cut

        io.safety_hold()
        assert io.admit(), io.latched()
        heat.publish(cut(25))  # a cut after the reset: a new stop, latched at once
        assert ros.wait_for(lambda: io.latched() is not None, timeout=5)
        assert names.MONITOR_HEAT_SOURCE in io.latched()

        # a stop and a reset whose stopped status this executor never read (latched, keep-last 1):
        # armed at 30, stopped at 35 (unseen), cut at 36, armed again at 40, the cut delivered last
        status.publish(SafetyStatus(stamp=Time(sec=30), state=SafetyStatus.STATE_ARMED, state_label="armed"))
        assert ros.wait_for(lambda: io.safety.stamp.sec == 30, timeout=5)
        io.safety_hold()
        assert io.admit(), io.latched()
        status.publish(SafetyStatus(stamp=Time(sec=40), state=SafetyStatus.STATE_ARMED, state_label="armed"))
        assert ros.wait_for(lambda: io.safety.stamp.sec == 40, timeout=5)
        heat.publish(cut(36))
        heat.publish(cut(0, source="operator"))
        assert ros.wait_for(lambda: io.latched() is not None, timeout=5)
        assert "operator" in io.latched(), io.latched()
