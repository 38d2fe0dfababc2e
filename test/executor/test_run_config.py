"""The engine's RunConfig is built by name from the device and the request (issue 14): before,
the service offered a dozen guessed names and kept those RunConfig happened to have, so a field
renamed on either side was dropped without a word."""

from __future__ import annotations

import dataclasses

import pytest

from cookwala_ros.core.run_types import RunConfig
from cookwala_ros.executor.config import PER_EXECUTION, SET_FROM_DEVICE
from cookwala_ros.executor.service import run_config

REQUEST = {"recipe": "example-recipe", "recipeHash": "sha256:" + "ab" * 32, "servings": 3}


def test_every_field_the_service_fills_in_is_a_run_config_field():
    assert PER_EXECUTION | SET_FROM_DEVICE <= {f.name for f in dataclasses.fields(RunConfig)}


def test_the_run_gets_the_device_figures_and_the_request(device_config):
    config = device_config(run_options={"motion_timeout_s": 12.5})
    run = run_config(config, "exec-1", REQUEST)
    assert (run.execution_id, run.recipe_ref, run.recipe_hash, run.servings) == (
        "exec-1", "example-recipe", REQUEST["recipeHash"], 3)
    assert run.poses == tuple(config.poses) and run.poses  # the kitchen arm's named poses
    assert run.max_heater_power_w == config.max_heater_power_w > 0
    assert run.altitude_m == config.altitude_m and run.device == config.device_info and run.limits is config.limits
    assert run.motion_timeout_s == 12.5 and run.problems() == []


@pytest.mark.parametrize("option", ["motion_timeout", "servings", "poses"])
def test_an_option_the_engine_does_not_have_or_the_service_sets_is_refused_by_name(device_config, option):
    with pytest.raises(ValueError) as refused:
        device_config(run_options={option: 1})
    assert f"run_options: {option!r} is not an engine option" in str(refused.value)
    assert "motion_timeout_s" in str(refused.value)  # and what may be set
