"""`cookwala-ros safety status|stop|reset` against a real monitor: the only reset a machine
without ros2cli has for a latch the monitor keeps across restarts."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

rclpy = pytest.importorskip("rclpy")

from safety_kitchen import start_node, stop_processes  # noqa: E402


def cli(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cookwala_ros.cli", "safety", "--timeout", "10", *args],
                          capture_output=True, text=True, timeout=timeout)


def wait_state(label: str, timeout_s: float = 30.0) -> subprocess.CompletedProcess:
    deadline = time.monotonic() + timeout_s
    while True:
        result = cli("status")
        if f"state: {label}" in result.stdout or time.monotonic() > deadline:
            return result
        time.sleep(0.5)


def test_status_stop_and_local_reset(tmp_path):
    procs = [
        start_node("cookwala_ros.ros.arm_sim_node", {"initial_pose": "home"}),
        start_node("cookwala_ros.ros.heater_sim_node", {}),
        # wide staleness margins: a loaded test host must not trip the monitor between the steps
        start_node("cookwala_ros.ros.safety_monitor_node", {"state_dir": str(tmp_path), "heater_state_timeout_s": 3.0,
                                                            "joint_state_timeout_s": 3.0}),
    ]
    try:
        armed = wait_state("armed")
        assert armed.stdout.startswith("state: "), armed.stdout + armed.stderr  # the monitor answers
        # armed from the start: a monitor that stopped on its own is a fault to find, not to reset (issue 22)
        assert "state: armed" in armed.stdout and armed.returncode == 0, armed.stdout + armed.stderr

        stopped = cli("stop", "--reason", "cli test")
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        status = wait_state("stopped")
        assert status.returncode == 1  # not armed
        assert "last stop: stop_request" in status.stdout and "cli test" in status.stdout
        assert (tmp_path / "safety_latch.json").exists()  # the latch outlives a restart

        reset = cli("reset", "--by", "tester")
        assert reset.returncode == 0, reset.stdout + reset.stderr
        assert reset.stdout.startswith("armed:")
        assert wait_state("armed").returncode == 0
        assert not (tmp_path / "safety_latch.json").exists()
    finally:
        stop_processes(procs)


def test_no_monitor_is_one_line_and_exit_2():
    result = cli("--monitor", "/nobody_here", "reset", timeout=60.0)
    assert result.returncode == 2
    assert "no service /nobody_here/reset" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_misspelt_action_is_a_usage_error():
    result = subprocess.run([sys.executable, "-m", "cookwala_ros.cli", "safety", "rest"], capture_output=True, text=True)
    assert result.returncode == 2 and "invalid choice" in result.stderr
