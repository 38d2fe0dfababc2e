"""Every node executable: an integer for a double parameter starts it (as a double), a string for
one stops it with status 2 and one line on stderr naming the parameter, never a traceback.

Each executable runs as its own process, the way `cookwala-ros up` starts it (console script
when the venv has one, else the module's main()). The integer case waits until the node answers
its `get_parameters` service with the value as a DOUBLE, then stops it with SIGINT.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

rclpy = pytest.importorskip("rclpy")

from rcl_interfaces.msg import ParameterType  # noqa: E402
from rcl_interfaces.srv import GetParameters  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from ros_helpers import close_spinning  # noqa: E402



def node_executables() -> dict[str, str]:
    """name -> "module:function", the table setup.py installs (a new executable cannot be forgotten here)."""
    from cookwala_ros.bringup.executables import NODE_EXECUTABLES

    return dict(NODE_EXECUTABLES)


# executable -> (node name, a double parameter and an integer it accepts, extra arguments);
# None: the node declares no double (the wrong-type case then uses its string parameter).
CASES = {
    "arm_sim": ("arm_sim", "publish_rate_hz", 50, {}),
    "heater_sim": ("heater_sim", "max_power_w", 1500, {}),
    "sim_clock": ("sim_clock", "real_time_factor", 2, {}),
    "safety_monitor": ("safety_monitor", "heater_state_timeout_s", 2, {"autostart": "false"}),
    "estop_button": ("estop_button", "period_s", 2, {}),
    "executor": ("executor", "tick_hz", 20, {"http_port": "0"}),
    "capabilities_node": ("cookwala_capabilities", None, None, {}),
    "pot_sim": ("pot_sim", None, None, {}),
    "team_node": ("team", None, None, {}),
    "team_coordinator": ("team_coordinator", "window_s", 2, {}),
}
WRONG_TYPE = {"capabilities_node": "device_file:=2", "pot_sim": "heater_node:=2", "team_node": "device_file:=2"}  # an integer for a string


def command(executable: str, params: dict, tmp_path) -> list[str]:
    script = pathlib.Path(sys.executable).parent / executable
    if script.exists():
        cmd = [sys.executable, str(script)]
    else:
        module, function = node_executables()[executable].split(":")
        cmd = [sys.executable, "-c", f"import sys; from {module} import {function}; sys.exit({function}())"]
    extra = {"state_dir": str(tmp_path / "state")} if executable == "safety_monitor" else {}
    if executable == "executor":
        extra = {"data_dir": str(tmp_path / "data")}
    args = ["--ros-args"]
    for name, value in {**params, **extra}.items():
        args += ["-p", f"{name}:={value}"]
    return cmd + args


def test_every_executable_is_covered():
    assert set(CASES) == set(node_executables())


@pytest.fixture(scope="module")
def probe():
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("param_probe", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    yield node, executor
    close_spinning(executor, node, context)


def get_parameter(probe, node_name: str, name: str, timeout_s: float = 60.0):
    """The parameter as the running node reports it (waits for the node's service)."""
    probe, executor = probe
    client = probe.create_client(GetParameters, f"/{node_name}/get_parameters")
    try:
        assert client.wait_for_service(timeout_sec=timeout_s), f"/{node_name} never came up"
        future = client.call_async(GetParameters.Request(names=[name]))
        executor.spin_until_future_complete(future, timeout_sec=20.0)
        assert future.done(), f"/{node_name}/get_parameters did not answer"
        return future.result().values[0]
    finally:
        probe.destroy_client(client)


@pytest.mark.parametrize("executable", [e for e, case in CASES.items() if case[1]])
def test_an_integer_for_a_double_starts_the_node(executable, probe, tmp_path):
    node_name, param, value, extra = CASES[executable]
    proc = subprocess.Popen(command(executable, {param: value, **extra}, tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        got = get_parameter(probe, node_name, param)
        assert proc.poll() is None
        assert got.type == ParameterType.PARAMETER_DOUBLE and got.double_value == float(value)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
    assert "Traceback" not in out + err, err


@pytest.mark.parametrize("executable", list(CASES))
def test_a_wrong_type_stops_the_node_with_one_line(executable, tmp_path):
    node_name, param, _, extra = CASES[executable]
    override = WRONG_TYPE.get(executable) or f"{param}:=abc"
    name = override.split(":=")[0]
    cmd = command(executable, extra, tmp_path) + ["-p", override]
    t0 = time.monotonic()
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    # Fast DDS's own transport errors on an overloaded host ("[RTPS_TRANSPORT_SHM Error] ...") are not the node's
    lines = [line for line in result.stderr.splitlines() if line.strip() and "[RTPS_" not in line]
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert len(lines) == 1 and f"parameter '{name}'" in lines[0], lines
    assert "Traceback" not in result.stdout + result.stderr
    print(f"{executable}: refused in {time.monotonic() - t0:.1f} s: {lines[0]}")


def test_an_integer_set_at_run_time_is_a_double_too():
    """`ros2 param set sim_clock real_time_factor 3`: accepted as 3.0; a string is refused (by
    rclpy's type check, whose reason names no parameter: the caller named it)."""
    from rclpy.parameter import Parameter

    from cookwala_ros.ros.sim_clock_node import SimClockNode

    context = rclpy.Context()
    rclpy.init(context=context)
    node = SimClockNode(context=context)
    try:
        result = node.set_parameters([Parameter("real_time_factor", value=3)])[0]
        assert result.successful, result.reason
        value = node.get_parameter("real_time_factor")
        assert value.type_ == Parameter.Type.DOUBLE and value.value == 3.0
        assert node.clock_model.factor == 3.0
        refused = node.set_parameters([Parameter("real_time_factor", value="fast")])[0]
        assert not refused.successful and node.get_parameter("real_time_factor").value == 3.0
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=context)
