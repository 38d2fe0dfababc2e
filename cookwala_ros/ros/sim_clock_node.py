"""sim_clock: publishes /clock so the whole stack runs on simulated time.

Simulated time advances `real_time_factor` times as fast as the steady wall clock (1 = real
time, 50 = a 30-minute simmer in 36 s), published `publish_rate_hz` times per wall second.
Nodes started with `use_sim_time:=true` then run their timers, stamps and timeouts on it. Sim
time is computed from the steady clock at every tick (never accumulated), so at factor 1 it
tracks wall time without drift; changing `real_time_factor` at run time continues from the
current sim time. Starts at the current wall-clock time unless `start_from_wall_clock` is false.

`clock_mode` lockstep (ros/lockstep.py): /clock advances by `lockstep_step_s` only once every
participant that joined on /clock_step has finished the current step, and no faster than
`real_time_factor` (then a ceiling), so a cook gives the same trace on a loaded host as on an
idle one. A participant late for `lockstep_grace_s` of wall time is dropped with a warning.
When every participant is idle (their reports say when they next need a step), the clock steps
straight to the earliest such time, still at most `real_time_factor` x real time.
"""

from __future__ import annotations

import sys
import threading
import time

from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock as ClockMsg

from cookwala_msgs.msg import ClockStep
from cookwala_ros.ros.endpoints import LeanEndpoints
from cookwala_ros.ros.lockstep import CLOCK_MODES, StepGate, time_ns
from cookwala_ros.ros.node_main import run_node
from cookwala_ros.ros import names, qos
from cookwala_ros.ros.params import ParameterError, ParamSpec, comma_list, declare_parameters, reject_invalid
from cookwala_ros.ros.pending import deliver_waiting

NODE_NAME = "sim_clock"
CLOCK_TOPIC = names.CLOCK
RESEND_S = 0.25  # a step some participant has not finished is published again this often [s, wall]

PARAMETERS = (
    ParamSpec("clock_mode", "rtf", "rtf: sim time = wall time x real_time_factor; lockstep: one step at a time, "
              "once every participant finished the last.", choices=CLOCK_MODES),
    ParamSpec("real_time_factor", 1.0, "Simulated seconds per wall second (in lockstep: at most).", minimum=0.0,
              maximum=1000.0, exclusive_minimum=True, read_only=False),
    ParamSpec("publish_rate_hz", 100.0, "/clock messages per wall second (rtf).", minimum=1.0, maximum=1000.0),
    ParamSpec("lockstep_step_s", 0.1, "Sim seconds per lock-step step: at most the period of every participant's "
              "loop (the executor's 10 Hz tick).", minimum=0.001, maximum=10.0),
    ParamSpec("lockstep_expect", "", "Comma-separated participants (relative names: in this node's namespace) the "
              "first step waits for, at most lockstep_grace_s after the first report; empty = the first to join."),
    ParamSpec("lockstep_grace_s", 2.0, "A participant late this long [s, wall] is dropped with a warning, so a dead "
              "node cannot freeze the kitchen.", minimum=0.05, maximum=600.0),
    ParamSpec("start_from_wall_clock", True, "Start sim time at the current wall-clock time (else start_time_s)."),
    ParamSpec("start_time_s", 0.0, "Sim time at start [s since the epoch] when start_from_wall_clock is false.",
              minimum=0.0, maximum=4.0e9),
)


class SimClock:
    """Sim time as a linear function of the steady clock; rebased when the factor changes."""

    def __init__(self, start_ns: int, factor: float, steady_ns: int):
        self._base_sim_ns = start_ns
        self._base_steady_ns = steady_ns
        self.factor = factor

    def now_ns(self, steady_ns: int) -> int:
        return self._base_sim_ns + int(round((steady_ns - self._base_steady_ns) * self.factor))

    def set_factor(self, factor: float, steady_ns: int) -> None:
        self._base_sim_ns = self.now_ns(steady_ns)
        self._base_steady_ns = steady_ns
        self.factor = factor


