"""RFC 3339 times as our documents and CloudEvents write them: UTC, milliseconds, `Z`."""

from __future__ import annotations

import datetime


def rfc3339(seconds: float) -> str:
    """Seconds since the epoch -> e.g. 2026-11-29T18:04:12.250Z."""
    when = datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
