"""Stop arbitration: the safety monitor's state machine, deterministic over injected times.

States: unconfigured -> armed (activate) -> stopped (any trigger) -> armed (local reset, once no
trigger holds and the halt is verified); any state -> fault (a halt deadline missed or a device
misbehaves, or heat or motion comes back after the halt was verified: `reenergised`). Fault
also needs a local reset, with the same conditions.

Triggers are either conditions (held while a rule keeps finding them, synced per source group)
or momentary (a Stop request, a button press). A stop episode starts at the first trigger; the
caller publishes the halt, reports when it did (`halt_sent`) and feeds what the state topics
say (`observe_motion`, `observe_heat`); `tick` checks the deadlines. All times are steady-clock
seconds supplied by the caller, so every path can be replayed in a unit test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

UNCONFIGURED, ARMED, STOPPED, FAULT = "unconfigured", "armed", "stopped", "fault"
# Standstill is verified once every joint stays below the threshold this long after the halt went
# out: an arm that reverses onto its hold point, or one at rest between two legs when the stop came
# while the next leg's command was in flight, passes through zero speed without being at rest.
STANDSTILL_DWELL_S = 0.05


@dataclass
class Episode:
    """One stop, from its first trigger; latencies are NaN until measured."""

    trigger: str
    detail: str
    started_at: float
    halt_latency_s: float = math.nan
    standstill_latency_s: float = math.nan
    heat_off_latency_s: float = math.nan
    missed: list[str] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        return not math.isnan(self.standstill_latency_s) and not math.isnan(self.heat_off_latency_s)


class Arbiter:
    def __init__(self, motion_deadline_s: float = 0.5, heat_deadline_s: float = 1.0):
        self.motion_deadline_s = motion_deadline_s
        self.heat_deadline_s = heat_deadline_s
        self.state = UNCONFIGURED
        self.episode: Episode | None = None
        self.fault_reasons: list[str] = []
        self._conditions: dict[str, dict[str, str]] = {}
        self._still = False
        self._still_since: float | None = None  # when the current still spell began
        self._heat_off = False
        self._heat_delivered = False  # the hob's last state reported power above 0 W
        self.standstill_dwell_s = STANDSTILL_DWELL_S
        self.changes = 0  # bumps on every visible change, so the caller knows when to report

    # -- triggers -------------------------------------------------------------------------
    @property
    def active_triggers(self) -> list[str]:
        return sorted({t for group in self._conditions.values() for t in group})

    def detail_of(self, trigger: str) -> str:
        for group in self._conditions.values():
            if trigger in group:
                return group[trigger]
        return ""

    def set_conditions(self, group: str, conditions: Mapping[str, str], now: float, fault: bool = False) -> bool:
        """Replace the conditions found by source `group`; True when the halt must be published.

        New conditions start a stop (or join the running one); `fault` conditions also move the
        monitor to fault. Conditions that stop holding are dropped (the stop stays latched).
        """
        old = self._conditions.get(group, {})
        if old.keys() == conditions.keys():
            if conditions != old:
                self._conditions[group] = dict(conditions)
            return False
        self._conditions[group] = dict(conditions)
        self.changes += 1
        new = [t for t in conditions if t not in old]
        if fault and new:
            self._enter_fault(f"{new[0]}: {conditions[new[0]]}")
        halt = False
        for trigger in new:
            halt = self.fire(trigger, conditions[trigger], now) or halt
        return halt

    def fire(self, trigger: str, detail: str, now: float) -> bool:
        """A trigger happened; True when the halt must be published (always, unless unconfigured)."""
        if self.state == UNCONFIGURED:
            return False
        if self.state == ARMED:
            self.state = STOPPED
            self.episode = Episode(trigger, detail, now)
            self._still = self._heat_off = False
            self._still_since = None
        elif self.episode is None:  # fault outside an episode
            self.episode = Episode(trigger, detail, now)
        self.changes += 1
        return True

    # -- lifecycle ------------------------------------------------------------------------
    def activate(self, now: float) -> bool:
        """Configured and active: armed, or stopped at once if a condition already holds."""
        self.state = ARMED
        self.changes += 1
        active = self.active_triggers
        if active:
            return self.fire(active[0], self.detail_of(active[0]), now)
        return False

    def deactivate(self) -> None:
        self.state = UNCONFIGURED
        self.episode = None
        self.fault_reasons = []
        self.changes += 1

    # -- verification ---------------------------------------------------------------------
    def halt_sent(self, now: float) -> None:
        if self.episode is not None and math.isnan(self.episode.halt_latency_s):
            self.episode.halt_latency_s = now - self.episode.started_at
            self.changes += 1

    def observe_motion(self, still: bool, now: float) -> None:
        self._still = still
        if not still:
            self._still_since = None
            return
        if self._still_since is None:
            self._still_since = now
        self._verify_standstill(now)

    def _verify_standstill(self, now: float) -> None:
        ep = self.episode
        if ep is None or not self._still or self._still_since is None or not math.isnan(ep.standstill_latency_s):
            return
        halt_at = ep.started_at + (0.0 if math.isnan(ep.halt_latency_s) else ep.halt_latency_s)
        since = max(self._still_since, halt_at)  # at rest under the halt
        if now - since >= self.standstill_dwell_s:
            ep.standstill_latency_s = since - ep.started_at
            self.changes += 1

    def observe_heat(self, off: bool, now: float, delivered: bool | None = None, verifies: bool = True) -> None:
        """`off`: commanded off and at 0 W (the kitchen is halted for a reset). `delivered`: power
        above 0 W, whatever the mode (re-energising; default: not off). `verifies`: this off may
        verify the stop (False: an off the hob obeys from someone other than the monitor)."""
        self._heat_off = off
        self._heat_delivered = (not off) if delivered is None else delivered
        ep = self.episode
        if off and verifies and ep is not None and math.isnan(ep.heat_off_latency_s) and now >= ep.started_at:
            ep.heat_off_latency_s = now - ep.started_at
            self.changes += 1

    def reenergised(self) -> dict[str, str]:
        """Heat or motion back after this stop verified 0 W or standstill (stopped or fault, before
        a reset): something still commands the plant, or a device ignores the halt.

        Heat is back when the hob reports power again. A 0 W state in another mode is not: an
        off that the executor's own regulation sent just before the stop can reach the hob
        before its last forwarded 0 W command does, and verify the stop early (stop trials:
        1 fault in 100). The halt's off follows that command, and heat that really comes back
        shows as power."""
        ep = self.episode
        if ep is None or self.state not in (STOPPED, FAULT):
            return {}
        out = {}
        if not math.isnan(ep.heat_off_latency_s) and self._heat_delivered:
            out["reenergised:heat"] = "heater power back on after 0 W was verified"
        if not math.isnan(ep.standstill_latency_s) and not self._still:
            out["reenergised:motion"] = "arm moving again after standstill was verified"
        return out

    def tick(self, now: float) -> bool:
        """Check the deadlines; True while the halt must keep being commanded (not armed)."""
        self._verify_standstill(now)  # a still arm sends few joint states: the dwell ends here too
        ep = self.episode
        if ep is not None and self.state in (STOPPED, FAULT):
            elapsed = now - ep.started_at
            if math.isnan(ep.standstill_latency_s) and elapsed > self.motion_deadline_s and "standstill" not in ep.missed:
                ep.missed.append("standstill")
                self._enter_fault(f"standstill not reached within {self.motion_deadline_s:g} s")
            if math.isnan(ep.heat_off_latency_s) and elapsed > self.heat_deadline_s and "heat_off" not in ep.missed:
                ep.missed.append("heat_off")
                self._enter_fault(f"heater not at 0 W within {self.heat_deadline_s:g} s")
        return self.state in (STOPPED, FAULT)

    def _enter_fault(self, reason: str) -> None:
        self.state = FAULT
        self.fault_reasons.append(reason)
        self.changes += 1

    # -- reset ----------------------------------------------------------------------------
    def reset(self, now: float) -> tuple[bool, str]:
        """Local re-arm: refused while a trigger holds or the kitchen is not verified halted."""
        if self.state == UNCONFIGURED:
            return False, "the monitor is not active"
        if self.state == ARMED:
            return True, "already armed"
        if self.active_triggers:
            return False, "triggers still active: " + ", ".join(self.active_triggers)
        if not (self._still and self._heat_off):
            missing = [n for n, ok in (("standstill", self._still), ("heater at 0 W", self._heat_off)) if not ok]
            return False, "not verified halted: no " + " and no ".join(missing)
        self.state = ARMED
        self.fault_reasons = []
        self.changes += 1
        return True, "armed"
