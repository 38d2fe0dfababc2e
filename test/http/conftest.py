"""A real ExecutorService (temporary database and recipe library) behind the HTTP app.

No ROS and no mocks: the service runs exactly as in the executor node; nothing ticks it unless a
test does, so an accepted execution simply stays `accepted` until stopped.
"""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest
from fastapi.testclient import TestClient

from cookwala_ros.device import load_device_config
from cookwala_ros.executor.config import ExecutorConfig, StaticPorts
from cookwala_ros.executor.service import ExecutorService
from cookwala_ros.http.app import create_app
from http_helpers import SOUP, SOUP_REQUEST, TOKEN


@pytest.fixture(scope="session")
def device_executor_config(tmp_path_factory):
    """The shipped device file as an ExecutorConfig (parsed once; tests replace the dirs)."""
    return ExecutorConfig.from_device(load_device_config(), data_dir=tmp_path_factory.mktemp("unused"))


@pytest.fixture
def service(tmp_path, device_executor_config):
    library = tmp_path / "recipes"
    library.mkdir()
    shutil.copy(SOUP, library / SOUP.name)
    config = dataclasses.replace(device_executor_config, data_dir=tmp_path / "data", library_dir=library)
    svc = ExecutorService(config, StaticPorts(), poll_recalls=False)
    yield svc
    svc.close()


@pytest.fixture
def client(service):
    with TestClient(create_app(service)) as c:
        yield c


@pytest.fixture
def secured(service):
    with TestClient(create_app(service, token=TOKEN)) as c:
        yield c


@pytest.fixture
def soup_request():
    """The sample ExecuteRequest for the sample soup."""
    return json.loads(SOUP_REQUEST.read_text(encoding="utf-8"))

