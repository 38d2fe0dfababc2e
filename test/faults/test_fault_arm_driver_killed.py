"""Issue 16, fault 7: the arm driver dies mid-cook. The safety monitor must notice its silence
(joint states older than joint_state_timeout_s), stop with `stale:joint_states`, cut the heat and
report an incident, whatever the executor does about it.

The shipped `kitchen` scene (LiveKitchen) cooks a recipe with heat; an observer node of our own
records /cookwala/safety/status, /cookwala/events and /heater/state with steady-clock receipt
times; arm_sim is SIGKILLed.
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import threading
import time
from collections import deque

import pytest

rclpy = pytest.importorskip("rclpy")
httpx = pytest.importorskip("httpx")

from rclpy.executors import SingleThreadedExecutor  # noqa: E402

from cookwala_msgs.msg import Event, HeaterState, SafetyStatus  # noqa: E402
from cookwala_msgs.srv import ResetSafety  # noqa: E402
from cookwala_ros.ros import qos  # noqa: E402
from cookwala_ros.ros.recipe_demo import LiveKitchen, request_for_recipe  # noqa: E402
from cookwala_ros.supervisor import ProcessSpec  # noqa: E402
from ros_helpers import close_spinning  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
WATER = REPO / "test" / "e2e" / "data" / "recipes" / "e2e-water-simmer.cookwala.json"
MEDIA = "application/vnd.cookwala+json"
JOINT_STATE_TIMEOUT_S = 1.0  # the scene's wall-clock staleness bound (its heater state uses 1.0 s too)
MARGIN_S = 0.5  # check period, reporting and a loaded host


class MonitoredKitchen(LiveKitchen):
    """The kitchen scene, its monitor given a temporary state_dir and the joint-state bound."""

    def __init__(self, state_dir: pathlib.Path, **kwargs):
        super().__init__(**kwargs)
        self.state_dir = state_dir

    def process_specs(self) -> list[ProcessSpec]:
        specs = super().process_specs()
        extra = ["-p", f"state_dir:={self.state_dir}", "-p", f"joint_state_timeout_s:={JOINT_STATE_TIMEOUT_S}"]
        return [ProcessSpec(s.name, [*s.argv, *extra], s.required, s.env) if s.name == "safety_monitor" else s
                for s in specs]


class Observer:
    def __init__(self):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("fault_observer", context=self.context)
        self.lock = threading.Lock()
        self.statuses: deque = deque(maxlen=1000)
        self.events: deque = deque(maxlen=1000)
        self.heater: deque = deque(maxlen=5000)
        n = self.node
        n.create_subscription(SafetyStatus, "/cookwala/safety/status", lambda m: self._rec(self.statuses, m), qos.latched())
        n.create_subscription(Event, "/cookwala/events", lambda m: self._rec(self.events, m), qos.events())
        n.create_subscription(HeaterState, "/heater/state", lambda m: self._rec(self.heater, m), qos.sensor())
        self.reset_client = n.create_client(ResetSafety, "/safety_monitor/reset")
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(n)
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self):
        try:
            self.executor.spin()
        except Exception:  # noqa: BLE001 - shut down under us
            pass

    def _rec(self, log, msg):
        with self.lock:
            log.append((time.monotonic(), msg))

    def first(self, log, t0, predicate):
        with self.lock:
            return next(((t, m) for t, m in log if t >= t0 and predicate(m)), None)

    def status(self):
        with self.lock:
            return self.statuses[-1][1] if self.statuses else None

    def armed(self) -> bool:
        """Armed, resetting locally if a loaded host tripped a staleness rule during start-up."""
        status = self.status()
        if status is not None and status.state_label == "armed":
            return True
        if status is not None and self.reset_client.wait_for_service(timeout_sec=1.0):
            future = self.reset_client.call_async(ResetSafety.Request(requested_by="fault test"))
            wait_for(future.done, 5.0, "the reset reply")
            time.sleep(0.2)
        return False

    def close(self):
        close_spinning(self.executor, self.node, self.context, self.thread)


def wait_for(predicate, timeout_s: float, what: str):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")


def test_killing_the_arm_driver_mid_cook_stops_and_cuts_heat(tmp_path):
    log = open(os.environ["COOKWALA_FAULT_LOG"], "a") if os.environ.get("COOKWALA_FAULT_LOG") else None  # debugging
    kitchen = MonitoredKitchen(tmp_path / "monitor-state", rtf=20.0, recipes=[WATER], startup_timeout_s=120.0,
                               data_dir=str(tmp_path / "data"), quiet=log is None, output=log)
    kitchen.start()
    observer = Observer()
    try:
        wait_for(observer.armed, 60.0, "the monitor armed")
        kitchen.set_presence(True)
        body = request_for_recipe(json.loads(WATER.read_text()), key="fault-arm-driver-0001")
        r = httpx.post(kitchen.base_url + "/v1/executions", json=body,
                       headers={"content-type": MEDIA, "Idempotency-Key": body["idempotencyKey"]}, timeout=10.0)
        assert r.status_code == 202, r.text
        t_start = time.monotonic()
        wait_for(lambda: observer.first(observer.heater, t_start, lambda m: m.power_w > 100.0), 60.0, "heat on")
        assert observer.status().state_label == "armed", observer.status().last_trigger_detail

        os.kill(kitchen.supervisor.pids["arm_sim"], signal.SIGKILL)
        t_kill = time.monotonic()

        def stale_event():
            found = observer.first(observer.events, t_kill,
                                   lambda e: json.loads(e.data).get("trigger") == "stale:joint_states")
            return found and (found[0], json.loads(found[1].data))

        t_event, data = wait_for(stale_event, JOINT_STATE_TIMEOUT_S + 5.0, "the stale:joint_states incident")
        t_stopped, status = wait_for(
            lambda: observer.first(observer.statuses, t_kill, lambda s: s.state_label in ("stopped", "fault")
                                   and "stale:joint_states" in s.active_triggers),
            2.0, "a stopped status naming stale:joint_states")
        t_off = wait_for(lambda: observer.first(observer.heater, t_kill, lambda m: m.power_w <= 1.0), 5.0, "0 W")[0]
        print(f"kill -> status {t_stopped - t_kill:.3f} s, -> incident {t_event - t_kill:.3f} s, "
              f"-> 0 W {t_off - t_kill:.3f} s (bound {JOINT_STATE_TIMEOUT_S} s + {MARGIN_S} s)")
        assert t_stopped - t_kill <= JOINT_STATE_TIMEOUT_S + MARGIN_S
        assert t_off - t_kill <= JOINT_STATE_TIMEOUT_S + MARGIN_S + 1.0  # heat cut within 1 s of the trigger
        assert data["incident"] and "joint_states" in data["detail"]
        # the heat stays off while the monitor holds the stop
        time.sleep(1.0)
        with observer.lock:
            late = [m.power_w for t, m in observer.heater if t >= t_off + 0.2]
        assert late and max(late) <= 1.0
        assert observer.status().state_label in ("stopped", "fault")
        # and the stop is persisted for a restarted monitor
        assert (tmp_path / "monitor-state" / "safety_latch.json").is_file()
    finally:
        observer.close()
        kitchen.stop()
        if log is not None:
            log.close()
