"""sim_clock publishes /clock at the configured real-time factor; nodes on sim time follow it."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time

import pytest
from rclpy.parameter import Parameter
from rclpy.qos import ReliabilityPolicy
from rosgraph_msgs.msg import Clock

from cookwala_ros.ros import qos
from cookwala_ros.ros.params import ParameterError
from cookwala_ros.ros.sim_clock_node import SimClockNode
from ros_helpers import RosHarness


def clock_ns(msg) -> int:
    return msg.clock.sec * 1_000_000_000 + msg.clock.nanosec


def measure_factor(ros, received, wall_s=1.0, window_s=0.25):
    """Sim seconds per wall second over about wall_s, robust to delivery delays.

    Each message is (sim time, arrival time). Delivery can only delay a message, so in a window
    of messages the one with the least delay relative to the others marks the clock best; the
    factor is taken between such messages of the first and last window.
    """
    assert ros.wait_for(lambda: received, timeout=10.0)
    start = len(received)
    time.sleep(wall_s)
    sample = received[start:]
    assert len(sample) > 10, "too few /clock messages"
    first_arrival, last_arrival = sample[0][1], sample[-1][1]
    head = [m for m in sample if m[1] - first_arrival <= window_s * 1e9]
    tail = [m for m in sample if last_arrival - m[1] <= window_s * 1e9]
    rough = (sample[-1][0] - sample[0][0]) / (last_arrival - first_arrival)

    def best(window):  # least delayed message of a window, judged against the rough factor
        return min(window, key=lambda m: m[1] - m[0] / rough)

    (sim_a, wall_a), (sim_b, wall_b) = best(head), best(tail)
    return (sim_b - sim_a) / (wall_b - wall_a)


@pytest.fixture
def clock_scene():
    with RosHarness() as ros:
        probe = ros.node("clock_probe")
        received = []
        probe.create_subscription(Clock, "/clock", lambda m: received.append((clock_ns(m), time.monotonic_ns())), qos.clock())
        yield ros, received


def test_factor_one_tracks_wall_time(clock_scene):
    ros, received = clock_scene
    ros.add(SimClockNode(context=ros.context))
    factor = measure_factor(ros, received)
    assert factor == pytest.approx(1.0, rel=0.05)
    assert abs(received[-1][0] * 1e-9 - time.time()) < 0.5  # starts at the wall clock


def test_a_default_subscriber_hears_the_clock(clock_scene):
    """A reliable subscriber (ROS's default QoS, `ros2 topic echo /clock`) matches, no QoS warning."""
    ros, _ = clock_scene
    node = ros.add(SimClockNode(context=ros.context))
    heard = []
    ros.node("echo").create_subscription(Clock, "/clock", heard.append, 10)
    assert ros.wait_for(lambda: len(heard) >= 5, timeout=10)
    assert node._publisher.qos_profile.reliability == ReliabilityPolicy.RELIABLE


def test_fast_factor_and_changing_it_while_running(clock_scene):
    ros, received = clock_scene
    node = ros.add(SimClockNode(context=ros.context, parameter_overrides=[
        Parameter("real_time_factor", value=50.0),
        Parameter("start_from_wall_clock", value=False),
        Parameter("start_time_s", value=1000.0),
    ]))
    assert measure_factor(ros, received) == pytest.approx(50.0, rel=0.05)
    assert 1000e9 <= received[0][0] < 1100e9
    assert node.set_parameters([Parameter("real_time_factor", value=200.0)])[0].successful
    assert measure_factor(ros, received) == pytest.approx(200.0, rel=0.05)
    refused = node.set_parameters([Parameter("real_time_factor", value=0.0)])
    assert not refused[0].successful and "real_time_factor" in refused[0].reason
    stamps = [sim for sim, _ in received]
    assert stamps == sorted(stamps)  # never goes backwards


def test_a_node_on_sim_time_follows_the_clock(clock_scene):
    ros, received = clock_scene
    ros.add(SimClockNode(context=ros.context, parameter_overrides=[
        Parameter("real_time_factor", value=20.0), Parameter("start_from_wall_clock", value=False)]))
    follower = ros.node("follower", sim_time=True)
    ticks = []
    follower.create_timer(1.0, lambda: ticks.append(follower.get_clock().now().nanoseconds))  # 1 sim second
    assert ros.wait_for(lambda: len(ticks) >= 5, timeout=5.0)
    assert 0 < ticks[0] < 3600e9  # sim time from start_time_s = 0, not the wall clock


@pytest.mark.parametrize(
    "name, value, expected",
    [("use_sim_time", True, "use_sim_time"), ("real_time_factor", 0.0, "real_time_factor"),
     ("publish_rate_hz", 5000.0, "publish_rate_hz")],
)
def test_bad_parameters_stop_the_node_naming_the_parameter(name, value, expected):
    with RosHarness() as ros:
        with pytest.raises(ParameterError, match=f"parameter '{expected}'"):
            SimClockNode(context=ros.context, parameter_overrides=[Parameter(name, value=value)])


def test_executables_exit_cleanly_on_ctrl_c_and_with_status_2_on_a_bad_parameter():
    env = dict(os.environ)
    bad = subprocess.run(
        [sys.executable, "-m", "cookwala_ros.ros.heater_sim_node", "--ros-args", "-p", "medium:=soup"],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert bad.returncode == 2
    assert "heater_sim: cannot start: parameter 'medium'" in bad.stderr
    proc = subprocess.Popen([sys.executable, "-m", "cookwala_ros.ros.sim_clock_node"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        started = ""
        deadline = time.monotonic() + 40  # generous: CI machines can be very busy
        while "publishing /clock" not in started and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stderr], [], [], 0.5)
            if ready:
                started += proc.stderr.readline()
        assert "publishing /clock" in started, started
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
