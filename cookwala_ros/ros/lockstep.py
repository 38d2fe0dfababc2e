"""Lock-step simulation: /clock advances one step only when every participant finished the last.

Free-running, sim_clock publishes sim time as a function of the wall clock, so on a loaded host
a loop on sim time falls behind the clock and the same cook gives another trace. In lock-step,
sim_clock publishes T, waits until every participant (the sims, the executor's control tick, a
test's commander) has reported on /clock_step that it finished T, then publishes T + step: as
fast as the slowest participant allows, never faster than the real-time factor (a ceiling).

Participants register themselves over ROS (cookwala_msgs/ClockStep JOIN, or their first DONE),
so it works across processes and namespaces, and leave with LEAVE on a clean shutdown. One that
stays late for `grace` of wall time is dropped and named in a warning, so a dead node never
freezes the kitchen; a report from it later counts it in again.

An idle kitchen is idle: a participant with nothing to do (the executor between cooks, the arm at
rest, the hob off) reports a `wake` IDLE_STEP_S ahead. Until then the clock does not wait for it,
and when every participant is idle it steps straight to the earliest wake: at a real-time factor
of 20, 4 steps per wall second instead of 200. Whatever is busy is stepped every `step`, so a
cook's trace does not change. Only steps a participant is waited for are reported, so which
steps the clock takes depends on the reports alone, never on their timing; a participant that
gets work between steps (a cook request) calls `wake()`, and the clock steps at once.

`StepGate` is the clock's bookkeeping (pure); `StepParticipant` is a node's side.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from cookwala_msgs.msg import ClockStep
from rclpy._rclpy_pybind11 import RCLError
from rosgraph_msgs.msg import Clock as ClockMsg

from cookwala_ros.ros import names, qos
from cookwala_ros.ros.params import ParamSpec

CLOCK_MODES = ("rtf", "lockstep")
IDLE_STEP_S = 5.0  # how far ahead an idle participant asks to be stepped next [sim s]


def clock_mode_param(what: str) -> ParamSpec:
    """The `clock_mode` parameter of a node whose `what` runs on sim time."""
    return ParamSpec("clock_mode", "rtf", f"rtf: {what} on the ROS clock's timers; lockstep: once per /clock step, "
                     "reported done on /clock_step (sim_clock's clock_mode lockstep).", choices=CLOCK_MODES)


def time_ns(stamp) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


class StepGate:
    """Who the clock waits for, who finished which step, and who has been silent too long."""

    def __init__(self, grace_ns: int):
        self.grace_ns = grace_ns
        self._done: dict[str, int] = {}  # member -> latest sim time it finished [ns]
        self._wake: dict[str, int] = {}  # member -> sim time from which the clock waits for it [ns]
        self._since: dict[str, int] = {}  # member -> steady time from which its lateness counts [ns]
        self.dropped: list[str] = []  # members dropped for silence, in order (diagnostics)

    @property
    def members(self) -> list[str]:
        return list(self._done)

    def join(self, name: str, now_ns: int) -> bool:
        """Wait for `name` from the current step on; True if it was not a member."""
        if name in self._done:
            return False
        self._done[name] = -1
        self._wake[name] = 0
        self._since[name] = now_ns
        return True

    def done(self, name: str, t_ns: int, now_ns: int, wake_ns: int = 0) -> bool:
        """`name` finished sim time t (joining it if needed) and is to be waited for again from
        sim time `wake_ns` on (0: from the next step); True if it joined with this."""
        joined = self.join(name, now_ns)
        if t_ns >= self._done[name]:
            self._done[name] = t_ns
            self._wake[name] = wake_ns if wake_ns > t_ns else t_ns + 1
        return joined

    def leave(self, name: str) -> bool:
        self._since.pop(name, None)
        self._wake.pop(name, None)
        return self._done.pop(name, None) is not None

    def late(self, t_ns: int) -> list[str]:
        """Members that have not finished sim time t yet and are waited for at t."""
        return [name for name, done in self._done.items() if done < t_ns and self._wake[name] <= t_ns]

    def next_step(self, t_ns: int, step_ns: int) -> int:
        """The sim time to step to from t: one step, or further when every member sleeps past it
        (to the earliest wake)."""
        if not self._wake:
            return t_ns + step_ns
        return max(t_ns + step_ns, min(self._wake.values()))

    def drop_silent(self, t_ns: int, published_ns: int, now_ns: int) -> list[str]:
        """Drop the members late for step t (published at steady time `published_ns`) for longer
        than the grace, counted from the step or from their joining, whichever came later."""
        gone = [name for name in self.late(t_ns) if now_ns - max(published_ns, self._since[name]) > self.grace_ns]
        for name in gone:
            self.leave(name)
            self.dropped.append(name)
        return gone


class StepParticipant:
    """A node's side of lock-step: runs `on_step(t_ns)` for each new /clock step, then reports it done.

    `on_step` returns False to finish the step later (e.g. until a reading stamped t arrived);
    the node then calls `finish()`. A step the clock re-sends is only reported again. Call
    `leave()` before the node is destroyed.
    """

    def __init__(self, node, on_step: Callable[[int], bool | None], callback_group=None,
                 idle: Callable[[], bool] | None = None):
        self.name = node.get_fully_qualified_name()
        self._context = node.context
        self.t_ns = -1  # the step being simulated; -1 before the first /clock message
        self.steps = 0  # steps taken (tests, diagnostics)
        self._finished_ns = -1
        self._on_step = on_step
        self._idle = idle  # True: nothing to do for IDLE_STEP_S (asked as each step finishes)
        self._waited_from_ns = 0  # the clock waits for this participant at steps from here on
        self._wake_ns = 0  # the wake of the latest report
        self._reported_ns = -1  # the step of the latest report
        self._lock = threading.Lock()  # finish() runs on the node's step thread, wake() on any
        self._publisher = node.create_publisher(ClockStep, names.CLOCK_STEP, qos.clock_step_report())
        self._report(ClockStep.JOIN, 0)
        self._subscription = node.create_subscription(ClockMsg, names.CLOCK, self._on_clock, qos.lockstep_clock(),
                                                      callback_group=callback_group)

    def _on_clock(self, msg: ClockMsg) -> None:
        t_ns = time_ns(msg.clock)
        if t_ns == self.t_ns:
            if self._finished_ns == t_ns and self._reported_ns == t_ns:
                self._report(ClockStep.DONE, t_ns, self._wake_ns)  # the clock re-sent the step: it missed our report
            return
        self.t_ns = t_ns
        self.steps += 1
        if self._on_step(t_ns) is not False:
            self.finish()

    def finish(self) -> None:
        """Report the current step done (once): when the clock waits for it, or when this
        participant stopped being idle and wants the next step sooner than it said."""
        with self._lock:
            if self._finished_ns == self.t_ns:
                return
            t = self._finished_ns = self.t_ns
            wake = t + int(IDLE_STEP_S * 1e9) if self._idle is not None and self._idle() else 0
            if t >= self._waited_from_ns or (wake or t + 1) < self._waited_from_ns:
                self._announce(t, wake)

    def wake(self) -> None:
        """Work arrived while idle: be stepped (and waited for) from the next step on, not at the
        wake reported (the clock, sleeping towards it, steps at once)."""
        with self._lock:
            t = self._finished_ns
            if t < 0 or self._waited_from_ns <= t + 1:
                return  # not finished a step yet (the clock waits for it anyway), or not asleep
            self._announce(t, 0)

    def _announce(self, t: int, wake: int) -> None:
        """Report step t done, to be waited for again from `wake` (0: the next step); lock held."""
        self._waited_from_ns, self._wake_ns, self._reported_ns = wake or t + 1, wake, t
        self._report(ClockStep.DONE, t, wake)

    @property
    def pending(self) -> bool:
        """A step has been received and not yet reported done."""
        return self.t_ns >= 0 and self._finished_ns != self.t_ns

    def leave(self) -> None:
        """Say goodbye on a clean shutdown. After a signal the context may be gone already: then the
        clock drops this participant after its grace instead, and there is nothing to report."""
        if not self._context.ok():
            return
        try:
            self._report(ClockStep.LEAVE, max(self.t_ns, 0))
        except RCLError:  # the context went down between the check and the publish
            pass

    def _report(self, event: int, t_ns: int, wake_ns: int = 0) -> None:
        msg = ClockStep(event=event, participant=self.name)
        msg.stamp.sec, msg.stamp.nanosec = divmod(int(t_ns), 1_000_000_000)
        msg.wake.sec, msg.wake.nanosec = divmod(int(wake_ns), 1_000_000_000)
        self._publisher.publish(msg)
