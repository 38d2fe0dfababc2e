"""Building the ExecutionLog of a run (Core ExecutionLog; schemas/execution-log.schema.json).

One `StepRecorder` per step collects how it was verified, whether the envelope held, the
min/max/end of every sensor it watched and its deviations; `LogBuilder` adds the run-level parts
(outcome, safety events, human interventions, energy) and a compact temperature trace under the
extension field `x-cookwala-ros-trace` (a list of [t_s, medium °C, pan °C, power W] rows, TRACE_COLUMNS,
at about 1 Hz of run time, thinned to stay under a fixed number of rows; null = no reading) so a plot can be drawn from any log.
No personal data is ever recorded (`privacy.personalData: "none"`).

Only a finished step has an envelope verdict: `steps` holds the steps that ended (every
StepRecord needs `envelopeOk`), and a step that was still open when the run stopped, failed or
was read mid-run is reported under `x-cookwala-ros-unfinishedSteps` in the same shape without
`envelopeOk` (what it did so far, no claim about whether it held).
"""

from __future__ import annotations

import datetime
from typing import Any

from cookwala_ros import CORE_VERSION

TRACE_FIELD = "x-cookwala-ros-trace"
TRACE_COLUMNS = ["t_s", "medium_temp_c", "pan_temp_c", "power_w"]
UNFINISHED_FIELD = "x-cookwala-ros-unfinishedSteps"
# the schema allows one deviation per step: keep the one that matters most
DEVIATION_RANK = ("temperature_excursion", "human_took_over", "skipped_optional", "extended_time",
                  "shortened_time", "substitution", "other")
OUTCOME_FOR_STATE = {"completed": "served", "stopped": "aborted_safe", "failed": "failed",
                     "refused": "refused"}


