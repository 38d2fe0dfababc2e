"""The executor's view of its safety monitor: alive and armed, or why not (no rclpy here).

The monitor publishes its SafetyStatus on every change and every `status_period_s` (0.2 s;
0.1 s in the kitchen scene) of the steady clock. Its latched publisher offers no liveliness
lease, and Fast DDS forgets a SIGKILLed participant only after its 20 s lease, so "gone" is
decided by freshness: no status for `timeout_s` on the executor's steady clock. The default
0.6 s is two to five status periods (a late timer on a loaded host is not a death); with the
0.05 s check the heat is cut at most about 0.65 s after the monitor's last status, which leaves
the hob a third of the 1 s heat deadline to report 0 W. Statuses that waited in the queue while
the executor was descheduled are read before the check (ros/pending.py).

A device whose file names no monitor (`safety_monitor_node: ""`) is explicitly unguarded: the
watch then only follows statuses that happen to arrive, as before.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_TIMEOUT_S = 0.6


@dataclass
class MonitorWatch:
    name: str  # fully qualified node name; "" = unguarded
    timeout_s: float = DEFAULT_TIMEOUT_S
    armed: bool | None = None  # the last status said armed (None: no status yet)
    label: str = ""
    last_trigger: str = ""
    received_at: float | None = None  # steady receipt time of the last status
    ever_armed: bool = False
    lost: bool = False  # the last check found the monitor gone or silent

    @property
    def guarded(self) -> bool:
        return bool(self.name)

    def on_status(self, armed: bool, label: str, last_trigger: str, now: float) -> None:
        self.armed, self.label, self.last_trigger, self.received_at = armed, label, last_trigger, now
        self.ever_armed = self.ever_armed or armed

    def missing(self, now: float) -> str | None:
        """Why the guarding monitor is not there (never heard, or silent too long), or None."""
        if not self.guarded:
            return None
        if self.received_at is None:
            return (f"no status from the safety monitor {self.name} yet: it must be running and armed "
                    "before anything cooks")
        age = now - self.received_at
        if age > self.timeout_s:
            return (f"the safety monitor {self.name} is silent: no status for {age:.2f} s "
                    f"(safety_status_timeout_s {self.timeout_s:g} s); it may have died")
        return None

    def not_armed(self) -> str | None:
        """Why the last status forbids cooking (stopped, fault, unconfigured), or None."""
        if self.armed is None or self.armed:
            return None
        why = f" after {self.last_trigger}" if self.last_trigger else ""
        who = f" {self.name}" if self.name else ""
        return (f"the safety monitor{who} is {self.label or 'not armed'}{why}; "
                "it re-arms only by a local reset (ResetSafety)")

    def hold(self, now: float) -> str | None:
        """Why no execution may start now, or None."""
        return self.missing(now) or self.not_armed()

    def may_cook(self, now: float) -> bool:
        if not self.guarded:
            return self.armed is None or self.armed
        return self.missing(now) is None and bool(self.armed)

    def check(self, now: float) -> str | None:
        """Called periodically: the reason when the monitor has just gone missing, else None."""
        why = self.missing(now) if self.ever_armed else None  # never seen: nothing to lose yet
        became = why is not None and not self.lost
        self.lost = why is not None
        return why if became else None
