"""What the end-to-end tests share about the kitchen's Core HTTP API: recipes, requests, waits.

A plain module with a unique name (not conftest), so importing it never picks up another
directory's conftest when several test folders run together.
"""

from __future__ import annotations

import json
import pathlib
import time

import httpx

from cookwala_ros.ros.recipe_demo import request_for_recipe

REPO = pathlib.Path(__file__).resolve().parents[2]
E2E_RTF = 20.0
SOUP = REPO / "examples" / "recipes" / "tomato-soup.cookwala.json"
CHIPS = REPO / "examples" / "recipes" / "chips-deep-fry.cookwala.json"
WATER = REPO / "test" / "e2e" / "data" / "recipes" / "e2e-water-simmer.cookwala.json"
MEDIA = "application/vnd.cookwala+json"
FINAL = ("completed", "stopped", "refused", "failed")


def doc(path: pathlib.Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def request(path: pathlib.Path, key: str) -> dict:
    return request_for_recipe(doc(path), key=key)


def wait_final(base_url: str, execution: str, timeout_s: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = httpx.get(f"{base_url}/v1/executions/{execution}").json()
        if status["state"] in FINAL:
            return status
        time.sleep(0.1)
    raise AssertionError(f"{execution} did not end within {timeout_s} s (last {status['state']})")
