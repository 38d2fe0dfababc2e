"""The execution engine: one Cookwala execution as a tick-driven state machine (pure).

`RecipeRun` walks the pre-start plan (core.dryrun.precheck(...).plan) step by step. The adapter
(ROS node, in-process simulation) calls `tick(Observation)` at >= 5 Hz of ROS time and applies
the returned `Commands`; run control (`stop`, `pause`, `resume`, `human_done`) may be called
between ticks. Every state change goes through the Core lifecycle table (core.lifecycle), and
every externally visible change is queued for `drain_changes()` so the service can number it.

    accepted -> preparing (arm home) -> running (steps) -> completed
    running <-> paused;  running -> needs_human -> running (human_done);
    any non-final -> stopping (heat off, arm halted) -> stopped (heater at 0 W, arm still)

No threads, no I/O, no clock of its own: the engine only knows `now_s` from observations, so
a 30-minute simmer on sim time takes as long as the simulation needs to produce 30 minutes.
"""

from __future__ import annotations

from typing import Any, Sequence

from cookwala_ros.core import lifecycle, limits as limits_mod, motion, pot
from cookwala_ros.core.conditions import UntilTracker
from cookwala_ros.core.dryrun import NodePlan
from cookwala_ros.core.execution_log import OUTCOME_FOR_STATE, LogBuilder, iso
from cookwala_ros.core.heat_control import PIController
from cookwala_ros.core.heat_model import ThermalEstimate
from cookwala_ros.core.run_types import (Commands, HeatCommand, HeaterFault, Observation, RunConfig,  # noqa: F401
                                         finite, read_sensor)
from cookwala_ros.core.steps import (SETUP_MEDIUM_SENSOR, HeatStep, HumanStep, MotionStep,
                                     StepRunner, Verdict, runner_for)

__all__ = ["RecipeRun", "Observation", "Commands", "RunConfig"]

PAN_SENSOR = "cw.sense.pan_surface_temp"
HEATER_RESEND_S = 1.0  # re-send an unchanged heater command this often (keep-alive)
CONTENTS_WAIT_S = 120.0  # longest wait [s, ROS time] for a hob that reports its contents to show a new set-up (a sim at 100x under load needs that)


def _as_plan(entry: Any, i: int) -> NodePlan:
    """A NodePlan, also from its wire form ({node, op, by, verifiedBy, rung, sensor?})."""
    if isinstance(entry, NodePlan):
        return entry
    if isinstance(entry, dict):
        try:
            return NodePlan(entry["node"], entry["op"], entry["by"], entry["verifiedBy"],
                            entry.get("rung", entry["verifiedBy"]), entry.get("sensor"))
        except KeyError as exc:
            raise ValueError(f"plan/{i}: missing {exc.args[0]}") from None
    raise ValueError(f"plan/{i}: must be a NodePlan or its wire form")


