"""ROS 2 workspace proof: colcon builds this repo (both packages) against the venv's ament
prefix, and the result runs on its own — cookwala_msgs and cookwala_ros come from the workspace
install, not from the venv.

This is the slowest test (it compiles the interfaces again, about 2–4 minutes on 2 cores).
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

VENV = pathlib.Path(sys.prefix)
COLCON = VENV / "bin" / "colcon"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, repo_root):
    if not COLCON.exists():
        pytest.skip(f"colcon is not installed in {VENV} (requirements/test.txt installs it)")
    ws = tmp_path_factory.mktemp("colcon_ws")
    env = dict(os.environ)
    env.update(AMENT_PREFIX_PATH=str(VENV), CMAKE_PREFIX_PATH=str(VENV), VIRTUAL_ENV=str(VENV))
    env["PATH"] = f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    cmd = [
        str(COLCON), "build",
        "--base-paths", str(repo_root), str(repo_root / "cookwala_msgs"),
        "--cmake-args",
        f"-DCMAKE_PROJECT_INCLUDE={repo_root / 'cmake' / 'repair_wheel_include_dirs.cmake'}",
        f"-DPython3_EXECUTABLE={sys.executable}",
        "-DBUILD_TESTING=OFF",
        "--event-handlers", "console_cohesion-", "console_direct-",
    ]
    # Background work: at nice 19 the compilers cannot starve the kitchen scenes other workers run
    # (a starved scene misses its real-time stop bounds; CI saw a 2 s stall).
    result = subprocess.run(cmd, cwd=ws, env=env, capture_output=True, text=True, timeout=1200,
                            preexec_fn=lambda: os.nice(19))
    assert result.returncode == 0, f"colcon build failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    assert "2 packages finished" in result.stdout, result.stdout[-2000:]
    yield ws
    shutil.rmtree(ws / "build", ignore_errors=True)


def in_workspace(ws: pathlib.Path, command: str) -> subprocess.CompletedProcess:
    """Run a shell command the way a ROS user does: after sourcing install/setup.bash."""
    env = {k: v for k, v in os.environ.items() if k not in ("COOKWALA_ROS_SHARE", "PYTHONPATH")}
    env["PATH"] = f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        ["bash", "-c", f"source install/setup.bash && {command}"],
        cwd=ws, env=env, capture_output=True, text=True, timeout=120,
    )


@pytest.mark.timeout(1500)
def test_workspace_install_imports_its_own_packages(workspace):
    result = in_workspace(
        workspace,
        f"{sys.executable} -c 'import cookwala_msgs.action, cookwala_msgs.srv, cookwala_ros, cookwala_ros.resources as r;"
        " print(cookwala_msgs.__file__); print(cookwala_ros.__file__); print(r.share_dir())'",
    )
    assert result.returncode == 0, result.stderr
    msgs_file, ros_file, share = result.stdout.split()
    install = str(workspace / "install")
    assert msgs_file.startswith(install), msgs_file
    assert ros_file.startswith(install), ros_file
    assert share == f"{install}/cookwala_ros/share/cookwala_ros"


@pytest.mark.timeout(1500)
def test_workspace_entry_point_runs(workspace):
    script = workspace / "install" / "cookwala_ros" / "lib" / "cookwala_ros" / "cookwala-ros"
    assert script.is_file(), "ament_python puts executables in lib/<package> for `ros2 run`"
    result = in_workspace(workspace, f"{script} capabilities")
    assert result.returncode == 0, result.stderr
    assert '"cookwala": "0.2.1"' in result.stdout
    for executable in ("capabilities_node",):
        assert (script.parent / executable).is_file()
