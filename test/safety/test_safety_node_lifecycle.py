"""The monitor as a process: its two nodes keep unique names under a `__node:=` remap (and the
stop-input node stays off /clock), and SIGINT halts the kitchen before a clean exit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest

rclpy = pytest.importorskip("rclpy")

from cookwala_msgs.msg import HeaterCommand  # noqa: E402
from safety_kitchen import Probe, heat_while_armed, ros_args, start_node, start_script, stop_processes  # noqa: E402

MONITOR_CODE = "import sys; from cookwala_ros.ros.safety_monitor_node import main; sys.exit(main())"


def start_monitor(params: dict, extra: tuple[str, ...] = (), env: dict | None = None, log=None):
    args = ros_args(params) + list(extra)
    return subprocess.Popen([sys.executable, "-c", MONITOR_CODE, *args], env={**os.environ, **(env or {})},
                            stdout=log or subprocess.DEVNULL, stderr=subprocess.STDOUT)


def test_node_names_stay_unique_under_a_node_remap(tmp_path):
    """On a domain of its own (nothing else there): the names in the graph and the subscriptions."""
    domain = (int(os.environ["ROS_DOMAIN_ID"]) + 53) % 101
    monitor = start_monitor({"use_sim_time": True, "state_dir": str(tmp_path), "activation_timeout_s": 1.0},
                            ("-r", "__node:=my_monitor"), env={"ROS_DOMAIN_ID": str(domain)})
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node("name_probe", context=context)
    try:
        def names():
            return sorted(n for n, ns in node.get_node_names_and_namespaces() if n != "name_probe")

        def stop_input_topics():
            return dict(node.get_subscriber_names_and_types_by_node("my_monitor_stop_inputs", "/"))

        Probe.wait_for(lambda: len(names()) >= 2, 30.0, "the monitor's two nodes")
        # its subscriptions come with configure, seconds after the nodes on a loaded host
        Probe.wait_for(lambda: "/cookwala/estop" in stop_input_topics(), 30.0, "the stop inputs' subscriptions")
        time.sleep(1.0)  # anything else that would show up
        assert names() == ["my_monitor", "my_monitor_stop_inputs"]
        topics = stop_input_topics()
        assert "/cookwala/estop" in topics and "/clock" not in topics
        assert "/clock" in dict(node.get_subscriber_names_and_types_by_node("my_monitor", "/"))  # sim time there
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=context)
        monitor.send_signal(signal.SIGINT)
        monitor.wait(timeout=10)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_halts_the_kitchen_then_exits_cleanly(signum):
    procs = [start_node("cookwala_ros.ros.arm_sim_node", {}),
             start_node("cookwala_ros.ros.heater_sim_node", {"medium": "water", "medium_mass_kg": 1.0}),
             # heat needs a live executor heartbeat; long lease: heartbeat loss is not under test here
             start_script("safety_heartbeat_sender.py", args=("--ros-args", "-p", "lease_s:=2.0"))]
    log = tempfile.TemporaryFile(mode="w+")
    monitor = start_monitor({"activation_timeout_s": 20.0, "heartbeat_lease_s": 2.0}, log=log)
    probe = Probe()
    try:
        probe.wait_state("armed", timeout=30.0)
        heat_while_armed(probe)
        t_signal = time.monotonic()
        monitor.send_signal(signum)
        code = monitor.wait(timeout=10)
        t_exit = time.monotonic()
        off = probe.first_after(probe.heater_commands, t_signal,
                                lambda m: m.mode == HeaterCommand.MODE_OFF and m.source == "safety_monitor")
        print(f"signal -> off command {off - t_signal:.3f} s, -> exit {t_exit - t_signal:.3f} s")
        assert off is not None and off < t_exit
        assert probe.first_after(probe.heater, off, lambda m: m.power_w <= 1.0) is not None
        log.seek(0)
        output = log.read()
        assert code == 0, output
        assert "Traceback" not in output and "halted (0 W, standstill)" in output, output
    finally:
        probe.close()
        if monitor.poll() is None:
            monitor.kill()
        stop_processes(procs)
        log.close()


@pytest.mark.parametrize("arg, name", [
    ("joint_state_timeout_s:=abc", "joint_state_timeout_s"),    # wrong type
    ("joint_state_timeout_s:=-1.0", "joint_state_timeout_s"),   # wrong value
    ("executor_node:=executor//x", "executor_node"),            # not a node name
    ("executor_start_grace_s:=0.0", "executor_start_grace_s"),
    ("heat_deadline_s:=2.0", "heat_deadline_s"),                # CORE §6.2: at most 1 s
    ("state_dir:=/proc/cookwala-no-such-dir", "state_dir"),     # cannot be created
    ("workspace_min:=[0.0, 1.0]", "workspace_min"),
])
def test_a_bad_parameter_stops_the_node_with_one_line(arg, name):
    result = subprocess.run([sys.executable, "-c", MONITOR_CODE, "--ros-args", "-p", arg],
                            capture_output=True, text=True, timeout=120)
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1, lines
    assert f"parameter '{name}'" in lines[0] and "Traceback" not in lines[0]
