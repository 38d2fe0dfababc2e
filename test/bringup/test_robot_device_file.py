"""Issue 10: one device file per robot, read by every node, under the robot's namespace.

One kitchen (LiveKitchen: the shipped `kitchen` scene with its safety monitor) runs under the
namespace `site_robot` from a device file that renames the arm's and the hob's topics and adds
a site SafetyLimits pack, named only there. The tests check, on the running graph:
- the capabilities document names only what is served (its action, its HTTP API, its namespace);
- the site pack is in the executor's GET /v1/safety-limits and the monitor's GetSafetyLimits,
  and a step above it is refused over HTTP;
- the executor drives the renamed topics, and on a stop the monitor's halt and heater-off appear
  on them (the default topics stay unused).
"""

from __future__ import annotations

import json
import time

import httpx
import pytest
import yaml
from rclpy.action import get_action_names_and_types

from cookwala_msgs.srv import GetCapabilities
from cookwala_ros.ros import names
from robot_watch import REPO, WATER, RobotWatch, cook, final

NAMESPACE = "site_robot"
RTF = 20.0
SITE_PACK = REPO / "test" / "e2e" / "data" / "site-limits.json"  # oil at most 180 degC
DEEP_FRY_185 = REPO / "test" / "e2e" / "data" / "recipes" / "e2e-deep-fry-185.cookwala.json"
RENAMED = {"trajectory_topic": "kitchen_arm/joint_trajectory", "joint_states_topic": "kitchen_arm/joint_states",
           "follow_joint_trajectory_action": "kitchen_arm/follow_joint_trajectory"}
RENAMED_HOB = {"command_topic": "hob_1/command", "state_topic": "hob_1/state"}


