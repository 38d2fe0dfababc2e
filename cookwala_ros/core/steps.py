"""The step runners of the execution engine: heat, motion, timed and human steps.

Each runner is ticked by `RecipeRun` with the latest observation and the seconds since the last
tick; `active=False` means the run is paused or waiting for a person: a heat step then keeps
holding its temperature but its clock does not run. A tick returns a `Verdict`: go on, done,
a person is needed (why), or abort safely (why). Runners talk to the run only through the
small set of members `RunPorts` names (`engine.RecipeRun` has them), so this module does not
import the engine that imports it.

Truth of a heat step (issue 16): a step whose medium never entered its envelope band ends with
`envelopeOk: false` and a `temperature_excursion` deviation, and it asks a person to check the
food before the run goes on (CORE §3: executors keep the medium inside the envelope, and the last
rung of the sensor ladder is a person; refusal, not guessing), so such a cook is "served" only
after a person confirmed it. A medium sensor whose reading does not follow the heat the hob
delivers (core.plausibility) aborts the step as a sensor fault: the heat is cut, a
`cw.incident.sensor_failure` is reported and the run stops. It does not go down the ladder: the
pot's state is unknown once its thermometer has lied (it may be boiling dry), so the model rung
has nothing trustworthy to start from, and only a person can judge the food.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from cookwala_ros.core import conditions, heat_control, ladder, motion, plausibility, vocab
from cookwala_ros.core.conditions import MET, MET_BY_TIME, PENDING, TIMED_OUT
from cookwala_ros.core.execution_log import StepRecorder
from cookwala_ros.core.heat_control import PIController
from cookwala_ros.core.heat_model import ThermalEstimate
from cookwala_ros.core.pot import HEATER_MEDIUM, is_heat_step  # noqa: F401 (re-exported)
from cookwala_ros.core.run_types import Observation, RunConfig

if TYPE_CHECKING:  # pragma: no cover
    from cookwala_ros.core.dryrun import NodePlan

# envelope medium -> the sensor that measures it
MEDIUM_SENSOR = {"water": "cw.sense.liquid_temp", "steam": "cw.sense.chamber_temp", "pressure": "cw.sense.liquid_temp",
                 "oil": "cw.sense.oil_temp", "air": "cw.sense.oven_air_temp", "pan_surface": "cw.sense.pan_surface_temp",
                 "product": "cw.sense.core_temp"}
SETUP_MEDIUM_SENSOR = {"water": "cw.sense.liquid_temp", "oil": "cw.sense.oil_temp", "air": "cw.sense.oven_air_temp"}
PAN_SENSOR = "cw.sense.pan_surface_temp"


EQUIPMENT_FAILURE = "cw.incident.equipment_failure"
SENSOR_FAILURE = "cw.incident.sensor_failure"


@dataclass(frozen=True)
class Verdict:
    kind: str  # continue | done | human | abort
    why: str | None = None
    incident: str | None = EQUIPMENT_FAILURE  # an abort's incident type; None: the step reported its own

    @property
    def going(self) -> bool:
        return self.kind == "continue"


GO_ON = Verdict("continue")
DONE = Verdict("done")


class RunPorts(Protocol):
    """What a step runner uses of the run that ticks it: the runners' contract with
    `engine.RecipeRun`, which imports this module (so this one must not import the engine)."""

    config: RunConfig
    estimate: ThermalEstimate
    controller: PIController
    setup_at: float | None  # when the pot's contents last changed [s, run clock]
    awaiting_contents: bool  # this tick, the hob still shows the pot's old contents

    def read(self, obs: Observation, sensor_id: str) -> float | None: ...
    def available_sensors(self, obs: Observation) -> list[str]: ...
    def iso(self, now_s: float) -> str: ...
    def deviation(self, runner: StepRunner, kind: str, detail: str) -> None: ...
    def incident(self, runner: StepRunner | None, incident_type: str, detail: str) -> None: ...
    def check_limits(self, runner: StepRunner, medium: str | None, value: float) -> Verdict | None: ...
    def heater_power(self, watts: float) -> None: ...
    def heater_off(self) -> None: ...
    @property
    def heater_setup(self) -> dict | None: ...  # what the hob's pot holds
    def heater_setup_for(self, node: dict, env_medium: str | None, obs: Observation) -> None: ...
    def arm_to(self, pose: str) -> None: ...


class StepRunner:
    """Common parts: the node, its plan entry, its `until`, its log record and clock."""

    kind = "timed"

    def __init__(self, run: "RunPorts", node: dict, plan: "NodePlan", index: int):
        self.run = run
        self.node = node
        self.plan = plan
        self.index = index
        self.tracker = conditions.UntilTracker(node.get("until"), f"/process/nodes/{index}/until")
        self.elapsed_s = 0.0
        self.verified_by = plan.verified_by
        self.recorder: StepRecorder | None = None
        self.extended = False
        self.retried = False
        self.pending_human: str | None = None  # why, while a timeout waits for a person
        self._condition_sensors = sorted(conditions.condition_sensors(node.get("until")))

    @property
    def node_id(self) -> str:
        return self.node["id"]

    @property
    def op(self) -> str:
        return self.node["op"]

    def start(self, obs: Observation) -> None:
        self.recorder = StepRecorder(self.node_id, self.op, self.run.iso(obs.now_s), self.verified_by)

    def tick(self, obs: Observation, dt: float, active: bool) -> Verdict:
        if active:
            self.elapsed_s += dt
        return self._judge(self.tracker.evaluate(self.elapsed_s, self.condition_readings(obs)))

    def condition_readings(self, obs: Observation) -> dict[str, float | None]:
        return {s: self.run.read(obs, s) for s in self._condition_sensors}

    def _judge(self, verdict: str) -> Verdict:
        if verdict == MET:
            return DONE
        if verdict == MET_BY_TIME:
            if self.tracker.tree is not None and self.verified_by == "sensor":
                self.verified_by = "time"  # the sensor never confirmed the end condition
            return DONE
        if verdict == TIMED_OUT:
            return self.on_timeout()
        return GO_ON

    def on_timeout(self) -> Verdict:
        action = conditions.timeout_action(self.node)
        limit = conditions.format_duration(self.tracker.max_s or self.elapsed_s)
        if action == "extend" and not self.extended:
            self.extended = True
            extra = conditions.extension_s(self.tracker.window)
            self.tracker.extend(extra)
            self.run.deviation(self, "extended_time",
                               f"end condition not met within {limit}; extended by {conditions.format_duration(extra)}")
            return GO_ON
        if action == "retry" and not self.retried:
            self.retried = True
            self.tracker.restart()
            self.tracker.extend(self.tracker.window.max_s or 0.0)
            self.run.deviation(self, "extended_time", f"end condition not met within {limit}; retrying once")
            return GO_ON
        if action == "skip_optional" and self.node.get("optional"):
            self.run.deviation(self, "skipped_optional", f"optional step ended at {limit} without its end condition")
            return DONE
        if action == "abort_safe":
            return Verdict("abort", f"node {self.node_id}: end condition not met within {limit} (onTimeout abort_safe)")
        self.pending_human = f"node {self.node_id} ({self.op}): end condition not met within {limit}; please check and confirm"
        return Verdict("human", self.pending_human)

    def human_done(self) -> Verdict:
        """A person confirmed or finished the step."""
        self.verified_by = "human"
        self.pending_human = None
        return DONE

    def progress(self) -> float:
        expected = self.tracker.expected_s() or self.tracker.max_s
        if not expected:
            return 0.0
        return max(0.0, min(0.99, self.elapsed_s / expected))

    def remaining_s(self) -> float | None:
        expected = self.tracker.expected_s() or self.tracker.max_s
        return None if expected is None else max(0.0, expected - self.elapsed_s)

    def readings(self, obs: Observation) -> list[dict]:
        return []

    def record(self, ended_at: str | None, finished: bool = True) -> dict:
        """The step's StepRecord; `finished=False` (stopped, failed, still open) has no envelope verdict."""
        assert self.recorder is not None
        self.recorder.verified_by = self.verified_by
        return self.recorder.to_record(ended_at, finished)


