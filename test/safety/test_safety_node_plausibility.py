"""The safety monitor's own thermometer check, with no executor to catch it first (issue 16).

A hob on sim time (RTF 20) whose medium sensor is stuck at its first reading, a probe playing an
executor that heats at full power and trusts the thermometer, and the monitor as its own
process: the monitor alone must cut the heat with a `sensor_failure` incident within the energy
bound of core.plausibility (stated in hob time, the stamps of the heater states), plus the
hob's state period and the monitor's reaction.
"""

from __future__ import annotations

import json
import time

import pytest

rclpy = pytest.importorskip("rclpy")

from safety_kitchen import Probe, rearm, start_node, start_script, stop_processes  # noqa: E402

from cookwala_ros.core import plausibility  # noqa: E402
from cookwala_ros.core.heat_model import ThermalParams  # noqa: E402

RTF = 20.0
REACTION_S = 2.0  # hob s: the state period (0.1 s) and the monitor's halt, with room for a busy host
MASS_KG = 0.5


def _stamp(msg) -> float:
    return msg.stamp.sec + msg.stamp.nanosec * 1e-9


@pytest.mark.parametrize("medium", ["water", "oil"])
def test_a_stuck_medium_sensor_is_cut_by_the_monitor_alone(medium):
    heater = {"medium": medium, "medium_mass_kg": MASS_KG, "fault.medium_sensor": "stuck", "use_sim_time": True}
    procs = [start_node("cookwala_ros.ros.sim_clock_node", {"real_time_factor": RTF, "publish_rate_hz": 200.0}),
             start_node("cookwala_ros.ros.arm_sim_node", {}),
             start_node("cookwala_ros.ros.heater_sim_node", heater),
             start_node("cookwala_ros.ros.safety_monitor_node", {"activation_timeout_s": 20.0, "heartbeat_lease_s": 1.0}),
             start_script("safety_heartbeat_sender.py")]  # offers 0.3 s: both the monitor and the probe hear it
    probe = Probe(f"plausibility_probe_{medium}")
    try:
        probe.wait_state("armed", timeout=30.0)
        probe.wait_for(probe.last_joints, 10.0, "joint states")
        # heat needs a live heartbeat as the monitor hears it (this probe hearing one is not enough:
        # each pair of processes discovers the other on its own)
        probe.wait_for(lambda: (s := probe.status()) and s.executor_heartbeat == "live", 30.0,
                       lambda: f"the monitor hearing the stand-in executor (status: {probe._describe(probe.status())})")
        bound_s = plausibility.bound_for(ThermalParams(), medium, MASS_KG, 2000.0).detection_time_s(2000.0)
        rearm(probe)
        stuck_c = probe.last_heater().medium_temp_c
        probe.heat(2000.0)
        on = probe.wait_for(lambda: (h := probe.last_heater()) and h.power_w >= 2000.0 and h, 5.0, "full power")
        status = probe.wait_for(lambda: (s := probe.status()) and s.state_label != "armed" and s,
                                (bound_s + REACTION_S) / RTF + 15.0, "the monitor's stop")
        assert status.last_trigger.startswith("sensor_implausible:"), (status.last_trigger, status.last_trigger_detail)
        off = probe.wait_for(lambda: next((m for _, m in list(probe.heater) if _stamp(m) > _stamp(on)
                                            and m.power_w == 0.0), None), 2.0, "0 W after the monitor's stop")
        probe.wait_for(lambda: any(e.type == "cookwala.device.fault" for _, e in list(probe.events)), 2.0, "the incident")
        with probe.lock:
            states = [m for _, m in probe.heater]
            faults = [json.loads(e.data) for _, e in probe.events if e.type == "cookwala.device.fault"]
        cut_after_s = _stamp(off) - _stamp(on)
        print(f"\n{medium} {MASS_KG} kg, sensor stuck at {stuck_c:.1f} degC: the monitor cut the heat "
              f"{cut_after_s:.1f} s (hob time) after full power; bound {bound_s:.1f} s + {REACTION_S:g} s")
        assert cut_after_s <= bound_s + REACTION_S
        assert all(m.medium_temp_c == pytest.approx(stuck_c) for m in states if _stamp(m) >= _stamp(on))
        assert any(f.get("incident") == "cw.incident.sensor_failure" and f["trigger"].startswith("sensor_implausible:")
                   for f in faults), faults
        time.sleep(0.5)  # the probe still asks for heat as the executor's last tick might: it stays off
        assert probe.last_heater().power_w == 0.0
    finally:
        probe.close()
        stop_processes(procs)
