"""The demo's simmer controller against the pure thermal model, with prompt and late updates."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="rclpy (ROS 2 wheels) is not installed")

from cookwala_ros.ros.sim_demo import SimmerController  # noqa: E402
from cookwala_ros.sim.thermal_model import ThermalConfig, ThermalModel  # noqa: E402

BAND = (85.0, 96.0)


def simmer(interval, total_s: float = 1500.0) -> tuple[float, float, float]:
    """Heat 1 L of water, the next update `interval(t, temp)` sim seconds after each one.

    Returns (time the simmer was reached, min and max temperature from then on).
    """
    model = ThermalModel(ThermalConfig(medium="water", medium_mass_kg=1.0))
    controller = SimmerController(90.0, BAND[1] - 1.0, 2000.0, kp=400.0, ki=2.0)
    t, last, reached, low, high = 0.0, None, None, 1e9, -1e9
    while t < total_s:
        temp = model.readings().medium_temp_c
        model.set_power(controller.update(temp, 0.0 if last is None else t - last, 1.0))
        last = t
        dt = interval(t, temp)
        model.step(dt)
        t += dt
        temp = model.readings().medium_temp_c
        if reached is None and temp >= 89.0:
            reached = t
        if reached is not None:
            low, high = min(low, temp), max(high, temp)
    return reached, low, high


def test_prompt_updates_reach_and_hold_90_c():
    reached, low, high = simmer(lambda t, temp: 0.5)
    assert reached is not None and reached < 300
    assert 89.0 <= low and high <= 91.0


def stall_near_the_target(stall_s: float):
    """A loaded machine: one stall early on, then another at the worst moment (83 °C)."""
    stalls = {"early": False, "late": False}

    def interval(t: float, temp: float) -> float:
        if not stalls["early"] and t > 20.0:
            stalls["early"] = True
            return stall_s
        if not stalls["late"] and temp >= 83.0:
            stalls["late"] = True
            return stall_s
        return 0.5

    return interval


@pytest.mark.parametrize("interval", [
    lambda t, temp: 40.0,  # every update late
    stall_near_the_target(45.0),
], ids=["every_update_late", "stall_at_83C"])
def test_late_updates_never_leave_the_simmer_band(interval):
    reached, low, high = simmer(interval)
    assert reached is not None
    assert BAND[0] <= low and high <= BAND[1]


def test_no_reading_means_no_heat():
    controller = SimmerController(90.0, 95.0, 2000.0, kp=400.0, ki=2.0)
    assert controller.update(float("nan"), 0.5) == 0.0
    assert controller.update(20.0, 0.5) == 2000.0
