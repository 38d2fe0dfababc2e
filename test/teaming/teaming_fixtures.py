"""Small builders shared by the teaming tests (a plain module: conftest imports are ambiguous here)."""

from __future__ import annotations

import json
import pathlib

import pytest

from cookwala_ros.core.sensor_trust import parse_time
from cookwala_ros.teaming.types import Bid, CallForProposals, Task

DEADLINE = "2026-10-03T18:00:00Z"
DEADLINE_S = parse_time(DEADLINE).timestamp()


class FakeClock:
    """Seconds since the epoch that only move when a test says so."""

    def __init__(self, now: float = DEADLINE_S - 10.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def capabilities(actor_id: str, ops: list[str], *, sensors: list[str] = (), heat: list[str] = ()) -> dict:
    """A minimal Cookwala capabilities document."""
    return {
        "cookwala": "0.2.1",
        "actor": {"kind": "robot", "id": actor_id},
        "capabilities": {
            "ops": [{"op": op} for op in ops],
            "sensors": [{"sensor": s} for s in sensors],
            "heat": [{"id": f"heat-{i}", "class": cls} for i, cls in enumerate(heat)],
        },
    }


def cfp(*tasks: Task, cfp_id: str = "cfp-1", deadline: str | None = DEADLINE) -> CallForProposals:
    return CallForProposals(cfp_id, "robot:hub", tasks, deadline, "session-1")


def bid(actor: str, task: str, duration: float, *, eta: float = 0.0, cfp_id: str = "cfp-1") -> Bid:
    return Bid(cfp_id, actor, task, True, eta, duration)


def standard_validator(spec_dir: pathlib.Path, ref: str):
    """A Draft 2020-12 validator for `ref` (e.g. `advice.schema.json#/$defs/TeamPlan`) over the
    published standard's schemas; skips the test without jsonschema/referencing."""
    jsonschema = pytest.importorskip("jsonschema")
    referencing = pytest.importorskip("referencing")
    resources = []
    for path in sorted((spec_dir / "schemas").glob("*.schema.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        resources.append((document["$id"], referencing.Resource.from_contents(document)))
    registry = referencing.Registry().with_resources(resources)
    return jsonschema.Draft202012Validator({"$ref": "https://cookwala.ai/v1/schemas/" + ref}, registry=registry,
                                           format_checker=jsonschema.FormatChecker())
