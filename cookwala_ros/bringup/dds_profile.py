"""The Fast DDS profile our processes run with unless the user chose one (config/dds/).

With ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST, rmw_fastrtps replaces a profile's transports with
its own shared-memory + UDP pair, and Fast DDS's shared memory blocks a sender for up to 1 s after
a peer's SIGKILL (config/dds/fastdds_loopback.xml says more). So when LOCALHOST is asked (without
static peers), our processes get the loopback profile, which keeps discovery and data on
127.0.0.1 over UDP, and the range SYSTEM_DEFAULT, under which rmw_fastrtps leaves the profile's
transports alone; COOKWALA_DISCOVERY_RANGE records what was asked.
"""

from __future__ import annotations

import os
from typing import MutableMapping

PROFILE_VARIABLES = ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE")
RANGE = "ROS_AUTOMATIC_DISCOVERY_RANGE"
ASKED_RANGE = "COOKWALA_DISCOVERY_RANGE"


def profile_path(loopback: bool = False) -> str:
    from cookwala_ros import resources

    name = "fastdds_loopback.xml" if loopback else "fastdds_profiles.xml"
    return str(resources.share_path("config", "dds", name))


def use_default_profile(env: MutableMapping[str, str] = os.environ) -> MutableMapping[str, str]:
    """Point `env` at our profile when it names none of its own (a user's own profile wins):
    the loopback one, with the range SYSTEM_DEFAULT, when LOCALHOST is asked. Idempotent."""
    chosen = next((env[name] for name in PROFILE_VARIABLES if env.get(name)), None)
    if chosen is not None and chosen not in (profile_path(False), profile_path(True)):
        return env
    asked = (env.get(RANGE) or "").strip().upper()
    if asked == "SYSTEM_DEFAULT" and env.get(ASKED_RANGE) == "LOCALHOST" and chosen == profile_path(True):
        asked = "LOCALHOST"  # already ours: a second call keeps the loopback
    loopback = asked == "LOCALHOST" and not env.get("ROS_STATIC_PEERS")
    path = profile_path(loopback)
    if not os.path.isfile(path):
        return env
    env["FASTDDS_DEFAULT_PROFILES_FILE"] = path
    if loopback:
        env[RANGE] = "SYSTEM_DEFAULT"
        env[ASKED_RANGE] = "LOCALHOST"
    return env
