"""The monitor under an external lifecycle manager (`autostart:=false`): configured and activated
through the standard lifecycle services, it arms once the heater state arrives, and then stops
the kitchen through its Stop service (heater OFF from the monitor, 0 W within 1 s).

The heater starts only after the activation: the activate transition must answer at once
(nothing may wait inside it for a message its own executor has to deliver), and the monitor
must say what it waits for and stay unarmed until then.
"""

from __future__ import annotations

import math
import time

import pytest

rclpy = pytest.importorskip("rclpy")

from lifecycle_msgs.msg import State, Transition  # noqa: E402
from lifecycle_msgs.srv import ChangeState, GetState  # noqa: E402

from cookwala_msgs.msg import HeaterCommand  # noqa: E402
from cookwala_msgs.srv import Stop  # noqa: E402
from safety_kitchen import Probe, heat_while_armed, start_node, start_script, stop_processes  # noqa: E402

MONITOR = "/safety_monitor"
HEAT_DEADLINE_S = 1.0  # CORE §6.2


def transition(probe: Probe, client, transition_id: int) -> bool:
    return probe.call(client, ChangeState.Request(transition=Transition(id=transition_id)), timeout=10.0).success


def first_contact(get, timeout: float = 60.0) -> int:
    """The monitor's lifecycle state, asked until it answers: seeing a service says nothing of the
    server's side of discovery, and until the server has matched this client's request writer
    (and its reply reader) a request (a reply) is dropped. Endpoints are announced in the order they
    were created and taken in in that order, so once the client created last is answered, every
    earlier one is matched both ways and each later call is answered once. GetState only reads."""
    deadline = time.monotonic() + timeout
    while True:
        future = get.call_async(GetState.Request())
        if _done_within(future, 1.0):
            return future.result().current_state.id
        get.remove_pending_request(future)
        assert time.monotonic() < deadline, f"{get.srv_name} never answered in {timeout:g} s"


def _done_within(future, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while not future.done() and time.monotonic() < end:
        time.sleep(0.01)
    return future.done()


def lifecycle_state(probe: Probe, client) -> int:
    return probe.call(client, GetState.Request(), timeout=10.0).current_state.id


def test_a_managed_monitor_is_activated_from_outside_and_stops_the_kitchen(tmp_path):
    procs = [start_node("cookwala_ros.ros.arm_sim_node", {"initial_pose": "home"}),
             # heat needs a live executor heartbeat; long lease: heartbeat loss is not under test here
             start_script("safety_heartbeat_sender.py", args=("--ros-args", "-p", "lease_s:=2.0")),
             start_node("cookwala_ros.ros.safety_monitor_node",
                        {"autostart": False, "state_dir": str(tmp_path), "heartbeat_lease_s": 2.0,
                         "activation_timeout_s": 30.0})]
    probe = Probe()
    change = probe.node.create_client(ChangeState, f"{MONITOR}/change_state")
    get = probe.node.create_client(GetState, f"{MONITOR}/get_state")  # created last: see first_contact
    try:
        assert change.wait_for_service(timeout_sec=60.0) and get.wait_for_service(timeout_sec=60.0), \
            "no lifecycle services"
        assert first_contact(get) == State.PRIMARY_STATE_UNCONFIGURED
        assert probe.status() is None  # not self-starting: nothing configured, nothing reported

        assert transition(probe, change, Transition.TRANSITION_CONFIGURE)
        assert lifecycle_state(probe, get) == State.PRIMARY_STATE_INACTIVE
        # no heater yet: the transition answers at once (within the call's 10 s, a third of the
        # 30 s activation_timeout_s a blocking wait would have used) and the monitor waits unarmed
        assert transition(probe, change, Transition.TRANSITION_ACTIVATE)
        assert lifecycle_state(probe, get) == State.PRIMARY_STATE_ACTIVE
        waiting = probe.wait_for(lambda: (s := probe.status()) and "waiting:heater_state" in s.active_triggers and s,
                                 10.0, "a status saying it waits for the heater state")
        assert waiting.state_label == "unconfigured"
        time.sleep(0.5)
        assert probe.status().state_label == "unconfigured"  # never armed without a heater state

        procs.append(start_node("cookwala_ros.ros.heater_sim_node", {"medium": "water", "medium_mass_kg": 1.0}))
        armed = probe.wait_state("armed", timeout=60.0)
        assert not armed.active_triggers
        probe.wait_for(lambda: probe.last_heater() and probe.last_joints(), 30.0, "heater and joint states at the probe")

        heat_while_armed(probe)  # the arm rests: its motion stop is test_safety_node_stops' subject
        t_stop = time.monotonic()
        reply = probe.call(probe.stop_client, Stop.Request(requested_by="test", reason="managed lifecycle"))
        assert reply.accepted
        status = probe.wait_for(lambda: (s := probe.status()) and s.last_trigger == "stop_request"
                                and not math.isnan(s.last_heat_off_latency_s) and s, 5.0, "a verified stop")
        assert status.state_label == "stopped", status.last_trigger_detail
        assert status.last_heat_off_latency_s < HEAT_DEADLINE_S  # measured by the monitor, steady clock
        off_cmd = probe.first_after(probe.heater_commands, t_stop, lambda m: m.mode == HeaterCommand.MODE_OFF
                                    and m.source == "safety_monitor")
        zero_at = probe.first_after(probe.heater, t_stop, lambda m: m.power_w <= 1.0)
        assert off_cmd is not None and zero_at is not None
        print(f"stop -> heater off command {off_cmd - t_stop:.3f} s, -> 0 W read {zero_at - t_stop:.3f} s")
        assert zero_at - t_stop < HEAT_DEADLINE_S  # seen by the probe, same steady clock

        # deactivated from outside: it leaves the kitchen halted and says it no longer watches
        assert transition(probe, change, Transition.TRANSITION_DEACTIVATE)
        assert lifecycle_state(probe, get) == State.PRIMARY_STATE_INACTIVE
        probe.wait_state("unconfigured", timeout=5.0)
        assert probe.last_heater().power_w <= 1.0
    finally:
        probe.close()
        stop_processes(procs)
