"""The Fast DDS profile our scenes run with (config/dds/): shipped, well-formed, and never over a
profile the user chose."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from cookwala_ros.bringup.dds_profile import profile_path, use_default_profile

NS = {"dds": "http://www.eprosima.com"}


def test_the_default_writer_sends_a_heartbeat_every_100_ms():
    root = ET.parse(profile_path()).getroot()
    writer = root.find("dds:profiles/dds:data_writer[@is_default_profile='true']", NS)
    assert writer is not None
    period = writer.find("dds:times/dds:heartbeat_period", NS)
    assert (int(period.find("dds:sec", NS).text), int(period.find("dds:nanosec", NS).text)) == (0, 100_000_000)


def test_ours_only_when_none_is_set():
    assert use_default_profile({}) == {"FASTDDS_DEFAULT_PROFILES_FILE": profile_path()}
    for variable in ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE"):
        assert use_default_profile({variable: "/etc/mine.xml"}) == {variable: "/etc/mine.xml"}
