"""`cookwala-ros up` as a user runs it: a real scene of real nodes in child processes."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time

import psutil
import pytest
import yaml

rclpy = pytest.importorskip("rclpy", reason="rclpy (ROS 2 wheels) is not installed")

from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from ros_helpers import RosHarness  # noqa: E402

from cookwala_msgs.msg import HeaterState  # noqa: E402
from cookwala_ros import cli  # noqa: E402
from cookwala_ros.ros import qos  # noqa: E402

CLI = [sys.executable, "-m", "cookwala_ros.cli"]


class Scene:
    """`cookwala-ros up ...` in the background, its output in a file."""

    def __init__(self, tmp_path: pathlib.Path, *args: str):
        self.log_path = tmp_path / "up.log"
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(CLI + ["up", *args], stdout=self._log, stderr=subprocess.STDOUT)

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for_output(self, text: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.output():
            assert self.proc.poll() is None, f"up exited ({self.proc.returncode}) before printing {text!r}:\n{self.output()}"
            assert time.monotonic() < deadline, f"no {text!r} within {timeout} s:\n{self.output()}"
            time.sleep(0.05)

    def descendants(self) -> list[psutil.Process]:
        return psutil.Process(self.proc.pid).children(recursive=True)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._log.close()


@pytest.fixture
def scenes(tmp_path):
    started: list[Scene] = []

    def start(*args: str) -> Scene:
        scene = Scene(tmp_path, *args)
        started.append(scene)
        return scene

    yield start
    for scene in started:
        scene.close()


def assert_all_gone(processes: list[psutil.Process], timeout: float = 2.0) -> None:
    _, alive = psutil.wait_procs(processes, timeout=timeout)
    assert not alive, f"processes left behind: {[(p.pid, p.cmdline()) for p in alive]}"


def write_manifest(tmp_path: pathlib.Path, nodes: list[dict]) -> str:
    path = tmp_path / "scene.yaml"
    path.write_text(yaml.safe_dump({"format": 1, "scene": "test_scene", "use_sim_time": False, "nodes": nodes}))
    return str(path)


@pytest.fixture
def ros():
    with RosHarness(threads=2) as harness:
        yield harness


def test_sim_kitchen_comes_up_publishes_and_stops_on_sigterm(scenes, ros):
    probe = ros.node("up_test_probe")
    joint_states = ros.collect(probe, JointState, "/joint_states")
    heater_states = ros.collect(probe, HeaterState, "/heater/state")
    clocks: list[tuple[float, float]] = []  # (wall s, sim s)
    probe.create_subscription(
        Clock, "/clock", lambda m: clocks.append((time.monotonic(), m.clock.sec + m.clock.nanosec * 1e-9)), qos.clock())
    scene = scenes("sim_kitchen", "--rtf", "10", "--set", "heater_sim.initial_temp_c=55")
    assert ros.wait_for(lambda: joint_states and heater_states, timeout=60.0), scene.output()
    assert len(joint_states[-1].name) == 6
    # --set reached the heater: it started at 55 °C (unheated, it only cools slowly)
    assert 50.0 < heater_states[0].medium_temp_c <= 55.0
    # --rtf reached the clock: sim time runs about 10x faster than wall time
    start = len(clocks)
    assert ros.wait_for(lambda: len(clocks) > start + 1 and clocks[-1][0] - clocks[start][0] > 1.0, timeout=10.0)
    (w0, s0), (w1, s1) = clocks[start], clocks[-1]
    assert 4.0 < (s1 - s0) / (w1 - w0) < 15.0

    children = scene.descendants()
    names = " ".join(" ".join(p.cmdline()) for p in children)
    for executable in ("sim_clock", "arm_sim", "heater_sim", "capabilities_node"):
        assert executable in names
    stopped_at = time.monotonic()
    scene.proc.send_signal(signal.SIGTERM)
    assert_all_gone(children, timeout=5.0)  # every node gone within 5 s of the SIGTERM
    assert time.monotonic() - stopped_at < 5.0
    assert scene.proc.wait(timeout=10.0) == 0, scene.output()
    assert "stopped: sim_clock (" in scene.output()


def test_a_required_node_that_dies_takes_the_scene_down(scenes):
    scene = scenes("sim_kitchen", "--startup-s", "1.5")
    scene.wait_for_output("scene 'sim_kitchen' up")
    children = scene.descendants()
    (heater,) = [p for p in children if any(part.endswith("heater_sim") for part in p.cmdline())]
    heater.send_signal(signal.SIGKILL)
    assert scene.proc.wait(timeout=15.0) == 1
    assert "stopping scene 'sim_kitchen': required node 'heater_sim' exited (killed by SIGKILL)" in scene.output()
    assert_all_gone(children)


def test_a_node_failing_at_start_up_fails_the_start_and_says_why(scenes, tmp_path):
    manifest = write_manifest(tmp_path, [
        {"name": "clock", "package": "cookwala_ros", "executable": "sim_clock"},
        {"name": "heater", "package": "cookwala_ros", "executable": "heater_sim", "parameters": {"medium": "lava"}},
    ])
    scene = scenes(manifest, "--startup-s", "60")  # generous: the failure ends the wait at once
    assert scene.proc.wait(timeout=60.0) == 1
    out = scene.output()
    assert "failed to start scene 'test_scene': required node 'heater' exited during start-up (exit code 2)" in out
    assert any(line.startswith("[heater]") and "medium" in line for line in out.splitlines())


def test_an_unknown_executable_fails_before_anything_starts(tmp_path):
    manifest = write_manifest(tmp_path, [
        {"name": "clock", "package": "cookwala_ros", "executable": "sim_clock"},
        {"name": "ghost", "package": "cookwala_ros", "executable": "no_such_node"},
    ])
    done = subprocess.run(CLI + ["up", manifest], capture_output=True, text=True, timeout=20)
    assert done.returncode == 2
    assert "node 'ghost': package 'cookwala_ros' has no executable 'no_such_node'" in done.stderr
    assert "[clock]" not in done.stdout  # nothing was started


@pytest.mark.parametrize("args, message", [
    (["nowhere"], "unknown scene 'nowhere'"),
    (["sim_kitchen", "--set", "gripper.x=1"], "override for unknown node 'gripper'"),
    (["sim_kitchen", "--set", "oops"], "expected NODE.PARAM=VALUE"),
    (["sim_kitchen", "--rtf", "0"], "--rtf: must be > 0"),
    (["sim_kitchen", "--arg", "speed=3"], "unknown argument 'speed'"),
])
def test_bad_command_lines_are_usage_errors(args, message, capsys):
    assert cli.main(["up", *args]) == 2
    assert message in capsys.readouterr().err


def test_dry_run_prints_each_command_line_without_help_from_path(capsys, monkeypatch):
    monkeypatch.setenv("PATH", "")  # executables resolve through the package's entry points
    assert cli.main(["up", "sim_kitchen", "--dry-run", "--rtf", "25"]) == 0
    lines = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    assert set(lines) == {"sim_clock", "arm_sim", "heater_sim", "cookwala_capabilities"}
    assert lines["sim_clock"].startswith(sys.executable + " ")
    assert " --ros-args -r __node:=sim_clock " in lines["sim_clock"]
    assert " -p real_time_factor:=25.0 " in lines["sim_clock"] and lines["sim_clock"].endswith(" -p use_sim_time:=false")
    assert "-p use_sim_time:=true" in lines["heater_sim"]
    for line in lines.values():
        script = line.split()[1]
        assert os.path.isabs(script) and os.path.isfile(script) or script == "-c"


def test_only_starts_the_named_nodes_with_the_parameters_the_scene_gives_them(capsys):
    args = ["kitchen", "--dry-run", "--rtf", "30", "--arg", "http_port=8099", "--arg", "state_dir=/tmp/s"]
    assert cli.main(["up", *args]) == 0
    full = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    assert cli.main(["up", *args, "--only", "executor"]) == 0
    only = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    assert only == {"executor": full["executor"]}
    assert "-p http_port:=8099" in only["executor"]
    assert cli.main(["up", *args, "--only", "executor,safety_monitor"]) == 0
    assert set(dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())) == {
        "executor", "safety_monitor"}


def test_only_names_an_unknown_node(capsys):
    assert cli.main(["up", "kitchen", "--only", "chef", "--dry-run"]) == 2
    assert "--only: the scene has no node 'chef' (nodes: sim_clock, arm_sim" in capsys.readouterr().err
