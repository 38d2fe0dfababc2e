"""Where the published Cookwala standard is: COOKWALA_SPEC_DIR, default ../shared/cookwala-spec.

A plain module (not conftest.py) so that test modules can use it at collection time, e.g. to
parametrize over upstream vectors; several conftest.py files exist and `from conftest import`
would pick whichever was imported first.
"""

from __future__ import annotations

import os
import pathlib

REPO = pathlib.Path(__file__).resolve().parent.parent
SETTING = "COOKWALA_SPEC_DIR"
SKIP_MESSAGE = (
    "the published Cookwala standard was not found: set COOKWALA_SPEC_DIR "
    "(default ../shared/cookwala-spec) to run tests that read it"
)


def spec_dir_or_none() -> pathlib.Path | None:
    raw = os.environ.get(SETTING)
    path = pathlib.Path(raw) if raw else REPO.parent / "shared" / "cookwala-spec"
    return path if (path / "docs" / "CORE.md").is_file() else None