def iso(epoch_s: float) -> str:
    """RFC 3339 UTC time with millisecond precision."""
    moment = datetime.datetime.fromtimestamp(epoch_s, tz=datetime.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _r(x: float) -> float:
    return round(float(x), 2)


class StepRecorder:
    """What happened during one step."""

    def __init__(self, node: str, op: str, started_at: str, verified_by: str):
        self.node = node
        self.op = op
        self.started_at = started_at
        self.verified_by = verified_by
        self.envelope_ok = True
        self.target_ok: bool | None = None
        self._sensors: dict[str, dict] = {}
        self.deviations: list[dict] = []
        self.approach_s: float | None = None  # a heat step's time outside its band before entering it

    def reading(self, sensor: str, value: float | None, unit: str = "degC", estimated: bool = False) -> None:
        if value is None:
            return
        s = self._sensors.get(sensor)
        if s is None:
            s = self._sensors[sensor] = {"sensor": sensor, "unit": unit, "min": value, "max": value, "end": value}
        s["min"] = min(s["min"], value)
        s["max"] = max(s["max"], value)
        s["end"] = value
        if estimated:
            s["estimated"] = True

    def deviation(self, kind: str, detail: str) -> dict:
        entry = {"kind": kind, "detail": detail[:300]}
        self.deviations.append(entry)
        return entry

    def has_deviation(self, kind: str) -> bool:
        return any(d["kind"] == kind for d in self.deviations)

    def to_record(self, ended_at: str | None, finished: bool = True) -> dict:
        """The StepRecord; an unfinished step (`finished=False`) has no `envelopeOk`."""
        record: dict[str, Any] = {"node": self.node, "op": self.op, "startedAt": self.started_at}
        if ended_at:
            record["endedAt"] = ended_at
        record["verifiedBy"] = self.verified_by
        if finished:
            record["envelopeOk"] = self.envelope_ok
        if self._sensors:
            record["summary"] = [
                {**s, "min": _r(s["min"]), "max": _r(s["max"]), "end": _r(s["end"])} for s in self._sensors.values()
            ]
        if self.deviations:
            ranked = sorted(self.deviations, key=lambda d: DEVIATION_RANK.index(d["kind"])
                            if d["kind"] in DEVIATION_RANK else len(DEVIATION_RANK))
            record["deviation"] = dict(ranked[0])
            if len(ranked) > 1:
                record["x-cookwala-ros-deviations"] = [dict(d) for d in self.deviations]
        if self.target_ok is not None:
            record["x-cookwala-ros-targetOk"] = self.target_ok
        if self.approach_s is not None:
            record["x-cookwala-ros-approachS"] = round(self.approach_s, 1)
        return record


class LogBuilder:
    """The run-level ExecutionLog; steps are added as they end."""

    def __init__(self, *, execution_id: str, recipe_ref: str, recipe_hash: str, device: dict,
                 started_at: str, servings: float | None = None, trace_period_s: float = 1.0,
                 trace_max_rows: int = 3600):
        self.head = {"core": CORE_VERSION, "kind": "ExecutionLog", "id": execution_id, "recipe": recipe_ref,
                     "recipeHash": recipe_hash, "device": dict(device), "startedAt": started_at}
        self.servings = servings
        self.steps: list[dict] = []
        self.unfinished: list[dict] = []
        self.safety_events: list[dict] = []
        self.human_interventions: list[dict] = []
        self.energy_j = 0.0
        self.trace: list[list] = []
        self.trace_period_s = float(trace_period_s)
        self.trace_max_rows = max(16, int(trace_max_rows))
        self._next_trace_t: float | None = None

    def add_step(self, record: dict) -> None:
        """A finished step (its record has `envelopeOk`)."""
        self.steps.append(record)

    def add_unfinished(self, record: dict) -> None:
        """A step that ended without finishing (stopped, failed): no envelope verdict."""
        self.unfinished.append(record)

    def safety_event(self, at: str, limit: str, action: str, node: str | None = None) -> dict:
        event = {"at": at, "limit": limit, "action": action}
        if node:
            event["node"] = node
        self.safety_events.append(event)
        return event

    def human_intervention(self, at: str, kind: str, minutes: float | None = None, **extra: Any) -> None:
        entry: dict[str, Any] = {"at": at, "kind": kind}
        if minutes is not None:
            entry["minutes"] = round(max(0.0, minutes), 2)
        entry.update({f"x-cookwala-ros-{k}": v for k, v in extra.items()})
        self.human_interventions.append(entry)

    def add_energy(self, power_w: float, dt: float) -> None:
        if power_w and power_w > 0 and dt > 0:
            self.energy_j += power_w * dt

    def sample(self, t_s: float, medium_c: float | None, pan_c: float | None, power_w: float | None) -> None:
        """Offer a trace row at run time t_s; kept about every trace_period_s."""
        if self._next_trace_t is not None and t_s < self._next_trace_t:
            return
        self.trace.append([round(t_s, 1), None if medium_c is None else _r(medium_c),
                           None if pan_c is None else _r(pan_c), None if power_w is None else round(power_w, 1)])
        if len(self.trace) > self.trace_max_rows:  # thin: keep every other row, sample half as often
            self.trace = self.trace[::2]
            self.trace_period_s *= 2
        self._next_trace_t = t_s + self.trace_period_s

    def build(self, outcome: str, ended_at: str | None, open_step: dict | None = None) -> dict:
        log: dict[str, Any] = dict(self.head)
        if ended_at:
            log["endedAt"] = ended_at
        log["outcome"] = outcome
        if self.servings is not None:
            log["servings"] = self.servings
        log["steps"] = [dict(s) for s in self.steps]
        unfinished = [dict(s) for s in self.unfinished] + ([dict(open_step)] if open_step else [])
        if unfinished:
            log[UNFINISHED_FIELD] = unfinished
        log["safetyEvents"] = [dict(e) for e in self.safety_events]
        log["humanInterventions"] = [dict(h) for h in self.human_interventions]
        log["energyKwh"] = round(self.energy_j / 3.6e6, 4)
        log["consent"] = {"dataset": "none"}
        log["privacy"] = {"personalData": "none"}
        log[TRACE_FIELD] = [list(r) for r in self.trace]
        return log
