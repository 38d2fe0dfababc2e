"""Core version acceptance: any 0.2 patch; everything else is unsupported_version."""

from __future__ import annotations

import pytest

from cookwala_ros.core import versions


@pytest.mark.parametrize("version", ["0.2", "0.2.0", "0.2.1", "0.2.10", "0.2.999"])
def test_accepts_every_patch_of_0_2(version):
    assert versions.is_supported(version)
    assert versions.refusal(version) is None


@pytest.mark.parametrize("version", ["0.3.0", "0.1.9", "1.0", "1.2.0", "0.20.1", "0.2.1.4", "0.2.", "v0.2.1",
                                     "0.02.1", " 0.2.1", "0.2.1-rc1", "", "garbage", None, 0.2, ["0.2.1"]])
def test_refuses_everything_else(version):
    assert not versions.is_supported(version)
    reason, detail = versions.refusal(version)
    assert reason == "unsupported_version"
    assert "0.2.x" in detail


def test_parse_splits_numbers():
    assert versions.parse("0.2.10") == (0, 2, 10)
    assert versions.parse("0.2") == (0, 2, None)
    assert versions.parse("0.2.x") is None
