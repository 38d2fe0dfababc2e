"""An in-process simulated kitchen for engine tests (the sim models are the hardware), and its own
checks. Other engine tests import `SimKitchen`, `soup_run` etc. from here.

The loop is what the ROS adapter does, without ROS: observe the hob and the arm, tick the
engine, apply its commands, advance simulated time by `dt`.
"""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest

from cookwala_ros.core import dryrun
from cookwala_ros.core.engine import Commands, HeaterFault, Observation, RecipeRun, RunConfig
from cookwala_ros.core.run_types import HeatCommand, HeatMode
from cookwala_ros.core.pot import PotCook
from cookwala_ros.sim.arm_model import ArmModel, Trajectory, TrajectoryPoint
from cookwala_ros.sim.heater import HeaterMode, SimHeater
from cookwala_ros.robot.description import default_arm, load_poses
from cookwala_ros.sim.thermal_model import SensorFault, ThermalConfig, ThermalModel

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(__file__).resolve().parent / "data"
SOUP = REPO / "examples" / "recipes" / "tomato-soup.cookwala.json"
LIQUID = "cw.sense.liquid_temp"


def load_json(path: pathlib.Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def capabilities() -> dict:
    """The simulated kitchen robot as its device file describes it (ops and sensors it has)."""
    return load_json(DATA / "sim-kitchen.capabilities.json")


class SimKitchen:
    """Hob + pot (thermal model) and the 6-joint arm, stepped together on one sim clock."""

    def __init__(self, *, altitude_m: float = 0.0, max_power_w: float = 2000.0, dt: float = 0.5,
                 human_present: bool = True, auto_human_s: float | None = 20.0):
        self.altitude_m = altitude_m
        self.max_power_w = max_power_w
        self.dt = dt
        self.t = 0.0
        self.human_present = human_present
        self.auto_human_s = auto_human_s  # a person answers needs_human after this long (None: never)
        self.sensors_ok: dict[str, bool] = {}
        self.medium_fault = SensorFault.NONE
        self._new_pot("pan_surface", 0.5, lid=False)
        arm = default_arm()
        self.poses = load_poses(arm=arm)
        self.joint_names = arm.joint_names
        self.arm = ArmModel(arm.joint_names, arm.max_velocity, arm.max_acceleration, arm.lower, arm.upper,
                            initial_positions=[self.poses["home"][j] for j in arm.joint_names])
        self._pose_vectors = {n: np.array([p[j] for j in self.joint_names]) for n, p in self.poses.items()}
        self._pose_cache = None
        self.commands: list[Commands] = []
        self.setups: list[dict] = []
        self.halts = 0

    def _new_pot(self, medium: str, mass_kg: float, lid: bool, pan_c: float | None = None,
                 medium_c: float | None = None) -> None:
        config = ThermalConfig(medium=medium, medium_mass_kg=max(mass_kg, 0.01), altitude_m=self.altitude_m, lid=lid)
        self.thermal = ThermalModel(config)
        if pan_c is not None:
            self.thermal.pan_c = pan_c
        if medium_c is not None:
            self.thermal.medium_c = medium_c
        self.thermal.set_sensor_fault("medium", self.medium_fault)
        self.heater = SimHeater(self.thermal, max_power_w=self.max_power_w)

    def disconnect_medium_sensor(self) -> None:
        self.medium_fault = SensorFault.DISCONNECTED
        self.thermal.set_sensor_fault("medium", SensorFault.DISCONNECTED)
        self.sensors_ok[LIQUID] = False

    # ------------------------------------------------------------------ commands

    def put_in_pot(self, setup: dict) -> None:
        """The cook changes what the pot holds (core.pot.PotCook says what); the command stays."""
        self.setups.append(dict(setup))
        same = setup["medium"] == self.thermal.config.medium
        mode, power, setpoint = self.heater.mode, self.heater.power_command_w, self.heater.setpoint_c
        self._new_pot(setup["medium"], setup["mass_kg"], bool(setup.get("lid")), pan_c=self.thermal.pan_c,
                      medium_c=self.thermal.medium_c if same else None)
        self.heater.command(mode, power, setpoint)

    def apply(self, cmds: Commands) -> None:
        if not cmds.is_empty():
            self.commands.append(cmds)
        if cmds.heater:
            kind = cmds.heater.mode
            if kind is HeatMode.OFF:
                self.heater.command(HeaterMode.OFF)
            elif kind is HeatMode.POWER:
                self.heater.command(HeaterMode.POWER, power_w=cmds.heater.value)
            else:
                self.heater.command(HeaterMode.SETPOINT, setpoint_c=cmds.heater.value)
        if cmds.arm_halt:
            self.halts += 1
            self.arm.stop()
        if cmds.arm_pose:
            self.move_to(cmds.arm_pose)

    def move_to(self, pose: str) -> None:
        target = np.array([self.poses[pose][j] for j in self.joint_names])
        slowest = float(np.max(np.abs(target - self.arm.q) / (0.5 * self.arm.vmax)))
        point = TrajectoryPoint(time_from_start=max(0.5, slowest), positions=tuple(target))
        self.arm.command(Trajectory(joint_names=tuple(self.joint_names), points=(point,)))

    # ------------------------------------------------------------------ observation

    def arm_pose(self) -> str | None:
        q = self.arm.measured().positions
        if self._pose_cache is not None and np.array_equal(q, self._pose_cache[0]):
            return self._pose_cache[1]
        found = None
        for name, joints in self._pose_vectors.items():
            if float(np.max(np.abs(q - joints))) < 1e-3:
                found = name
                break
        self._pose_cache = (q.copy(), found)
        return found

    def observe(self) -> Observation:
        snap = self.heater.snapshot()
        return Observation(
            now_s=self.t,
            medium_temp_c=None if math.isnan(snap.medium_temp_c) else snap.medium_temp_c,
            pan_temp_c=None if math.isnan(snap.pan_surface_temp_c) else snap.pan_surface_temp_c,
            heater_power_w=snap.power_w,
            heater_fault=None if snap.fault == 0 else HeaterFault(snap.fault.name.lower()),
            arm_positions=dict(zip(self.joint_names, self.arm.q.tolist())),
            arm_moving=self.arm.following or not self.arm.at_rest,
            arm_pose=self.arm_pose(),
            human_present=self.human_present,
            safety_armed=True,
            sensors_ok=dict(self.sensors_ok),
        )

    def step(self) -> None:
        self.heater.step(self.dt)
        self.arm.step(self.dt)
        self.t = round(self.t + self.dt, 6)

    # ------------------------------------------------------------------ loop

    def run(self, engine: RecipeRun, limit_s: float = 4 * 3600, until=None, on_tick=None) -> list:
        """Tick until the run is final, `until(engine, kitchen)` is true, or limit_s of sim time."""
        changes = []
        waiting_since = None
        cook = PotCook(engine.recipe, engine.config.servings)  # follows the run's status, as pot_sim does
        while self.t <= limit_s:
            cmds = engine.tick(self.observe())
            self.apply(cmds)
            setup = cook.step(engine.status().get("node"))
            if setup is not None:
                self.put_in_pot(setup)
            changes.extend(engine.drain_changes())
            if on_tick:
                on_tick(engine, self)
            if engine.is_final or (until and until(engine, self)):
                break
            if engine.state == "needs_human" and self.auto_human_s is not None:
                waiting_since = self.t if waiting_since is None else waiting_since
                if self.t - waiting_since >= self.auto_human_s:
                    engine.human_done()
                    waiting_since = None
            else:
                waiting_since = None
            self.step()
        changes.extend(engine.drain_changes())
        return changes


def plan_for(recipe: dict, *, demoted=(), human_present=True):
    result = dryrun.precheck(recipe, capabilities(), human_present=human_present, demoted_sensors=demoted)
    assert result.accepted, (result.reason, result.node, result.detail)
    return result.plan


def make_run(recipe: dict, kitchen: SimKitchen, *, demoted=(), **config) -> RecipeRun:
    config.setdefault("poses", tuple(kitchen.poses))
    config.setdefault("execution_id", "exec-test-0001")
    return RecipeRun(recipe, plan_for(recipe, demoted=demoted), RunConfig(**config), start_time_s=kitchen.t)


def soup() -> dict:
    if not SOUP.is_file():
        pytest.skip("examples/recipes/tomato-soup.cookwala.json is not there")
    return load_json(SOUP)


# ---------------------------------------------------------------------- the harness itself


def test_kitchen_applies_power_and_setup():
    kitchen = SimKitchen()
    kitchen.put_in_pot({"medium": "water", "mass_kg": 1.0, "lid": False})
    kitchen.apply(Commands(heater=HeatCommand.power(1500.0)))
    for _ in range(50):
        kitchen.step()
    obs = kitchen.observe()
    assert kitchen.thermal.config.medium == "water"
    assert obs.heater_power_w == pytest.approx(1500.0)
    assert obs.medium_temp_c > 20.5


def test_kitchen_reports_the_named_pose_once_the_arm_settles():
    kitchen = SimKitchen()
    assert kitchen.observe().arm_pose == "home"
    kitchen.apply(Commands(arm_pose="above_hob"))
    kitchen.step()
    assert kitchen.observe().arm_moving and kitchen.observe().arm_pose is None
    for _ in range(200):
        kitchen.step()
    obs = kitchen.observe()
    assert obs.arm_pose == "above_hob" and not obs.arm_moving
