"""Fixtures for executor service tests: a recipe library, the device config, service factories."""

from __future__ import annotations

import json
import uuid

import pytest

from cookwala_ros.core.trust import document_hash
from cookwala_ros.device import load_device_config
from cookwala_ros.executor.config import ExecutorConfig
from cookwala_ros.executor.service import ExecutorService

from executor_kitchen import Kitchen, KitchenPorts


@pytest.fixture(scope="session")
def soup(repo_root) -> dict:
    return json.loads((repo_root / "examples" / "recipes" / "tomato-soup.cookwala.json").read_text())


@pytest.fixture()
def install(tmp_path):
    """install(recipe) writes it into the test library and returns its hash."""
    folder = tmp_path / "data" / "recipes"
    folder.mkdir(parents=True, exist_ok=True)

    def _install(recipe: dict) -> str:
        path = folder / f"{recipe['id']}.{uuid.uuid4().hex[:6]}.cookwala.json"
        path.write_text(json.dumps(recipe))
        return document_hash(recipe)

    return _install


@pytest.fixture()
def device_config(tmp_path):
    def _config(**overrides) -> ExecutorConfig:
        return ExecutorConfig.from_device(load_device_config(), data_dir=tmp_path / "data", **overrides)

    return _config


@pytest.fixture()
def kitchen():
    return Kitchen()


@pytest.fixture()
def service(device_config, kitchen):
    """make(**config overrides) -> an ExecutorService on the kitchen; closed after the test."""
    made: list[ExecutorService] = []

    def _make(**overrides) -> ExecutorService:
        svc = ExecutorService(device_config(**overrides), KitchenPorts(kitchen), clock=lambda: kitchen.now)
        made.append(svc)
        return svc

    yield _make
    for svc in made:
        svc.close()


