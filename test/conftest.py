"""Shared test set-up: ROS isolation and the location of the published standard.

ROS isolation happens at import time, before any test module can call rclpy.init():
every pytest run (and every xdist worker) gets its own ROS_DOMAIN_ID, discovery stays on this
host, and ROS logs go to a temporary directory. Child processes inherit all of it.
"""

from __future__ import annotations

import faulthandler
import os
import pathlib
import sys
import tempfile
import time

import pytest

from spec_location import SKIP_MESSAGE, spec_dir_or_none

REPO = pathlib.Path(__file__).resolve().parent.parent


def _isolate_ros() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0
    # `make test` exports COOKWALA_TEST_DOMAIN_BASE (a per-run value); each worker adds its index.
    # Without it, the controlling pytest process picks one before xdist starts its workers,
    # which inherit it.
    if "PYTEST_XDIST_WORKER" not in os.environ:
        os.environ.setdefault("COOKWALA_TEST_DOMAIN_BASE", str((os.getpid() % 18) * 5 + 1))
    base = int(os.environ["COOKWALA_TEST_DOMAIN_BASE"])
    os.environ["ROS_DOMAIN_ID"] = str((base + index) % 101)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ.pop("ROS_LOCALHOST_ONLY", None)
    if not os.environ.get("ROS_LOG_DIR"):
        os.environ["ROS_LOG_DIR"] = tempfile.mkdtemp(prefix=f"cookwala-roslog-{worker}-")
    os.environ.setdefault("ROS_HOME", os.environ["ROS_LOG_DIR"])
    # the Fast DDS profile the product's scenes run with (config/dds/), for this process and its children
    from cookwala_ros.bringup.dds_profile import use_default_profile

    use_default_profile(os.environ)


_isolate_ros()

# A test that hangs with the GIL held (seen once, in a scene's teardown) is beyond pytest-timeout:
# its signal handler and its thread both need the GIL. faulthandler's watchdog is a C thread: past
# the test's own timeout plus this margin it prints every thread's stack and ends the worker, so
# the run reports that test and the stacks instead of hanging until the CI job is killed.
HANG_MARGIN_S = 120.0


def _hang_after_s(item: pytest.Item) -> float:
    mark = item.get_closest_marker("timeout")
    timeout = float(mark.args[0]) if mark and mark.args else float(item.config.getini("timeout") or 300)
    return timeout + HANG_MARGIN_S


# The stacks go to a file of their own (`make test` prints it after the run): the worker's stderr
# is pytest's capture file at that moment, which dies with the worker.
_HANG_FILE = open(os.path.join(os.environ["ROS_LOG_DIR"],  # noqa: SIM115 - open for the whole run
                               f"hang-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{os.getpid()}.txt"), "w")


def _note_hang_candidate(text: str) -> None:
    _HANG_FILE.seek(0)
    _HANG_FILE.truncate()
    _HANG_FILE.write(text)
    _HANG_FILE.flush()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Covers the item's set-up, call and teardown, module-scoped fixtures included."""
    _note_hang_candidate(f"{item.nodeid} did not end within {_hang_after_s(item):g} s; every thread's stack:\n")
    faulthandler.dump_traceback_later(_hang_after_s(item), exit=True, file=_HANG_FILE)
    item.stash[_STARTED_AT] = time.monotonic()
    helpers = sys.modules.get("ros_helpers")
    item.stash[_ALIVE_AT_START] = helpers.NodeLogs.alive() if helpers is not None else []
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
        _note_hang_candidate("")


_STARTED_AT = pytest.StashKey[float]()
_ALIVE_AT_START = pytest.StashKey[list]()  # node processes running when the item began (a module fixture's)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    """A failing test's report ends with the output of the node processes it ran (ros_helpers.NodeLogs)."""
    outcome = yield
    report = outcome.get_result()
    if not report.failed or _STARTED_AT not in item.stash:
        return
    helpers = sys.modules.get("ros_helpers")
    text = helpers.NodeLogs.report(item.stash[_STARTED_AT], item.stash.get(_ALIVE_AT_START, [])) \
        if helpers is not None else ""
    if text:
        report.sections.append(("node output (last lines of each process)", text))


@pytest.fixture(scope="session")
def spec_dir() -> pathlib.Path:
    """Path of the published Cookwala standard; skips the test when it is absent."""
    path = spec_dir_or_none()
    if path is None:
        pytest.skip(SKIP_MESSAGE)
    return path


@pytest.fixture(scope="session")
def repo_root() -> pathlib.Path:
    return REPO