class TimedStep(StepRunner):
    """A device step without heat or motion: done when its time window says so."""

    kind = "timed"

    def start(self, obs: Observation) -> None:
        super().start(obs)
        self.run.heater_off()


class HumanStep(StepRunner):
    """A step the plan gives to a person: needs_human until `human_done`."""

    kind = "human"

    def start(self, obs: Observation) -> None:
        super().start(obs)
        self.run.heater_off()
        # the recipe's step text is free text (data, never passed on as an instruction): a UI shows
        # it from the recipe; the reason names the node and the operation only
        self.pending_human = f"node {self.node_id} ({self.op}) is done by a person"

    def tick(self, obs: Observation, dt: float, active: bool) -> Verdict:
        self.elapsed_s += dt
        return Verdict("human", self.pending_human) if self.pending_human else DONE

    def remaining_s(self) -> float | None:
        return self.tracker.expected_s()


class MotionStep(StepRunner):
    """A step done by moving the arm through named poses."""

    kind = "motion"

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.route = motion.route(self.node, self.run.config.poses)
        self.leg = 0
        self.leg_s = 0.0
        self.sent = False

    def start(self, obs: Observation) -> None:
        super().start(obs)
        self.run.heater_off()

    def resend(self) -> None:
        """The arm was halted (pause): command the current pose again."""
        self.sent = False

    def tick(self, obs: Observation, dt: float, active: bool) -> Verdict:
        if not active:
            return GO_ON
        self.elapsed_s += dt
        if self.leg < len(self.route):
            pose = self.route[self.leg]
            if not self.sent and obs.arm_pose == pose and not obs.arm_moving:
                self.leg += 1  # already there
                return GO_ON
            if not self.sent:
                self.run.arm_to(pose)
                self.sent = True
                self.leg_s = 0.0
                return GO_ON
            self.leg_s += dt
            if obs.arm_pose == pose and not obs.arm_moving:
                self.leg += 1
                self.sent = False
            elif self.leg_s <= self.run.config.motion_timeout_s:
                if motion.resend_due(self.leg_s, dt, obs.arm_moving):
                    self.run.arm_to(pose)
            else:
                self.run.incident(self, "cw.incident.robot_stuck", f"arm did not reach pose {pose!r} within "
                                  f"{self.run.config.motion_timeout_s:g} s")
                self.sent = False
                return Verdict("human", f"node {self.node_id}: the arm did not reach pose {pose!r}; "
                                        "please check the arm and confirm")
            return GO_ON
        verdict = self.tracker.evaluate(self.elapsed_s, self.condition_readings(obs))
        return DONE if verdict != PENDING else GO_ON

    def progress(self) -> float:
        if not self.route:
            return super().progress()
        return min(0.99, self.leg / len(self.route))