class RecipeRun:
    """One execution of one recipe on one device."""

    def __init__(self, recipe: dict, plan: Sequence[Any], config: RunConfig | None = None,
                 start_time_s: float = 0.0):
        self.config = config or RunConfig()
        problems = self.config.problems()
        if problems:
            raise ValueError("RunConfig: " + "; ".join(problems))
        self.recipe = recipe
        nodes = {n.get("id"): n for n in (recipe.get("process") or {}).get("nodes") or [] if isinstance(n, dict)}
        if not nodes:
            raise ValueError("/process/nodes: the recipe has no nodes")
        self.plan = [_as_plan(p, i) for i, p in enumerate(plan)]
        missing = [nid for nid in nodes if nid not in {p.node for p in self.plan}]
        if missing:
            raise ValueError(f"plan: no entry for node(s) {', '.join(missing)}")
        unknown = [p.node for p in self.plan if p.node not in nodes]
        if unknown:
            raise ValueError(f"plan: node(s) {', '.join(unknown)} are not in the recipe")
        self._nodes = nodes
        self._index = {nid: i for i, nid in enumerate(nodes)}
        for nid, i in self._index.items():  # a bad duration is an error now, not mid-run
            UntilTracker(nodes[nid].get("until"), f"/process/nodes/{i}/until")
        self.start_time_s = float(start_time_s)
        self._origin = self.config.wall_clock_origin_s
        self.state = "accepted"
        self._events: list[tuple[str, Any]] = []
        self._cmd = Commands()
        self._last_now: float | None = None
        self._step_no = -1
        self.runner: StepRunner | None = None
        self._phase_s = 0.0  # time in preparing / finishing / stopping
        self._finishing = False
        self._human_confirmed = False
        self._human_why: str | None = None
        self._human_since: float | None = None
        self._stop_reason: str | None = None
        self._stop_sent = False
        self._was_armed: bool | None = None
        self._fault_handled = False
        self._arm_fault_handled = False
        self._heater_last: HeatCommand | None = None
        self._heater_last_at = -1e9
        self._setup: dict | None = None
        self._contents_shown = True  # the hob shows the set-up (or reports no contents)
        self.awaiting_contents = False  # this tick, the hob still shows the pot's old contents
        self._servings_factor = pot.servings_factor(recipe, self.config.servings)
        self.controller = PIController(self.config.max_heater_power_w)
        params = self.config.thermal
        self.estimate = ThermalEstimate(params, "pan_surface", 0.0, altitude_m=self.config.altitude_m)
        ref = self.config.recipe_ref or str(recipe.get("id", "recipe"))
        rhash = self.config.recipe_hash or self._hash(recipe)
        self.builder = LogBuilder(execution_id=self.config.execution_id, recipe_ref=ref, recipe_hash=rhash,
                                  device=self.config.device, started_at=self.iso(self.start_time_s),
                                  servings=self.config.servings if self.config.servings is not None
                                  else (recipe.get("yield") or {}).get("servings"),
                                  trace_period_s=self.config.trace_period_s,
                                  trace_max_rows=self.config.trace_max_rows)
        self._limits = self._merge_limits(self.config.limits)
        self._breached: set[str] = set()
        if self.config.altitude_m:
            self.builder.head["x-cookwala-ros-altitudeM"] = self.config.altitude_m
        self._ended_at: str | None = None
        self._halt_pending = False
        self.setup_at: float | None = None  # time the pot's contents last changed

    # ------------------------------------------------------------------ helpers for runners

    @staticmethod
    def _hash(recipe: dict) -> str:
        from cookwala_ros.core.trust import document_hash

        return document_hash(recipe)

    def iso(self, now_s: float) -> str:
        origin = self.start_time_s if self._origin is None else self._origin
        return iso(origin + (now_s - self.start_time_s))

    def _now(self) -> float:
        return self.start_time_s if self._last_now is None else self._last_now

    def emit(self, kind: str, data: Any) -> None:
        self._events.append((kind, data))

    def read(self, obs: Observation, sensor_id: str) -> float | None:
        return read_sensor(obs, sensor_id, self.config.sensor_sources)

    def available_sensors(self, obs: Observation) -> list[str]:
        ids = set(self.config.sensor_sources) | set(obs.readings or {})
        return sorted(s for s in ids if self.read(obs, s) is not None)

    def deviation(self, runner: StepRunner, kind: str, detail: str) -> None:
        entry = runner.recorder.deviation(kind, detail)
        self.emit("deviation", {"node": runner.node_id, "op": runner.op, **entry})

    def incident(self, runner: StepRunner | None, incident_type: str, detail: str) -> None:
        data = {"type": incident_type, "detail": detail[:500], "at": self.iso(self._now())}
        if runner is not None:
            data["node"] = runner.node_id
        self.emit("incident", data)

    @staticmethod
    def _merge_limits(packs: Any) -> dict | None:
        if packs is None:
            return None
        if isinstance(packs, dict):
            limits_mod.check_pack(packs, "limits")
            return packs
        return limits_mod.merge_packs(*packs) if packs else None

    def check_limits(self, runner: StepRunner, medium: str | None, value: float) -> Verdict | None:
        """A measured temperature above a SafetyLimit max (decision 8): a safety event, then the
        limit's action (cut_heat / stop_* stop the run, ask_human asks, alert only records)."""
        if self._limits is None:
            return None
        limit = limits_mod.strictest_max(self._limits, "max_temp", medium, runner.op)
        if limit is None or value <= limit["max"]:
            return None
        key = f"{runner.node_id}:{limit.get('id')}"
        if key in self._breached:
            return None
        self._breached.add(key)
        action = limit.get("action", "cut_heat")
        self.builder.safety_event(self.iso(self._now()), str(limit.get("id", "max_temp")), action, runner.node_id)
        why = f"{value:.1f} °C is above safety limit {limit.get('id')} ({limit['max']:g} °C)"
        self.incident(runner, "cw.incident.overheat", why)
        if action in ("cut_heat", "stop_all", "stop_motion", "refuse_start"):
            return Verdict("abort", f"node {runner.node_id}: {why}", incident=None)  # reported just above
        if action == "ask_human":
            return Verdict("human", f"node {runner.node_id}: {why}; please check")
        return None

    def heater_power(self, watts: float) -> None:
        self._heater(HeatCommand.power(round(float(watts), 1)))

    def heater_off(self) -> None:
        self._heater(HeatCommand.off())

    def _heater(self, command: HeatCommand) -> None:
        now = self._now()
        if command.close_to(self._heater_last) and now - self._heater_last_at < HEATER_RESEND_S:
            return
        self._cmd.heater = command
        self._heater_last, self._heater_last_at = command, now

    @property
    def heater_setup(self) -> dict | None:
        """What the engine takes the pot to hold ({medium, mass_kg, lid}, core.pot), or None."""
        return self._setup

    def arm_to(self, pose: str) -> None:
        self._cmd.arm_pose = pose

    def heater_setup_for(self, node: dict, env_medium: str | None, obs: Observation) -> None:
        """What is in the pot now (core.pot: medium, mass, lid): restart the estimate on a change."""
        current = self._setup
        setup = pot.contents(self.recipe, node, env_medium, self._servings_factor, current)
        self.controller.reset()
        if not pot.differs(current, setup):
            return
        self._setup = setup
        self._contents_shown = False
        est = self.estimate
        same_medium = setup["medium"] == (current or {}).get("medium")
        # the observation in hand predates the new contents: keep the estimate, not the reading
        self.estimate = ThermalEstimate(self.config.thermal, setup["medium"], setup["mass_kg"], lid=setup["lid"],
                                        pan_c=est.pan_c, medium_c=est.medium_c if same_medium else None,
                                        altitude_m=self.config.altitude_m)
        self.setup_at = self._now()

    def _await_contents(self, obs: Observation) -> bool:
        """A hob that reports what its pot holds (obs.pot_medium) still shows the old contents:
        its readings describe those, so a heat step does not judge them yet (at most
        CONTENTS_WAIT_S). A hob that reports nothing is taken to hold what the recipe put in."""
        if self._contents_shown or self._setup is None or obs.pot_medium is None:
            return False
        if pot.reported(self._setup, obs.pot_medium, finite(obs.pot_mass_kg)):
            self._contents_shown = True
            return False
        if self.setup_at is not None and obs.now_s - self.setup_at > CONTENTS_WAIT_S:
            self._contents_shown = True  # go on with what the sensors say
            return False
        return True

    def node_mass_kg(self, node: dict) -> float:
        """Mass of every ingredient that has flowed into this node (core.pot.node_mass_kg)."""
        return pot.node_mass_kg(self.recipe, node, self._servings_factor)

    # ------------------------------------------------------------------ state

    def _set_state(self, to: str) -> None:
        self.state = lifecycle.transition(self.state, to)
        self.emit("state", to)

    @property
    def is_final(self) -> bool:
        return lifecycle.is_final(self.state)

    # ------------------------------------------------------------------ run control

    def stop(self, reason: str = "stop requested") -> bool:
        """Stop safely: heat off and arm halted now, `stopped` once both are confirmed.
        False (a no-op) in a final state."""
        target = lifecycle.stop_target(self.state)
        if target is None or self.state == "stopping":
            return False
        self._stop_reason = reason or "stop requested"
        self._end_step(deviation=("other", f"stopped: {self._stop_reason}"), finished=False)
        self._set_state(target)
        self._phase_s = 0.0
        self._stop_sent = False
        if target == "stopped":
            self._ended_at = self.iso(self._now())
        return True

    def pause(self) -> bool:
        if self.state != "running":
            return False
        self._set_state("paused")
        self._halt_pending = True
        return True

    def resume(self) -> bool:
        """Resume a paused run (a run waiting for a person resumes through `human_done`)."""
        if self.state == "needs_human":
            return self.human_done()
        if self.state != "paused":
            return False
        self._set_state("running")
        if isinstance(self.runner, (MotionStep, HeatStep)):
            self.runner.resend()
        return True

    def human_done(self) -> bool:
        """The person did what `humanNeeded` asked; the run continues at the next tick."""
        if self.state != "needs_human":
            return False
        self._human_confirmed = True
        kind = "assist" if isinstance(self.runner, HumanStep) else "confirm"
        minutes = (self._now() - self._human_since) / 60.0 if self._human_since is not None else None
        self.builder.human_intervention(self.iso(self._now()), kind, minutes,
                                        node=self.runner.node_id if self.runner else "")
        self._human_why = None
        self._set_state("running")
        return True

    # ------------------------------------------------------------------ tick

    def tick(self, obs: Observation) -> Commands:
        """Advance the run to obs.now_s; returns what to do now."""
        self._cmd = Commands(arm_halt=self._halt_pending)
        self._halt_pending = False
        dt = 0.0 if self._last_now is None else max(0.0, obs.now_s - self._last_now)
        self._last_now = obs.now_s
        self._observe(obs, dt)
        if self.is_final:
            return self._cmd
        self._safety(obs)
        if self.is_final:  # stopped from accepted by a safety input
            return self._cmd
        handler = getattr(self, f"_tick_{self.state}")
        handler(obs, dt)
        return self._cmd

    def _observe(self, obs: Observation, dt: float) -> None:
        power = finite(obs.heater_power_w)
        power = power if power is not None else (self._heater_last.power_w if self._heater_last else 0.0)
        self.awaiting_contents = self._await_contents(obs)
        if not self.is_final:
            self.builder.add_energy(power, dt)
            self.estimate.step(dt, power)
            if self.awaiting_contents:  # the readings describe the old contents: not this step's trace
                return
            self._correct_estimate(obs)
            self.builder.sample(obs.now_s - self.start_time_s, finite(obs.medium_temp_c),
                                finite(obs.pan_temp_c), power)

    def _correct_estimate(self, obs: Observation) -> None:
        pan = self.read(obs, PAN_SENSOR)
        sensor = SETUP_MEDIUM_SENSOR.get(self.estimate.medium)
        medium = self.read(obs, sensor) if sensor else None
        self.estimate.correct(pan_c=pan, medium_c=medium)

    def _safety(self, obs: Observation) -> None:
        details = obs.fault_details or {}
        node = self.runner.node_id if self.runner else None
        fault = HeaterFault.of(obs.heater_fault)
        if fault is not None and fault.cuts_heat and not self._fault_handled:
            self._fault_handled = True
            self.builder.safety_event(self.iso(obs.now_s), f"heater.{fault}", "cut_heat", node)
            detail = details.get("heater") or f"heater reports fault {fault}"
            self.incident(self.runner, fault.incident, detail)
            self.stop(f"heater fault: {fault}" + (f" ({detail})" if "heater" in details else ""))
        if obs.arm_fault and not self._arm_fault_handled:  # e.g. a silent arm driver: stirs would never happen
            self._arm_fault_handled = True
            self.builder.safety_event(self.iso(obs.now_s), f"arm.{obs.arm_fault}", "stop_all", node)
            detail = details.get("arm") or f"arm reports fault {obs.arm_fault}"
            self.incident(self.runner, "cw.incident.equipment_failure", detail)
            self.stop(f"arm fault: {obs.arm_fault} ({detail})")
        # a monitor that tripped reports its own incident; one that is gone or silent cannot
        if not obs.safety_armed and self.state != "stopping" and (self._was_armed or obs.safety_fault):
            self.builder.safety_event(self.iso(obs.now_s), "safety_monitor", "stop_all", node)
            if obs.safety_fault:
                self.incident(self.runner, "cw.incident.equipment_failure", obs.safety_fault)
                self.stop(f"safety monitor lost: {obs.safety_fault}")
            else:
                self.stop("the safety monitor tripped")
        self._was_armed = bool(obs.safety_armed)

    def _tick_accepted(self, obs: Observation, dt: float) -> None:
        self._set_state("preparing")
        self.heater_off()
        self._phase_s = 0.0
        if motion.HOME in self.config.poses:
            self.arm_to(motion.HOME)

    def _tick_preparing(self, obs: Observation, dt: float) -> None:
        self._phase_s += dt
        at_home = motion.HOME not in self.config.poses or (obs.arm_pose == motion.HOME and not obs.arm_moving)
        if at_home:
            self._set_state("running")
            self._next_step(obs)
        elif motion.resend_due(self._phase_s, dt, obs.arm_moving):
            self.arm_to(motion.HOME)
        if self.state == "preparing" and self._phase_s > self.config.motion_timeout_s:
            self.incident(None, "cw.incident.robot_stuck", "the arm did not reach its home pose")
            self._ask_human(obs, "the arm did not reach its home pose; please check the arm and confirm")

    def _tick_running(self, obs: Observation, dt: float) -> None:
        if self._finishing:
            self._phase_s += dt
            if obs.arm_pose == motion.HOME and not obs.arm_moving or self._phase_s > self.config.motion_timeout_s:
                self._complete()
            return
        if self.runner is None:  # confirmed by a person while preparing
            self._human_confirmed = False
            self._next_step(obs)
            return
        if self._human_confirmed:
            self._human_confirmed = False
            self._handle(self.runner.human_done(), obs)
            return
        self._handle(self.runner.tick(obs, dt, True), obs)

    def _tick_paused(self, obs: Observation, dt: float) -> None:
        if self.runner is not None:
            verdict = self.runner.tick(obs, dt, False)
            if verdict.kind == "abort":
                self._abort(verdict)

    def _tick_needs_human(self, obs: Observation, dt: float) -> None:
        self._tick_paused(obs, dt)

    def _tick_stopping(self, obs: Observation, dt: float) -> None:
        self._phase_s += dt
        first = not self._stop_sent
        self._cmd.heater = HeatCommand.off()
        self._heater_last, self._heater_last_at = self._cmd.heater, obs.now_s
        if first or self._phase_s % 1.0 < dt:
            self._cmd.arm_halt = True
        self._stop_sent = True
        power = finite(obs.heater_power_w) or 0.0
        settled = not first and power <= 0.0 and not obs.arm_moving
        if settled or self._phase_s >= self.config.stop_timeout_s:
            if not settled:
                what = "heater still reports power" if power > 0 else "arm still moving"
                self.incident(None, "cw.incident.actuator_failure", f"stop not confirmed within "
                              f"{self.config.stop_timeout_s:g} s: {what}")
            self._ended_at = self.iso(obs.now_s)
            self._set_state("stopped")

    # ------------------------------------------------------------------ steps

    def _handle(self, verdict: Verdict, obs: Observation) -> None:
        if verdict.kind == "done":
            self._end_step()
            self._next_step(obs)
        elif verdict.kind == "human":
            self._ask_human(obs, verdict.why or "a person is needed")
        elif verdict.kind == "abort":
            self._abort(verdict)

    def _ask_human(self, obs: Observation, why: str) -> None:
        if self.state == "needs_human":
            return
        self._human_why = why[:300]
        self._human_since = obs.now_s
        self._set_state("needs_human")
        data = {"why": self._human_why}
        if self.runner is not None:
            data.update(node=self.runner.node_id, op=self.runner.op)
        self.emit("needs_human", data)

    def _abort(self, verdict: Verdict) -> None:
        why = verdict.why or "aborted safely"
        if verdict.incident is not None:  # None: reported where it was found (a limit breach)
            self.incident(self.runner, verdict.incident, why)
        self.stop(why)

    def _next_step(self, obs: Observation) -> None:
        self._step_no += 1
        if self._step_no >= len(self.plan):
            self.runner = None
            self.heater_off()
            if motion.HOME in self.config.poses and obs.arm_pose != motion.HOME:
                self._finishing = True
                self._phase_s = 0.0
                self.arm_to(motion.HOME)
            else:
                self._complete()
            return
        plan = self.plan[self._step_no]
        node = self._nodes[plan.node]
        runner = runner_for(self, node, plan, self._index[plan.node])
        self.runner = runner
        runner.start(obs)
        self.emit("step_started", {"node": runner.node_id, "op": runner.op, "by": plan.by,
                                   "verifiedBy": runner.verified_by, "startedAt": runner.recorder.started_at,
                                   "kind": runner.kind})
        self._handle(runner.tick(obs, 0.0, True), obs)

    def _end_step(self, deviation: tuple[str, str] | None = None, finished: bool = True) -> None:
        """Close the current step's record: a finished step goes to `steps` with its envelope
        verdict, an unfinished one (stopped) to the log's unfinished steps without one."""
        runner = self.runner
        if runner is None or runner.recorder is None:
            return
        if deviation is not None:
            self.deviation(runner, *deviation)
        record = runner.record(self.iso(self._now()), finished)
        if finished:
            self.builder.add_step(record)
        else:
            self.builder.add_unfinished(record)
        self.emit("step_ended", record)
        self.runner = None

    def _complete(self) -> None:
        self._finishing = False
        self._ended_at = self.iso(self._now())
        self._set_state("completed")

    # ------------------------------------------------------------------ reporting

    def status(self) -> dict:
        runner = self.runner
        out: dict[str, Any] = {"state": self.state, "node": None, "op": None, "progress": None,
                               "verifiedBy": None, "humanNeeded": self._human_why if self.state == "needs_human" else None,
                               "readings": [], "eta_s": None, "startedAt": None}
        if runner is not None and runner.recorder is not None and not self.is_final:
            out.update(node=runner.node_id, op=runner.op, progress=round(runner.progress(), 3),
                       verifiedBy=runner.verified_by, startedAt=runner.recorder.started_at,
                       readings=runner.readings(None))
            out["eta_s"] = self._eta_s(runner)
        if self.state == "completed":
            out["progress"] = 1.0
        if self._stop_reason and self.state in ("stopping", "stopped"):
            out["stopReason"] = self._stop_reason
        return out

    def _eta_s(self, runner: StepRunner) -> float | None:
        remaining = runner.remaining_s()
        if remaining is None:
            return None
        for plan in self.plan[self._step_no + 1:]:
            until = self._nodes[plan.node].get("until")
            remaining += UntilTracker(until).expected_s() or 0.0
        return round(remaining, 1)

    def drain_changes(self) -> list[tuple[str, Any]]:
        events, self._events = self._events, []
        return events

    def log(self) -> dict:
        """The ExecutionLog so far (outcome `partial` while the run is not final)."""
        outcome = OUTCOME_FOR_STATE.get(self.state, "partial")
        open_step = None
        if self.runner is not None and self.runner.recorder is not None and not self.is_final:
            open_step = self.runner.record(None, finished=False)
        return self.builder.build(outcome, self._ended_at, open_step)
