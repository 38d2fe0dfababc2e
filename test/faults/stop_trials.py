"""Stop trials on the shipped kitchen scene (issue 16): a stop must hold until the local reset.

One trial: start a cook over the Core HTTP API (a saute that needs a person, heats and stirs
every simulated second), wait until the hob delivers power and the arm moves, fire one stop
input, watch the wire, release the input, reset the safety monitor locally, wait until it is
armed. `judge()` reads the trial from the recorded wire data (kitchen_watch), on the steady clock:

- the stop lands: a heater-off command and a halt trajectory appear after the trigger, the hob
  reports <= 1 W within 1 s and every joint is below 0.01 rad/s within 0.5 s, and the monitor
  verifies both itself (its SafetyStatus latencies);
- the stop holds: after the first 0 W heater state no HeaterCommand asks for heat (whoever
  sends it) and the hob stays at 0 W; after the first 0 W or standstill no trajectory other
  than a halt (empty, or one point at rest where braking brings the arm: kitchen_watch) appears,
  and after the first standstill the arm stays still; until the reset.

Shared by test_fault_stop_holds.py and benchmarks/stop_holds.py.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import pathlib
import time

import httpx

from cookwala_ros.ros.recipe_demo import LiveKitchen, request_for_recipe
from cookwala_ros.safety.arbiter import STANDSTILL_DWELL_S
from kitchen_watch import HEAT_OFF_W, JUDGE_AFTER_S, STILL_RAD_S, KitchenWatch

HERE = pathlib.Path(__file__).resolve().parent
RECIPE = HERE / "data" / "recipes" / "faults-stirred-saute.cookwala.json"
INPUTS = ("estop", "service", "http", "presence", "limit")
RTF = 20.0  # fast enough for the hob to be hot at once, slow enough that the arm moves most of the wall time
HEAT_DEADLINE_S, MOTION_DEADLINE_S = 1.0, 0.5  # CORE §6.2, steady clock
HOLD_S = 0.6  # how long a verified stop of a final execution is watched before release and reset
MIN_POWER_W = 50.0  # "the hob delivers power" (holding the pan at 180 degC takes about 90 W)
MIN_SPEED = 0.05  # rad/s: "the arm moves"
MEDIA = "application/vnd.cookwala+json"
FINAL = ("completed", "stopped", "refused", "failed")


class GuardedKitchen(LiveKitchen):
    """The `kitchen` scene with its safety monitor; the monitor's latch file lives in the kitchen's
    temporary data dir (LiveKitchen's default `state_dir`), removed with it."""

    def __init__(self, **kwargs):
        super().__init__(with_safety_monitor=True, **kwargs)


@dataclasses.dataclass
class Trial:
    """One stop and what the wire showed (times in seconds after the trigger, steady clock)."""

    input: str
    index: int
    off_s: float = math.nan  # trigger -> first heater state <= 1 W after a heater-off command
    still_s: float = math.nan  # trigger -> first joint state below 0.01 rad/s after a halt
    monitor_off_s: float = math.nan  # as the monitor measured it
    monitor_still_s: float = math.nan
    monitor_state: str = ""
    violations: list[str] = dataclasses.field(default_factory=list)  # the stop did not land or did not hold
    before_off: list[str] = dataclasses.field(default_factory=list)  # heat asked for after a halt, before 0 W
    before_still: list[str] = dataclasses.field(default_factory=list)  # motion asked for after a halt, before still
    wall_s: float = math.nan
    phases: dict[str, float] = dataclasses.field(default_factory=dict)  # wall seconds spent per phase

    @property
    def re_energised(self) -> bool:
        return any(v.startswith(("heater state", "HeaterCommand")) for v in self.violations)

    @property
    def re_moved(self) -> bool:
        return any(v.startswith(("arm moving", "JointTrajectory")) for v in self.violations)

    def line(self) -> str:
        return (f"{self.input} #{self.index}: 0 W {self.off_s * 1000:.0f} ms, still {self.still_s * 1000:.0f} ms, "
                f"monitor {self.monitor_state}: " + "; ".join(self.violations or ["held"])
                + "".join(f" (after the halt, before {what}: {'; '.join(items)})" for what, items in
                          (("0 W", self.before_off), ("standstill", self.before_still)) if items and self.violations)
                + f" [{self.wall_s:.2f} s: " + ", ".join(f"{k} {v:.2f}" for k, v in self.phases.items()) + "]")


def first_rest(joints: list, start: float, t_end: float, dwell_s: float = STANDSTILL_DWELL_S) -> float | None:
    """When the arm came to rest after `start`: the first joint state below STILL_RAD_S from which
    every joint state stays below it for `dwell_s` (the monitor's own rule: passing through zero
    speed, reversing onto a hold point, is not rest)."""
    window = [s for s in joints if start <= s.t < t_end]
    for i, sample in enumerate(window):
        if sample.value >= STILL_RAD_S:
            continue
        later = window[i + 1:]
        if all(s.value < STILL_RAD_S for s in later if s.t <= sample.t + dwell_s) and \
                (not later or later[-1].t >= sample.t + dwell_s or t_end - sample.t >= dwell_s):
            return sample.t
    return None


def judge(trial: Trial, wire: dict, t0: float, t_end: float) -> Trial:
    """Fill `trial` from the wire records between the trigger `t0` and the reset `t_end`."""
    ms = lambda t: f"+{(t - t0) * 1000:.0f} ms"  # noqa: E731
    cmds = [c for c in wire["heat_cmds"] if t0 <= c.t < t_end]
    trajs = [c for c in wire["trajectories"] if t0 <= c.t < t_end]
    halt_heat = next((c.t for c in cmds if c.mode == 0), None)
    halt_traj = next((c.t for c in trajs if c.is_halt), None)
    if halt_heat is None:
        trial.violations.append("no heater-off command on the wire")
    if halt_traj is None:
        trial.violations.append("no halt trajectory on the wire")
    t_off = next((s.t for s in wire["heater"] if s.t >= (halt_heat or t0) and s.value <= HEAT_OFF_W and s.t < t_end), None)
    t_still = first_rest(wire["joints"], halt_traj or t0, t_end)
    if t_off is None or t_off - t0 > HEAT_DEADLINE_S:
        trial.violations.append(f"0 W not within {HEAT_DEADLINE_S:g} s" + (f" ({ms(t_off)})" if t_off else ""))
    if t_still is None or t_still - t0 > MOTION_DEADLINE_S:
        trial.violations.append(f"standstill not within {MOTION_DEADLINE_S:g} s" + (f" ({ms(t_still)})" if t_still else ""))
    trial.off_s = (t_off - t0) if t_off else math.nan
    trial.still_s = (t_still - t0) if t_still else math.nan
    if t_off is not None:
        trial.violations += [f"{c.describe()} at {ms(c.t)}, {1000 * (c.t - t_off):.0f} ms after 0 W"
                             for c in cmds if c.t > t_off and c.energising]
        hot = [s for s in wire["heater"] if t_off < s.t < t_end and s.value > HEAT_OFF_W]
        if hot:
            trial.violations.append(f"heater state above 0 W again: {len(hot)} states, up to "
                                    f"{max(s.value for s in hot):.0f} W, first at {ms(hot[0].t)}")
        trial.before_off = [f"{c.describe()} at {ms(c.t)}" for c in cmds
                            if (halt_heat or t0) < c.t <= t_off and c.energising]
    if t_still is not None:
        trial.before_still = [f"{c.describe()} at {ms(c.t)}" for c in trajs
                              if (halt_traj or t0) < c.t <= t_still and not c.is_halt]
    settled = [t for t in (t_off, t_still) if t is not None]
    if settled:  # motion commands count from 0 W or standstill, whichever came first
        trial.violations += [f"{c.describe()} at {ms(c.t)}" for c in trajs if c.t > min(settled) and not c.is_halt]
    if t_still is not None:
        moving = [s for s in wire["joints"] if t_still < s.t < t_end and s.value >= STILL_RAD_S]
        if moving:
            trial.violations.append(f"arm moving again: {len(moving)} joint states, up to "
                                    f"{max(s.value for s in moving):.3f} rad/s, first at {ms(moving[0].t)}")
    verdicts = [s for s in wire["safety"] if t0 <= s.t < t_end]
    if verdicts:
        last = verdicts[-1]
        trial.monitor_state = last.label
        trial.monitor_off_s, trial.monitor_still_s = last.heat_off_latency_s, last.standstill_latency_s
    if trial.monitor_state not in ("stopped", "fault"):
        trial.violations.append(f"safety monitor {trial.monitor_state or 'silent'} after the trigger")
    elif not (trial.monitor_off_s <= HEAT_DEADLINE_S and trial.monitor_still_s <= MOTION_DEADLINE_S):
        trial.violations.append(f"monitor did not verify the stop in time (0 W {trial.monitor_off_s:.3f} s, "
                                f"standstill {trial.monitor_still_s:.3f} s)")
    if trial.monitor_state == "fault":
        faults = [e for e in wire["events"] if t0 <= e[0] < t_end and e[2].get("action") == "fault"]
        trial.violations.append("safety monitor in fault: " + "; ".join(
            f"{e[2].get('trigger')}: {e[2].get('detail')}" for e in faults) if faults else "safety monitor in fault")
    return trial


class StopTrials:
    """Runs stop trials against one running GuardedKitchen, watched by one KitchenWatch."""

    def __init__(self, kitchen: LiveKitchen, watch: KitchenWatch, log=None):
        self.kitchen = kitchen
        self.watch = watch
        self.http = httpx.Client(base_url=kitchen.base_url, timeout=10.0)
        self.recipe = json.loads(RECIPE.read_text(encoding="utf-8"))
        self.count = 0
        self.log = log
        self.spurious: list[str] = []  # stops the monitor made on its own, cooks that did not start

    def close(self) -> None:
        self.http.close()

    def ready(self, timeout_s: float = 120.0) -> None:
        """Until the monitor is armed and hears the stop inputs. A monitor that stopped on its own
        while the scene came up is a failure to find, never reset away (issue 22)."""
        self.watch.wait_for(lambda: self.watch.safety_label() in ("armed", "stopped", "fault"), timeout_s,
                            "safety status from the monitor", poll_s=0.1)
        self.watch.wait_matched(timeout_s=30.0)
        self._assert_armed("while the scene came up")

    def _assert_armed(self, when: str) -> None:
        status = self.watch.status
        if status.state_label != "armed":
            self.spurious.append(f"monitor {status.state_label} after {status.last_trigger} {when}")
            raise AssertionError(f"the monitor stopped on its own {when}: {status.state_label} after "
                                 f"{status.last_trigger}: {status.last_trigger_detail}")

    # -- the cook -----------------------------------------------------------------------------
    def start_cook(self, timeout_s: float = 30.0) -> str:
        """An accepted execution of the stirred saute (asked again while the executor still says
        busy with the cook the last trial stopped)."""
        deadline = time.monotonic() + timeout_s
        last = None
        while time.monotonic() < deadline:
            self._assert_armed("before a start")
            self.count += 1
            body = request_for_recipe(self.recipe, key=f"stop-trial-{os.getpid()}-{time.time_ns()}-{self.count}")
            r = self.http.post("/v1/executions", json=body,
                               headers={"content-type": MEDIA, "Idempotency-Key": body["idempotencyKey"]})
            last = r.text
            if r.status_code == 202 and r.json()["state"] != "refused":
                return r.json()["id"]
            time.sleep(0.05)
        raise TimeoutError(f"no execution accepted within {timeout_s:g} s: {last}")

    def status_line(self, execution: str) -> str:
        """The execution's status as the executor tells it (state, node, progress, what it waits for)."""
        body = self.http.get(f"/v1/executions/{execution}").json()
        return ", ".join(f"{k} {body[k]}" for k in ("state", "seq", "updatedAt", "step", "humanNeeded")
                         if body.get(k) is not None)

    def state(self, execution: str) -> str:
        return self.http.get(f"/v1/executions/{execution}").json()["state"]

    def wait_final(self, execution: str, timeout_s: float = 10.0) -> str:
        return self.watch.wait_for(lambda: (s := self.state(execution)) in FINAL and s, timeout_s,
                                   f"{execution} final", poll_s=0.02)

    # -- the inputs -----------------------------------------------------------------------------
    def fire(self, name: str, execution: str) -> float:
        w = self.watch
        if name == "estop":
            return w.press_estop(True)
        if name == "service":
            return w.stop_service(reason="stop trial")
        if name == "limit":
            return w.smoke(True)  # smoke.fire: a smoke_or_fire limit, stop_all
        if name == "presence":
            self.kitchen.observer.present = False  # the scene's person stops saying "here"
            return w.presence(False)  # a saute may not run unattended
        if name == "http":
            body = {"core": "0.2.0", "kind": "StopRequest", "execution": execution, "requestedBy": "human:remote-app",
                    "reason": "stop trial"}
            t0 = time.monotonic()
            r = self.http.post(f"/v1/executions/{execution}/stop", json=body, headers={"content-type": MEDIA})
            if r.status_code not in (200, 202):
                raise AssertionError(f"HTTP stop answered {r.status_code}: {r.text}")
            return t0
        raise ValueError(f"unknown stop input {name!r}; choose from {', '.join(INPUTS)}")

    def release(self, name: str) -> None:
        if name == "estop":
            self.watch.press_estop(False)
        elif name == "limit":
            self.watch.smoke(False)
        elif name == "presence":
            self.kitchen.observer.present = True
            self.watch.presence(True)

    def rearm(self, timeout_s: float = 30.0) -> None:
        """Local reset until the monitor is armed (a released input takes a message to clear; a
        starved host may answer slowly or trip the monitor again at once)."""
        deadline = time.monotonic() + timeout_s
        last = self.watch.safety_label()
        while time.monotonic() < deadline:
            if self.watch.safety_label() == "armed":
                return
            try:
                answer = self.watch.reset(timeout_s=min(5.0, max(0.5, deadline - time.monotonic())))
                last = answer.message
                if answer.accepted:
                    self.watch.wait_safety("armed", timeout_s=min(2.0, max(0.1, deadline - time.monotonic())))
                    return
            except TimeoutError as exc:
                last = str(exc)
            time.sleep(0.05)
        raise TimeoutError(f"safety monitor not re-armed within {timeout_s:g} s: {last}")

    def cooking(self, phase) -> str:
        """Start a cook and wait until the hob delivers power while the arm moves; its execution id.

        A stop the monitor makes on its own meanwhile, or a cook that does not get going, fails the
        trial with what the monitor said: a spurious stop is a fault to find, not to retry (issue 22).
        """
        w = self.watch
        since = time.monotonic()
        execution = self.start_cook()
        phase("accepted")
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline and w.safety_label() == "armed":
            if w.cooking_since(since, MIN_POWER_W, MIN_SPEED) and w.moving_now(MIN_SPEED) \
                    and w.hot_now(MIN_POWER_W):
                phase("cooking")
                return execution
            time.sleep(0.005)
        status = w.status
        why = (f"monitor {status.state_label} after {status.last_trigger}: {status.last_trigger_detail}"
               if w.safety_label() != "armed" else
               f"no hob power with arm motion within 30 s (execution {self.status_line(execution)}; {w.describe_since(since)})")
        self.spurious.append(why)
        raise AssertionError(f"execution {execution} did not get cooking: {why}")

    # -- one trial --------------------------------------------------------------------------------
    def run(self, name: str, index: int = 0) -> Trial:
        """One trial; a scene node that died meanwhile is named (KitchenError), not a refused connection."""
        try:
            return self._run(name, index)
        except httpx.TransportError:
            self.kitchen.check_alive()
            raise

    def _run(self, name: str, index: int) -> Trial:
        w = self.watch
        begin = time.monotonic()
        self.kitchen.check_alive()  # a node that died names itself here, not as a refused connection
        w.forget_before(begin - 2.0)
        trial = Trial(name, index)
        mark = [begin]

        def phase(label: str) -> None:
            now = time.monotonic()
            trial.phases[label] = round(now - mark[0], 3)
            mark[0] = now

        execution = self.cooking(phase)
        t0 = self.fire(name, execution)
        try:
            w.wait_for(lambda: any(s.t > t0 and s.label in ("stopped", "fault") and not math.isnan(s.heat_off_latency_s)
                                   and not math.isnan(s.standstill_latency_s) for s in w.snapshot()["safety"]),
                       5.0, "a verified stop from the safety monitor")
        except TimeoutError as exc:
            trial.violations.append(str(exc))
        phase("verified")
        final = self.wait_final(execution)
        if final != "stopped":
            trial.violations.append(f"execution ended {final}, not stopped")
        phase("final")
        time.sleep(HOLD_S)  # the issue saw heat return 16-363 ms after the trigger
        t_end = time.monotonic()
        time.sleep(JUDGE_AFTER_S)  # the last trajectories judged by the states published before them
        judge(trial, w.snapshot(), t0, t_end)
        phase("held")
        self.release(name)
        self.rearm()
        phase("rearmed")
        trial.wall_s = time.monotonic() - begin
        if self.log:
            self.log(trial.line())
        return trial


def pct(values: list[float], q: float) -> float:
    ordered = sorted(v for v in values if not math.isnan(v))
    if not ordered:
        return math.nan
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]


def summary(trials: list[Trial]) -> str:
    """Per input: trials, violating and re-energised trials, the violations by kind."""
    lines = []
    for name in dict.fromkeys(t.input for t in trials):
        mine = [t for t in trials if t.input == name]
        bad = [t for t in mine if t.violations]
        lines.append(f"{name}: {len(bad)} of {len(mine)} trials violated ({sum(t.re_energised for t in mine)} "
                     f"re-energised, {sum(t.re_moved for t in mine)} moved again); "
                     f"trial wall time p50 {pct([t.wall_s for t in mine], 50):.2f} s")
        lines += [f"  {t.line()}" for t in bad]
    return "\n".join(lines)
