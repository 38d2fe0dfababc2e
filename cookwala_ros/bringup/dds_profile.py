"""The Fast DDS profile our processes run with unless the user chose one (config/dds/)."""

from __future__ import annotations

import os
from typing import MutableMapping

PROFILE_VARIABLES = ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE")


def profile_path() -> str:
    from cookwala_ros import resources

    return str(resources.share_path("config", "dds", "fastdds_profiles.xml"))


def use_default_profile(env: MutableMapping[str, str] = os.environ) -> MutableMapping[str, str]:
    """Point `env` at our profile when it names none (a user's own profile wins)."""
    if not any(env.get(name) for name in PROFILE_VARIABLES):
        path = profile_path()
        if os.path.isfile(path):
            env["FASTDDS_DEFAULT_PROFILES_FILE"] = path
    return env
