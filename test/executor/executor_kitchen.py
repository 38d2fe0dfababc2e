"""A simulated kitchen stepped in-process: the pure sim models behind the engine's data types.

This is hardware simulation (allowed): `SimHeater`/`ThermalModel` for the hob and the pot,
`ArmModel` from the packaged URDF for the arm. `drive()` runs the service's control loop the way
the ROS node does: observe, `svc.tick`, apply the commands, step the physics.
"""

from __future__ import annotations

import math

from cookwala_ros.core.pot import PotCook
from cookwala_ros.core.run_types import Commands, HeaterFault, HeatMode, Observation
from cookwala_ros.executor.config import LimitsUnknown
from cookwala_ros.sim.arm_model import ArmModel, Trajectory, TrajectoryPoint
from cookwala_ros.sim.heater import HeaterMode, SimHeater
from cookwala_ros.robot.description import default_arm, load_poses
from cookwala_ros.sim.thermal_model import ThermalConfig, ThermalModel

START_S = 1_796_000_000.0  # 2026-11-29, epoch seconds: the sim clock of these tests
POSE_TOLERANCE = 0.01


class Kitchen:
    def __init__(self, medium: str = "water", mass_kg: float = 1.0, start_s: float = START_S):
        self.now = start_s
        self.heater = self._heater(medium, mass_kg)
        self.description = default_arm()
        self.poses = load_poses(None, self.description)
        d = self.description
        self.arm = ArmModel(d.joint_names, d.max_velocity, d.max_acceleration, d.lower, d.upper,
                            d.positions_vector(self.poses["home"]), start_time=0.0)
        self.present = True
        self.armed = True
        self.monitor_limits: dict | None = None  # the pack a safety monitor enforces, if there is one
        self.monitor_silent = ""  # why a guarding monitor gives no limits ("": it answers)
        self.sensors_ok: dict = {}
        self.commands: list[Commands] = []
        self._cook: tuple | None = None  # (execution, PotCook) being followed

    @staticmethod
    def _heater(medium: str, mass_kg: float) -> SimHeater:
        return SimHeater(ThermalModel(ThermalConfig(medium=medium, medium_mass_kg=mass_kg or 1.0)))

    # ------------------------------------------------------------------ engine side

    def observe(self) -> Observation:
        snap = self.heater.snapshot()
        sample = self.arm.measured()
        positions = dict(zip(self.arm.joint_names, map(float, sample.positions)))
        moving = bool(max(abs(v) for v in sample.velocities) > 1e-4) or self.arm.following
        return Observation(
            now_s=self.now,
            medium_temp_c=snap.medium_temp_c if math.isfinite(snap.medium_temp_c) else None,
            pan_temp_c=snap.pan_surface_temp_c if math.isfinite(snap.pan_surface_temp_c) else None,
            heater_power_w=snap.power_w,
            heater_fault=None if snap.fault == 0 else HeaterFault(snap.fault.name.lower()),
            arm_positions=positions, arm_moving=moving, arm_pose=None if moving else self._pose_at(positions),
            human_present=self.present, safety_armed=self.armed, sensors_ok=dict(self.sensors_ok),
        )

    def _pose_at(self, positions: dict) -> str | None:
        for name, pose in self.poses.items():
            if all(abs(positions[j] - q) < POSE_TOLERANCE for j, q in pose.items()):
                return name
        return None

    def apply(self, commands: Commands | None) -> None:
        if commands is None:
            return
        if not commands.is_empty():
            self.commands.append(commands)
        if commands.heater is not None:
            kind = commands.heater.mode
            if kind is HeatMode.OFF:
                self.heater.command(HeaterMode.OFF)
            elif kind is HeatMode.POWER:
                self.heater.command(HeaterMode.POWER, power_w=commands.heater.value)
            elif kind is HeatMode.SETPOINT:
                self.heater.command(HeaterMode.SETPOINT, setpoint_c=commands.heater.value)
        if commands.arm_halt:
            self.arm.stop()
        elif commands.arm_pose:
            self.arm.command(self.trajectory_to(commands.arm_pose))

    def follow(self, svc) -> None:
        """Play the cook as pot_sim does over ROS: from the service's public status and log
        (recipe, hash, servings) and its library, put in the pot what each heat step heats."""
        execution = svc.active_execution()
        if execution is None:
            return
        if self._cook is None or self._cook[0] != execution:
            log = svc.get_log(execution)
            found = svc.library.find(log["recipe"], log.get("recipeHash"))
            self._cook = (execution, PotCook(found.document, log.get("servings")) if found else None)
        cook = self._cook[1]
        setup = cook.step((svc.get_status(execution).get("step") or {}).get("node")) if cook else None
        if setup is not None:  # a fresh pot; the command in force stays
            mode, power, setpoint = self.heater.mode, self.heater.power_command_w, self.heater.setpoint_c
            self.heater = self._heater(setup["medium"], setup["mass_kg"])
            self.heater.command(mode, power, setpoint)

    def trajectory_to(self, pose: str) -> Trajectory:
        target = self.poses[pose]
        names = self.arm.joint_names
        now = dict(zip(names, map(float, self.arm.measured().positions)))
        duration = max(0.5, max(abs(target[n] - now[n]) / (0.5 * v) for n, v in zip(names, self.arm.vmax)))
        return Trajectory(names, (TrajectoryPoint(duration, tuple(target[n] for n in names)),))

    def halt(self) -> None:
        """The ports' stop path: heat off and the arm halted at once."""
        self.heater.command(HeaterMode.OFF)
        self.arm.stop()

    def step(self, dt: float) -> None:
        self.heater.step(dt)
        self.arm.step(dt)
        self.now += dt


class KitchenPorts:
    """DevicePorts backed by the kitchen (presence, sensors, halt)."""

    def __init__(self, kitchen: Kitchen):
        self.kitchen = kitchen
        self.stop_reasons: list[str] = []  # explicit stops, which the ROS port hands to the safety monitor

    def human_present(self) -> bool:
        return self.kitchen.present

    def demoted_sensors(self):
        return {s for s, ok in self.kitchen.sensors_ok.items() if not ok}

    def safety_limits(self) -> dict | None:
        if self.kitchen.monitor_silent:
            raise LimitsUnknown(f"the safety monitor's /safety_monitor/get_safety_limits {self.kitchen.monitor_silent}")
        return self.kitchen.monitor_limits

    def safety_hold(self) -> str | None:
        return None if self.kitchen.armed else "the safety monitor is stopped; it re-arms only by a local reset"

    def halt(self, stop_reason: str | None = None) -> None:
        self.kitchen.halt()
        if stop_reason is not None:
            self.stop_reasons.append(stop_reason)


def drive(svc, kitchen: Kitchen, until, dt: float = 0.2, max_s: float = 4 * 3600.0, on_tick=None) -> bool:
    """Tick until `until()` is true or `max_s` simulated seconds pass; True if it came true."""
    end = kitchen.now + max_s
    while kitchen.now < end:
        kitchen.apply(svc.tick(kitchen.now, kitchen.observe()))
        kitchen.follow(svc)
        if until():
            return True
        if on_tick is not None:
            on_tick()
        kitchen.step(dt)
    return bool(until())
