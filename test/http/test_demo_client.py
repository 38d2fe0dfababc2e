"""The demo client cooks the sample soup over HTTP against the real service, in-process.

A thread drives the service's control loop with the pure sim models (Part B's in-process
kitchen: hardware simulation only) as fast as it can, while the client polls over the ASGI app.
"""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
import sys
import threading

import pytest
from fastapi.testclient import TestClient

from cookwala_ros.executor.service import ExecutorService
from cookwala_ros.http.app import create_app
from cookwala_ros.http.demo_client import ProgressView, bar, cook, log_summary
from http_helpers import REPO, SOUP, SOUP_REQUEST

sys.path.insert(0, str(REPO / "test" / "executor"))
from executor_kitchen import Kitchen, KitchenPorts  # noqa: E402


class Driver(threading.Thread):
    """Ticks the service against the sim kitchen until told to stop."""

    def __init__(self, service, kitchen):
        super().__init__(daemon=True)
        self.service, self.kitchen = service, kitchen
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            self.kitchen.apply(self.service.tick(self.kitchen.now, self.kitchen.observe()))
            self.kitchen.step(0.2)


@pytest.fixture
def live_service(tmp_path, device_executor_config):
    library = tmp_path / "recipes"
    library.mkdir()
    shutil.copy(SOUP, library / SOUP.name)
    kitchen = Kitchen()
    config = dataclasses.replace(device_executor_config, data_dir=tmp_path / "data", library_dir=library)
    service = ExecutorService(config, KitchenPorts(kitchen), clock=lambda: kitchen.now, poll_recalls=False)
    driver = Driver(service, kitchen)
    driver.start()
    yield service
    driver.done.set()
    driver.join(10)
    service.close()


def test_bar_is_proportional():
    assert bar(0.0, 10) == "[..........]   0.0%"
    assert bar(0.5, 10) == "[#####.....]  50.0%"
    assert bar(1.0, 10).startswith("[##########]")


def test_cooks_the_soup_with_plain_progress_lines(live_service):
    request = json.loads(SOUP_REQUEST.read_text(encoding="utf-8"))
    out = io.StringIO()
    with TestClient(create_app(live_service)) as client:
        result = cook("http://testserver", request, client=client, out=out, tty=False, poll_s=0.02,
                      timeout_s=120.0)
    text = out.getvalue()
    print(text + "\n".join(log_summary(result.log or {})))
    assert result.status["state"] == "completed", text
    for node in ("n1", "n2", "n3"):
        assert node in result.steps and f"step {node} " in text
    assert "\r" not in text and "[" in text and "%" in text
    assert result.log["outcome"] in ("served", "partial")
    summary = "\n".join(log_summary(result.log))
    assert "verified by sensor" in summary and "n3" in summary


def test_tty_view_redraws_in_place():
    out = io.StringIO()
    view = ProgressView(out, tty=True)
    step = {"node": "n3", "op": "cw.op.simmer", "verifiedBy": "sensor",
            "readings": [{"sensor": "cw.sense.liquid_temp", "value": 90.2, "unit": "degC"}]}
    view.update({"id": "e", "state": "running", "step": {**step, "progress": 0.1}})
    view.update({"id": "e", "state": "running", "step": {**step, "progress": 0.6}})
    view.finish_step()
    text = out.getvalue()
    assert text.count("\r\x1b[2K") == 2 and "liquid_temp 90.2 °C" in text and text.endswith("\n")