def site_device_file(tmp_path):
    device = yaml.safe_load((REPO / "config" / "device.yaml").read_text(encoding="utf-8"))
    device["arm"].update(RENAMED)
    device["heaters"][0].update(RENAMED_HOB)
    device["safety_limits"] = ["package://config/safety/device-pack.json", str(SITE_PACK)]  # the only mention
    path = tmp_path / "site-device.yaml"
    path.write_text(yaml.safe_dump(device, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def site_robot(tmp_path_factory):
    from cookwala_ros.device import load_device_config
    from cookwala_ros.ros.recipe_demo import LiveKitchen

    tmp = tmp_path_factory.mktemp("site-robot")
    device_file = site_device_file(tmp)
    kitchen = LiveKitchen(rtf=RTF, recipes=[WATER, DEEP_FRY_185], data_dir=str(tmp / "data"),
                          state_dir=str(tmp / "latch"), device_file=str(device_file), namespace=NAMESPACE,
                          startup_timeout_s=90.0)
    kitchen.start()
    watch = RobotWatch(NAMESPACE, load_device_config(device_file).names, name="site_watch")
    try:
        watch.wait(lambda: watch.state_label == "armed", 30.0, "the monitor armed")
        yield kitchen, watch
    finally:
        watch.close()
        kitchen.stop()


def test_capabilities_name_what_the_graph_serves(site_robot):
    kitchen, watch = site_robot
    doc = httpx.get(kitchen.base_url + "/v1/capabilities", timeout=10.0).json()
    interfaces = doc["interfaces"]
    assert interfaces["cookwalaHttp"] == kitchen.base_url  # the port really served
    assert httpx.get(interfaces["cookwalaHttp"] + "/v1/capabilities", timeout=10.0).json() == doc
    ros2 = interfaces["ros2"]
    assert ros2["namespace"] == f"/{NAMESPACE}"
    named = [ros2["actionServer"], ros2["x-executeNode"]]
    assert all(name.startswith(f"/{NAMESPACE}/executor/") for name in named), ros2
    # the watch's graph cache may still be filling on a loaded host: wait, bounded
    watch.wait(lambda: set(named) <= set(dict(get_action_names_and_types(watch.node))), 20.0,
               f"the actions {named} in the graph")
    nodes = lambda: {(ns, name) for name, ns in watch.node.get_node_names_and_namespaces()}  # noqa: E731
    watch.wait(lambda: {(ros2["namespace"], "executor"), (ros2["namespace"], "safety_monitor")} <= nodes(), 20.0,
               "the robot's nodes in its namespace")
    # the ROS service answers the same document
    client = watch.node.create_client(GetCapabilities, "executor/get_capabilities")  # in the namespace
    assert client.wait_for_service(timeout_sec=20.0)
    future = client.call_async(GetCapabilities.Request())
    watch.wait(future.done, 20.0, "GetCapabilities answered")
    assert json.loads(future.result().capabilities_json) == doc
    assert "follow_joint_trajectory_action" not in json.dumps(doc)


def test_a_site_pack_named_once_reaches_executor_and_monitor_and_refuses(site_robot):
    kitchen, watch = site_robot
    site = json.loads(SITE_PACK.read_text())["limits"][0]["id"]
    executor_pack = httpx.get(kitchen.base_url + "/v1/safety-limits", timeout=10.0).json()
    assert site in {limit["id"] for limit in executor_pack["limits"]}, executor_pack
    monitor_pack = watch.safety_limits()
    assert site in {limit["id"] for limit in monitor_pack["limits"]}, monitor_pack["id"]
    status = cook(kitchen.base_url, DEEP_FRY_185, key="site-pack-deep-fry-185")
    assert status["state"] == "refused" and status["refusal"]["reason"] == "safety_limit", status
    assert site in json.dumps(status["refusal"])


def test_the_executor_and_the_monitor_use_the_renamed_topics(site_robot):
    kitchen, watch = site_robot
    node = watch.node
    ns = f"/{NAMESPACE}"
    for default in ("heater/command", "heater/state", "arm_controller/joint_trajectory", "joint_states"):
        topic = f"{ns}/{default}"
        assert not node.get_publishers_info_by_topic(topic) and not node.get_subscriptions_info_by_topic(topic), topic

    def publishers(topic):
        return {f"{e.node_namespace}/{e.node_name}" for e in node.get_publishers_info_by_topic(f"{ns}/{topic}")}

    for topic in (RENAMED["trajectory_topic"], RENAMED_HOB["command_topic"]):
        watch.wait(lambda: {f"{ns}/executor", f"{ns}/safety_monitor"} <= publishers(topic), 10.0,
                   f"executor and monitor publish {topic}")

    started = cook(kitchen.base_url, WATER, key="renamed-topics-water")
    t0 = time.monotonic()
    watch.wait(lambda: any(p > 0 for p in watch.power_since(t0)), 60.0, "the hob heats (renamed state topic)")
    with watch.lock:  # the executor's heat reaches the renamed topic through its monitor's gate
        assert any(s.node == f"{ns}/safety_monitor" and s.source == "executor" and s.kind == "on"
                   for s in watch.heat), watch.heat[-5:]
    gate = f"safety_monitor/{names.GATE_HEATER_COMMAND}"
    assert f"{ns}/executor" in publishers(gate), publishers(gate)

    t_stop = time.monotonic()
    answer = watch.stop("renamed topics test")
    assert answer.accepted
    watch.wait(lambda: watch.power_since(t_stop) and watch.power_since(t_stop)[-1] == 0.0, 5.0, "0 W")
    with watch.lock:
        offs = [s for s in watch.heat if s.t >= t_stop and s.kind == "off" and s.source == "safety_monitor"]
        halts = [s for s in watch.trajectories if s.t >= t_stop and s.node == f"{ns}/safety_monitor"]
    assert offs and offs[0].node == f"{ns}/safety_monitor" and offs[0].t - t_stop < 1.0, offs[:3]
    assert halts and halts[0].t - t_stop < 1.0, halts[:3]
    assert final(kitchen.base_url, started["id"], 30.0)["state"] == "stopped"
