"""`cookwala-ros demo` (what `make demo` runs), shortened: same code, faster clock, shorter hold."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

pytest.importorskip("rclpy", reason="rclpy (ROS 2 wheels) is not installed")
pytest.importorskip("matplotlib", reason="matplotlib is not installed")

CLI = [sys.executable, "-m", "cookwala_ros.cli", "demo"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_demo_runs_the_kitchen_and_writes_the_plot(tmp_path):
    plot = tmp_path / "plot" / "kitchen.png"
    done = subprocess.run(
        CLI + ["--rtf", "40", "--hold-s", "10", "--poses", "home,above_hob,home", "--output", str(plot), "--quiet-nodes",
               "--timeout-s", "60"],
        capture_output=True, text=True, timeout=150,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "arm visited 3 poses: home -> above_hob -> home" in out
    assert "simmer reached" in out and "held " in out
    assert f"plot written to {plot}" in out
    assert plot.read_bytes().startswith(PNG_MAGIC) and plot.stat().st_size > 10_000


def test_demo_fails_with_a_message_when_the_scene_breaks(tmp_path):
    manifest = tmp_path / "broken.yaml"
    manifest.write_text(yaml.safe_dump({"format": 1, "use_sim_time": True, "arguments": {"real_time_factor": 1.0}, "nodes": [
        {"name": "sim_clock", "package": "cookwala_ros", "executable": "sim_clock", "use_sim_time": False,
         "parameters": {"real_time_factor": "$(arg real_time_factor)"}},
        {"name": "heater_sim", "package": "cookwala_ros", "executable": "heater_sim", "parameters": {"medium": "lava"}},
    ]}))
    done = subprocess.run(CLI + ["--scene", str(manifest), "--rtf", "10", "--output", str(tmp_path / "x.png")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "FAILED: required node 'heater_sim' exited" in done.stdout
    assert not (tmp_path / "x.png").exists()


def test_demo_rejects_a_target_outside_the_simmer_band(tmp_path):
    done = subprocess.run(CLI + ["--target-c", "99", "--output", str(tmp_path / "x.png")],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "--target-c must lie inside the simmer band" in done.stderr