class SimClockNode(LeanEndpoints, Node):
    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, **kwargs)
        if self.get_parameter("use_sim_time").value:
            raise ParameterError("use_sim_time", "the node that publishes /clock cannot run on /clock; leave it false")
        values = declare_parameters(self, PARAMETERS)
        start_ns = time.time_ns() if values["start_from_wall_clock"] else int(values["start_time_s"] * 1e9)
        self.clock_model = SimClock(start_ns, values["real_time_factor"], time.monotonic_ns())
        self._lock = threading.Lock()
        self.add_on_set_parameters_callback(reject_invalid(PARAMETERS))
        self.add_on_set_parameters_callback(self._refuse_sim_time)
        self.add_post_set_parameters_callback(self._on_parameters_set)
        self.lockstep = values["clock_mode"] == "lockstep"
        if self.lockstep:
            self._start_lockstep(values, start_ns)
            return
        self._publisher = self.create_publisher(ClockMsg, CLOCK_TOPIC, qos.clock_publisher())
        self._timer = self.create_timer(
            1.0 / values["publish_rate_hz"],
            self._on_tick,
            callback_group=MutuallyExclusiveCallbackGroup(),
            clock=Clock(clock_type=ClockType.STEADY_TIME),
        )
        self._on_tick()
        self.get_logger().info(
            f"publishing {CLOCK_TOPIC} at {values['publish_rate_hz']:g} Hz, {values['real_time_factor']:g}x real time"
        )

    # ------------------------------------------------------------------ lock-step

    def _start_lockstep(self, values: dict, start_ns: int) -> None:
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        group = MutuallyExclusiveCallbackGroup()  # reports, pacing and the watch never run at once
        self._publisher = self.create_publisher(ClockMsg, CLOCK_TOPIC, qos.lockstep_clock())
        self.gate = StepGate(int(values["lockstep_grace_s"] * 1e9))
        self.step_ns = int(round(values["lockstep_step_s"] * 1e9))
        self.t_ns = start_ns
        self.steps = 0  # steps published after the first (tests, diagnostics)
        # nothing steps before the kitchen is there: the expected participants, or a first one
        self._expected = {names.qualify(self.get_namespace(), n) for n in comma_list(values["lockstep_expect"])}
        self._first_report_at: int | None = None
        self._started = False
        self._published_at = self._resent_at = time.monotonic_ns()
        self._reports = self.create_subscription(ClockStep, names.CLOCK_STEP, self._on_report,
                                                 qos.clock_step_report(depth=100), callback_group=group)
        self._pace_timer = self.create_timer(1.0, self._on_pace, callback_group=group, clock=steady)
        self._pace_timer.cancel()
        self._pace_due = 0  # steady time the armed pace timer fires at [ns]
        self.create_timer(min(RESEND_S, values["lockstep_grace_s"] / 4), self._on_watch, callback_group=group, clock=steady)
        self._publish(self.t_ns)
        self.get_logger().info(
            f"lock-step: {CLOCK_TOPIC} advances {values['lockstep_step_s']:g} s once every participant on "
            f"{names.CLOCK_STEP} finished the step, at most {values['real_time_factor']:g}x real time; "
            f"a participant late {values['lockstep_grace_s']:g} s is dropped")

    def _on_report(self, msg: ClockStep) -> None:
        now = time.monotonic_ns()
        who = msg.participant
        if self._first_report_at is None and msg.event != ClockStep.LEAVE:
            self._first_report_at = now
        if msg.event == ClockStep.LEAVE:
            if self.gate.leave(who):
                self.get_logger().info(f"lock-step: {who} left")
        elif msg.event == ClockStep.JOIN:
            if self.gate.join(who, now):
                self.get_logger().info(f"lock-step: {who} joined")
                self._publish(self.t_ns)  # it may have subscribed after this step went out
                self._resent_at = now
        elif msg.event == ClockStep.DONE:
            if self.gate.done(who, time_ns(msg.stamp), now, time_ns(msg.wake)):
                self.get_logger().info(f"lock-step: {who} joined")
        self._try_step(now)

    def _on_watch(self) -> None:
        deliver_waiting(self._reports, self._on_report, limit=100)  # a late report is not a silent participant
        now = time.monotonic_ns()
        for who in self.gate.drop_silent(self.t_ns, self._published_at, now):
            self.get_logger().warning(
                f"lock-step: {who} did not finish {self.t_ns * 1e-9:.3f} s within "
                f"{self.gate.grace_ns * 1e-9:g} s: dropped, the clock goes on without it")
        if self.gate.late(self.t_ns):
            if now - self._resent_at >= RESEND_S * 1e9:  # a lost step or a participant that joined late
                self._resent_at = now
                self._publish(self.t_ns)
            return
        self._try_step(now)

    def _on_pace(self) -> None:
        self._pace_timer.cancel()
        self._try_step(time.monotonic_ns())

    def _kitchen_ready(self, now: int) -> bool:
        """The first step waits for the expected participants (for a grace at most) or a first one."""
        if self._started:
            return True
        if self._first_report_at is None:
            return False
        missing = sorted(self._expected - set(self.gate.members))
        if missing and now - self._first_report_at <= self.gate.grace_ns:
            return False
        if missing:
            self.get_logger().warning(f"lock-step: starting without {', '.join(missing)} (not joined within "
                                      f"{self.gate.grace_ns * 1e-9:g} s)")
        self._started = True
        return True

    def _try_step(self, now: int) -> None:
        """The next step, once nobody is late for this one and the real-time ceiling allows it."""
        if not self._kitchen_ready(now) or self.gate.late(self.t_ns):
            return
        with self._lock:
            factor = self.clock_model.factor
        next_ns = self.gate.next_step(self.t_ns, self.step_ns)
        due = self._published_at + int((next_ns - self.t_ns) / factor)
        if now < due:
            # a wake shortly after an idle jump brings the next step forward: the timer armed for
            # the jump (IDLE_STEP_S / real_time_factor away) must not hold it back
            if self._pace_timer.is_canceled() or due < self._pace_due:
                self._pace_timer.cancel()
                self._pace_timer.timer_period_ns = due - now
                self._pace_timer.reset()
                self._pace_due = due
            return
        self.t_ns = next_ns
        self.steps += 1
        self._published_at = self._resent_at = now
        self._publish(self.t_ns)
        if not self.gate.members:  # nobody to wait for: the ceiling alone paces the clock
            self._try_step(time.monotonic_ns())

    def _refuse_sim_time(self, parameters: list[Parameter]):
        if any(p.name == "use_sim_time" and p.value for p in parameters):
            return SetParametersResult(successful=False, reason="parameter 'use_sim_time': sim_clock publishes /clock")
        return SetParametersResult(successful=True)

    def _on_parameters_set(self, parameters: list[Parameter]) -> None:
        for parameter in parameters:
            if parameter.name == "real_time_factor":
                with self._lock:
                    self.clock_model.set_factor(float(parameter.value), time.monotonic_ns())
                self.get_logger().info(f"real-time factor now {parameter.value:g}")

    def _on_tick(self) -> None:
        with self._lock:
            now_ns = self.clock_model.now_ns(time.monotonic_ns())
        self._publish(now_ns)

    def _publish(self, t_ns: int) -> None:
        msg = ClockMsg()
        msg.clock.sec, msg.clock.nanosec = divmod(t_ns, 1_000_000_000)
        self._publisher.publish(msg)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, SimClockNode, args, threads=1)  # one callback group: one thread


if __name__ == "__main__":
    sys.exit(main())
