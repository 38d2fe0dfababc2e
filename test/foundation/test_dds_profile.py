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


def test_localhost_gets_the_loopback_profile_and_a_range_rmw_leaves_it_under():
    env = use_default_profile({"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"})
    assert env == {"FASTDDS_DEFAULT_PROFILES_FILE": profile_path(loopback=True),
                   "ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT", "COOKWALA_DISCOVERY_RANGE": "LOCALHOST"}
    assert use_default_profile(dict(env)) == env  # idempotent: a child calling it again keeps the loopback
    assert use_default_profile(dict(env, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")) == env  # a worker's conftest
    # other ranges, static peers and a user's own profile are left alone
    for other in ({"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"},
                  {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "ROS_STATIC_PEERS": "192.168.1.7"}):
        assert use_default_profile(dict(other)) == {**other, "FASTDDS_DEFAULT_PROFILES_FILE": profile_path()}
    mine = {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "FASTDDS_DEFAULT_PROFILES_FILE": "/etc/mine.xml"}
    assert use_default_profile(dict(mine)) == mine


def test_the_loopback_profile_keeps_everything_on_127_0_0_1_without_shared_memory():
    root = ET.parse(profile_path(loopback=True)).getroot()
    transport = root.find("dds:profiles/dds:transport_descriptors/dds:transport_descriptor", NS)
    assert transport.find("dds:type", NS).text == "UDPv4"
    assert [a.text for a in transport.findall("dds:interfaceWhiteList/dds:address", NS)] == ["127.0.0.1"]
    rtps = root.find("dds:profiles/dds:participant[@is_default_profile='true']/dds:rtps", NS)
    assert rtps.find("dds:useBuiltinTransports", NS).text == "false"  # no SHM, no other interface
    assert [t.text for t in rtps.findall("dds:userTransports/dds:transport_id", NS)] == [
        transport.find("dds:transport_id", NS).text]
    for where in ("dds:builtin/dds:metatrafficUnicastLocatorList", "dds:builtin/dds:initialPeersList",
                  "dds:defaultUnicastLocatorList"):
        assert [a.text for a in rtps.findall(f"{where}/dds:locator/dds:udpv4/dds:address", NS)] == ["127.0.0.1"], where
    assert rtps.find("dds:builtin/dds:metatrafficMulticastLocatorList", NS) is None


def test_both_profiles_configure_writers_alike():
    writers = [ET.tostring(ET.parse(profile_path(loopback)).getroot().find(
        "dds:profiles/dds:data_writer[@is_default_profile='true']", NS)) for loopback in (False, True)]
    assert writers[0] == writers[1]
