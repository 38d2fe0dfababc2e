"""The first real node round-trip: the capabilities node runs as its own process and a real
rclpy client in the test process calls its GetCapabilities service."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
import rclpy
from rclpy.node import Node

from cookwala_msgs.srv import GetCapabilities
from cookwala_ros.capabilities import ServedInterfaces, capabilities_document
from cookwala_ros.device import load_device_config
from cookwala_ros.ros.capabilities_node import SERVICE_NAME

DISCOVERY_TIMEOUT_S = 10.0


def start_node(*ros_args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "cookwala_ros.ros.capabilities_node", "--ros-args", *ros_args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def stop_node(proc: subprocess.Popen) -> str:
    if proc.poll() is None:
        proc.send_signal(2)  # SIGINT: the node's clean shutdown path
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.stdout.read() if proc.stdout else ""


@pytest.fixture()
def client_node():
    context = rclpy.Context()
    rclpy.init(context=context)
    node = Node("capabilities_test_client", context=context)
    yield node
    node.destroy_node()
    rclpy.shutdown(context=context)


def call(node: Node, client, request, timeout_s: float):
    future = client.call_async(request)
    executor = rclpy.executors.SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    try:
        executor.spin_until_future_complete(future, timeout_sec=timeout_s)
    finally:
        executor.remove_node(node)
    assert future.done(), "no answer from the capabilities service"
    return future.result()


def test_get_capabilities_from_another_process(client_node):
    proc = start_node()
    try:
        client = client_node.create_client(GetCapabilities, "/" + SERVICE_NAME)
        assert client.wait_for_service(timeout_sec=DISCOVERY_TIMEOUT_S), (
            f"service not discovered; node output:\n{stop_node(proc)}"
        )
        response = call(client_node, client, GetCapabilities.Request(), timeout_s=5.0)
        assert json.loads(response.capabilities_json) == capabilities_document(load_device_config(),
                                                                            ServedInterfaces(namespace="/"))
    finally:
        output = stop_node(proc)
    assert proc.returncode == 0, output


def exit_with_edited_device_file(tmp_path, old: str, new: str) -> tuple[int, str]:
    """Start the node on a copy of the shipped device file with `old` replaced; its exit code and output."""
    config = load_device_config()
    device = tmp_path / "device.yaml"
    device.write_text(open(config.source).read().replace(old, new))
    proc = start_node("-p", f"device_file:={device}")
    try:
        proc.wait(timeout=20)
    finally:
        output = stop_node(proc)
    return proc.returncode, output


def test_bad_device_file_stops_the_node_naming_the_key(tmp_path):
    code, output = exit_with_edited_device_file(tmp_path, "power_w: 2000", "power_w: lots")
    assert code == 2 and "heaters[0].power_w: expected a number" in output, output


def test_a_missing_urdf_stops_the_node_naming_the_key(tmp_path):
    urdf = load_device_config().raw["arm"]["robot_description"]
    code, output = exit_with_edited_device_file(tmp_path, urdf, "/nonexistent/arm.urdf")
    assert code == 2 and "arm.robot_description" in output and "Traceback" not in output, output
