"""The node's own StopRequests: one builder, the implemented Core version, valid against the schema."""

from __future__ import annotations

import pathlib
import re

from cookwala_ros import CORE_VERSION
from cookwala_ros.core import schemas, versions
from cookwala_ros.executor.status import STOP_REASON_MAX, stop_request

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "cookwala_ros"


def test_a_stop_request_of_our_own_is_valid_and_says_the_implemented_version():
    doc = stop_request("exec-1", "executor", "the heater driver is silent " * 20)
    assert schemas.validate(doc, "StopRequest") == []
    assert doc["core"] == CORE_VERSION == versions.IMPLEMENTED
    assert len(doc["reason"]) == STOP_REASON_MAX
    assert "reason" not in stop_request("exec-1", "ros")  # no empty reason on the wire


def test_stop_requests_are_built_in_one_place():
    builders = [path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
                if re.search(r"""["']kind["']\s*:\s*["']StopRequest["']""", path.read_text(encoding="utf-8"))]
    assert builders == ["executor/status.py"]