class HeatStep(StepRunner):
    """Closed-loop heat: hold the envelope, then the target, until the end condition."""

    kind = "heat"

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        env = vocab.envelope(self.op) or {}
        self.env_medium = env.get("medium")
        self.goal = heat_control.goal_for(self.node, self.run.config.altitude_m)
        self.mode = self.plan.verified_by if self.plan.verified_by in ("sensor", "model", "time") else "model"
        self.confirm_by_human = self.plan.verified_by == "human"
        self.sensor = self.plan.sensor if self.mode == "sensor" and self.plan.sensor else MEDIUM_SENSOR.get(self.env_medium)
        self.entered_band = False
        self.in_excursion = False
        self.approach_s: float | None = None  # time outside the band before first entering it
        self.approach_bound_s: float | None = None  # from the thermal model (approach from above)
        self.approach_late = False
        self.target_reached = False
        self.silent_s = 0.0
        self.last_value: float | None = None
        self.last_estimated = False
        self.peak_c: float | None = None  # highest value of the controlled temperature
        self.band_missed_asked = False
        self.rise_check: plausibility.RiseCheck | None = None
        stir = (self.node.get("params") or {}).get("stir")
        interval = stir.get("intervalS") if isinstance(stir, dict) else None
        self.stir_every_s = float(interval) if isinstance(interval, (int, float)) and interval > 0 else None
        self.stir_route = motion.stir_route(self.run.config.poses) if self.stir_every_s else []
        self.next_stir_s = self.stir_every_s or 0.0
        self.stir_leg: int | None = None
        self.stir_sent = False
        self.stir_leg_s = 0.0  # since the current stir pose was commanded
        self.stir_stuck = False  # a robot_stuck incident was reported for this step's stirring

    def start(self, obs: Observation) -> None:
        super().start(obs)
        self.run.heater_setup_for(self.node, self.env_medium, obs)
        self.rise_check = self._rise_check()

    def _rise_check(self) -> plausibility.RiseCheck | None:
        """The plausibility check of the medium sensor against the heat in (core.plausibility)."""
        setup = self.run.heater_setup or {}
        medium = setup.get("medium")
        if self.mode != "sensor" or not self.sensor or medium != HEATER_MEDIUM.get(self.env_medium):
            return None
        if vocab.canonical_sensor(self.sensor) != SETUP_MEDIUM_SENSOR.get(medium):
            return None
        bound = plausibility.bound_for(self.run.config.thermal, medium, setup.get("mass_kg", 0.0),
                                       self.run.config.max_heater_power_w, self.run.estimate.boiling_c)
        return plausibility.RiseCheck(bound) if bound is not None else None

    def _plausible(self, obs: Observation, value: float | None, estimated: bool) -> Verdict | None:
        """Abort when the medium sensor does not follow the heat the hob reports (a lying sensor)."""
        check = self.rise_check
        if check is None or self.mode != "sensor":
            return None
        power = obs.heater_power_w if obs.heater_power_w is not None else 0.0
        fault = check.update(obs.now_s, power, None if estimated else value, self.run.read(obs, PAN_SENSOR))
        if fault is None:
            return None
        self.rise_check = None
        return Verdict("abort", f"node {self.node_id}: sensor fault: {self.sensor} is implausible: {fault}",
                       incident=SENSOR_FAILURE)

    def _measure(self, obs: Observation) -> tuple[float | None, bool]:
        """(value of the controlled temperature, estimated?)."""
        estimate = self.run.estimate
        est_value = estimate.pan_c if self.env_medium == "pan_surface" else estimate.medium_c
        if self.mode == "sensor" and self.sensor:
            value = self.run.read(obs, self.sensor)
            if value is not None:
                return value, False
        return est_value, True

    def tick(self, obs: Observation, dt: float, active: bool) -> Verdict:
        if self.run.setup_at is not None and obs.now_s <= self.run.setup_at or self.run.awaiting_contents:
            return GO_ON  # readings taken before the pot's contents changed say nothing about them
        value, estimated = self._measure(obs)
        if self.mode == "sensor":
            verdict = self._watch_sensor(obs, dt, estimated) or self._plausible(obs, value, estimated)
            if verdict is not None:
                return verdict
        if value is not None:
            self.peak_c = value if self.peak_c is None else max(self.peak_c, value)
        self.last_value, self.last_estimated = value, estimated
        if self.goal is not None and value is not None:
            power = self.run.controller.update(self.goal.setpoint, value, dt, self.goal.hi)
            self.run.heater_power(power)
            self._check_envelope(value, estimated, dt)
            breach = None if estimated else self.run.check_limits(self, self.env_medium, value)
            if breach is not None:
                return breach
        if self.sensor and value is not None:
            self.recorder.reading(self.sensor, value, estimated=estimated)
        if self.pending_human:
            return Verdict("human", self.pending_human)
        if not active:
            return GO_ON
        self._stir(obs, dt)
        self.elapsed_s += dt
        readings = self.condition_readings(obs)
        if self.mode == "model" and self.sensor:
            for s in readings:
                if vocab.canonical_sensor(s) == vocab.canonical_sensor(self.sensor) and readings[s] is None:
                    readings[s] = value  # the model rung: the logged estimate stands in for the sensor
        if self.tracker.tree is None and not self.node.get("until"):
            done = self.target_reached or (self.goal is None)
            return DONE if done else GO_ON
        verdict = self._judge(self.tracker.evaluate(self.elapsed_s, readings))
        if verdict.kind == "done" and self.band_missed():
            if not self.band_missed_asked:
                self.band_missed_asked = True
                self._record_band_missed()
                self.pending_human = (f"node {self.node_id} ({self.op}): {self.band_missed()}; "
                                      "please check the food and confirm")
                return Verdict("human", self.pending_human)
        if verdict.kind == "done" and self.confirm_by_human:
            self.pending_human = f"node {self.node_id} ({self.op}): please confirm it is done"
            return Verdict("human", self.pending_human)
        if verdict.kind == "done" and self.stir_leg is not None:
            return GO_ON  # finish the stir first
        return verdict

    def _watch_sensor(self, obs: Observation, dt: float, missing: bool) -> Verdict | None:
        """Degrade along the ladder when the step's sensor has been silent for the grace time."""
        if not missing:
            self.silent_s = 0.0
            return None
        self.silent_s += dt
        if self.silent_s < self.run.config.sensor_grace_s:
            return None
        available = self.run.available_sensors(obs)
        policy = ladder.sensor_policy(self.node)
        rung = ladder.choose_rung(self.op, available, self.run.config.allow_model, obs.human_present, policy)
        self.run.incident(self, "cw.incident.sensor_failure", f"{self.sensor} gave no reading for "
                          f"{self.silent_s:.1f} s; falling back to {rung or 'nothing'}")
        if rung is None:
            return Verdict("abort", f"node {self.node_id}: {self.sensor} lost and no rung of the ladder is left")
        if ladder.is_sensor_rung(rung) and self.run.read(obs, rung) is not None:
            self.sensor = rung
            self.silent_s = 0.0
            self.rise_check = self._rise_check()
            return None
        if rung == "human":
            self.mode = "model"
            self.confirm_by_human = True
        else:
            self.mode = rung if rung in ("model", "time") else "time"
        self.verified_by = self.mode if rung != "human" else "human"
        self.run.deviation(self, "other", f"{self.sensor} lost; step continued on the {rung} rung")
        return None

    def band_missed(self) -> str | None:
        """Why the step is not in its envelope: the medium never reached the band (None: it did,
        or the step has no band)."""
        if self.goal is None or self.entered_band:
            return None
        peak = "no reading" if self.peak_c is None else f"peak {self.peak_c:.1f} °C"
        medium = self.env_medium or "medium"
        return f"the {medium} never reached the {self.op} envelope {self.goal.lo:g}–{self.goal.hi:g} °C ({peak})"

    def _record_band_missed(self) -> None:
        why = self.band_missed()
        if why and not self.recorder.has_deviation("temperature_excursion"):
            self.run.deviation(self, "temperature_excursion", why)
        if why:
            self.recorder.envelope_ok = False

    def record(self, ended_at: str | None, finished: bool = True) -> dict:
        if finished:
            self._record_band_missed()
        return super().record(ended_at, finished)

    def _check_envelope(self, value: float, estimated: bool, dt: float = 0.0) -> None:
        goal = self.goal
        if goal.in_band(value):
            self.entered_band = True
            self.in_excursion = False
        elif not self.entered_band:
            self._approach(value, dt)
        else:
            if not self.in_excursion:
                self.in_excursion = True
                self.recorder.envelope_ok = False
                side = "above" if value > goal.hi else "below"
                self.run.deviation(self, "temperature_excursion",
                                   f"{'estimated ' if estimated else ''}{value:.1f} °C {side} the {self.op} "
                                   f"envelope {goal.lo:g}–{goal.hi:g} °C")
        if goal.on_target(value):
            if not self.target_reached:
                self.target_reached = True
                self.recorder.target_ok = True
        elif self.target_reached and goal.target is not None:
            self.recorder.target_ok = False

    def _approach(self, value: float, dt: float) -> None:
        """Outside the band before first entering it: the step before left the medium elsewhere
        (boil -> simmer starts above the simmer band). Not a deviation, logged with its duration
        (`x-cookwala-ros-approachS`); from above, one that takes longer than the thermal model's
        cooling time with the heat off (x1.5 + 60 s) is. From below, a band never reached is judged
        at the step's end (band_missed)."""
        if self.approach_s is None:
            self.approach_s = 0.0
            if value > self.goal.hi:
                self.approach_bound_s = self._cooling_bound(value)
        else:
            self.approach_s += dt
        self.recorder.approach_s = self.approach_s
        bound = self.approach_bound_s
        if bound is not None and value > self.goal.hi and self.approach_s > bound and not self.approach_late:
            self.approach_late = True
            self.recorder.envelope_ok = False
            self.run.deviation(self, "temperature_excursion",
                               f"{value:.1f} °C still above the {self.op} envelope {self.goal.lo:g}–{self.goal.hi:g} °C "
                               f"after {self.approach_s:.0f} s (the thermal model cools it in {bound:.0f} s with margin)")

    def _cooling_bound(self, value: float, step_s: float = 5.0, cap_s: float = 6 * 3600.0) -> float | None:
        """Seconds the device's thermal model takes to cool the medium from `value` into the band
        with the heat off, x1.5 + 60 s; None when it does not get there within `cap_s`."""
        est = copy.copy(self.run.estimate)
        est.correct(medium_c=value)
        t = 0.0
        while est.medium_c > self.goal.hi:
            if t >= cap_s:
                return None
            est.step(step_s, 0.0)
            t += step_s
        return 1.5 * t + 60.0

    def _stir(self, obs: Observation, dt: float) -> None:
        if not self.stir_route:
            return
        if self.stir_leg is None:
            if self.elapsed_s >= self.next_stir_s:
                self.stir_leg, self.stir_sent = 0, False
                self.next_stir_s = self.elapsed_s + self.stir_every_s
            return
        pose = self.stir_route[self.stir_leg]
        if not self.stir_sent and not (obs.arm_pose == pose and not obs.arm_moving):
            self.run.arm_to(pose)
            self.stir_sent, self.stir_leg_s = True, 0.0
        elif obs.arm_pose == pose and not obs.arm_moving:
            self.stir_leg += 1
            self.stir_sent = False
            if self.stir_leg >= len(self.stir_route):
                self.stir_leg = None
        else:
            self.stir_leg_s += dt
            if self.stir_leg_s > self.run.config.motion_timeout_s:
                if not self.stir_stuck:  # once per step; heat goes on, the next stir tries again
                    self.stir_stuck = True
                    self.run.incident(self, "cw.incident.robot_stuck", f"arm did not reach stir pose {pose!r} "
                                      f"within {self.run.config.motion_timeout_s:g} s; stirring skipped")
                self.stir_leg, self.stir_sent = None, False
            elif motion.resend_due(self.stir_leg_s, dt, obs.arm_moving):
                self.run.arm_to(pose)

    def resend(self) -> None:
        self.stir_sent = False

    def readings(self, obs: Observation) -> list[dict]:
        if self.sensor is None or self.last_value is None:
            return []
        out = {"sensor": self.sensor, "value": round(self.last_value, 2), "unit": "degC"}
        if self.last_estimated:
            out["estimated"] = True
        return [out]

    def progress(self) -> float:
        if self.tracker.tree is None and not self.node.get("until"):
            return 0.99 if self.target_reached else 0.0
        return super().progress()


def runner_for(run: "RunPorts", node: dict, plan: "NodePlan", index: int) -> StepRunner:
    if plan.by == "human":
        return HumanStep(run, node, plan, index)
    if is_heat_step(node["op"]):
        return HeatStep(run, node, plan, index)
    if motion.is_motion_op(node["op"]) and motion.route(node, run.config.poses):
        return MotionStep(run, node, plan, index)
    return TimedStep(run, node, plan, index)
