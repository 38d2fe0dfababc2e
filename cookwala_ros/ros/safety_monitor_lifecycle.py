"""The safety monitor's lifecycle: when it watches, and how it arms, stops watching and exits.

A mixin for SafetyMonitorNode (it uses the node's `_p`, `lock`, `monitor`, halt publishers,
`_halt`, `_report`, check and status callbacks and latch). Self-starting (`autostart`) or driven
by a lifecycle manager through `<node>/change_state`, the same transitions run, and none of them
waits for anything: under a manager a transition runs on the executor that has to deliver the
heater state, so `activate` starts the timers at once and the check timer arms the monitor
(`_arm_when_ready`) once the halt can reach the arm and heater controllers and a heater state
can verify it. Until then the status says unconfigured and `waiting:<what>`, so a guarded
executor does not cook; a stop request still halts.
"""

from __future__ import annotations

import time
import traceback

from rclpy.clock import Clock, ClockType
from rclpy.lifecycle import LifecycleState, TransitionCallbackReturn

from cookwala_ros.ros.node_main import freeze_startup_objects

GRAPH_CHECK_PERIOD_S = 0.5  # the expected executor against the ROS graph, off the stop path
EXIT_HALT_TIMEOUT_S = 1.5  # on SIGINT/SIGTERM: wait this long at most for 0 W and standstill


class MonitorLifecycle:
    _arming = False  # active, not yet armed: see _arm_when_ready
    _arming_since = 0.0
    _arming_logged = False
    _waiting: list[str] = []  # what arming waits for, in the status (replaced, never mutated)

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        try:
            return self._activate()
        except Exception as exc:  # noqa: BLE001
            self.config_error = f"{type(exc).__name__}: {exc}"
            self.get_logger().error(f"activate failed: {traceback.format_exc()}")
            return TransitionCallbackReturn.FAILURE

    def _activate(self) -> TransitionCallbackReturn:
        """Start watching at once; arm when the halt can be delivered (`_arm_when_ready`).

        Nothing waits in here: the heater state the arming needs arrives through the executor
        that, under a lifecycle manager, is running this very transition.
        """
        latched = self._read_latch()  # also after a deactivate: the file is the truth
        with self.lock:
            self._latched = latched
            self._arming, self._arming_since, self._arming_logged = True, time.monotonic(), False
            steady = Clock(clock_type=ClockType.STEADY_TIME)  # safety timing never follows /clock
            self._timers = [self.create_timer(self._p("check_period_s"), self._on_check, clock=steady),
                            self.create_timer(self._p("status_period_s"), self._on_status_timer, clock=steady)]
            self._arm_when_ready()
        return TransitionCallbackReturn.SUCCESS

    def _not_ready(self) -> list[str]:
        """What the halt still lacks: controllers matched on its topics, a heater state and joint states
        to verify it (armed before the arm driver's first state, its silence would stop the kitchen
        0.5 s later: a spurious stop on a host still starting the scene)."""
        out = [f"waiting:{what}" for what, pub in (("arm_controller", self._traj_pub), ("heater_controller", self._heat_pub))
               if not pub.get_subscription_count()]
        return (out + ([] if self.monitor.heater_seen else ["waiting:heater_state"])
                + ([] if self.monitor.joints_seen else ["waiting:joint_states"]))

    def _arm_when_ready(self) -> None:
        """While active and not yet armed (each check period, under the lock): arm once the halt
        rides on connections that exist and can be verified. Until then the status says
        unconfigured and what it waits for, so no guarded executor cooks."""
        waiting = self._not_ready()
        if waiting:
            if waiting != self._waiting:
                self._waiting = waiting
                self._report(force=True)
            waited = time.monotonic() - self._arming_since
            if not self._arming_logged and waited > self._p("activation_timeout_s"):
                self._arming_logged = True
                self.get_logger().error(
                    f"not armed after {waited:.0f} s (activation_timeout_s): {', '.join(waiting)} (halt topics "
                    f"{self._traj_pub.topic_name}, {self._heat_pub.topic_name}); a stop must ride on connections "
                    "that already exist and be verifiable, so the monitor stays unarmed and keeps waiting")
            return
        self._arming, self._waiting = False, []
        latched = self._latched
        if self.monitor.activate(time.monotonic(), None if latched is None else self._latch_reason(latched)):
            self._halt()
        if self._executor_fqn():
            steady = Clock(clock_type=ClockType.STEADY_TIME)
            self._timers.append(self.create_timer(GRAPH_CHECK_PERIOD_S, self._on_graph, clock=steady))
        self.get_logger().info(f"active: {self.monitor.state}")
        self._report(force=True)
        freeze_startup_objects()  # the pack, the arm model and the entities are here to stay

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        for timer in self._timers:
            self.destroy_timer(timer)
        self._timers = []
        with self.lock:
            self._arming, self._waiting = False, []
            self.monitor.deactivate()
            self._halt()  # nothing watches the kitchen any more: leave it halted
            self._report(force=True)
        return TransitionCallbackReturn.SUCCESS

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._destroy_entities()
        self.monitor = None
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._destroy_entities()
        return TransitionCallbackReturn.SUCCESS

    def autostart(self) -> None:
        """Configure and activate (it arms itself once the halt can be delivered: `_arm_when_ready`)."""
        if self.trigger_configure() != TransitionCallbackReturn.SUCCESS:
            self.get_logger().fatal(f"cannot configure: {self.config_error}")
        elif self.trigger_activate() != TransitionCallbackReturn.SUCCESS:
            self.config_error = self.config_error or "activation failed"
            self.get_logger().fatal(f"cannot activate: {self.config_error}")
        else:
            return
        self.closing = True

    # -- on the way out -------------------------------------------------------------------
    def halt_on_exit(self, timeout_s: float = EXIT_HALT_TIMEOUT_S) -> str:
        """Publish the halt and wait (bounded) for 0 W and standstill read after it."""
        with self.lock:
            if self.monitor is None or not self._entities:
                return "not configured: nothing to halt"
            t0 = last = time.monotonic()
            self._halt()
        while time.monotonic() - t0 < timeout_s:
            time.sleep(0.01)
            with self.lock:
                if self.monitor.halted_since(t0):
                    return f"kitchen halted (0 W, standstill) {time.monotonic() - t0:.2f} s after the exit halt"
                if time.monotonic() - last >= self._p("recommand_period_s"):
                    last = time.monotonic()
                    self._halt()
        return f"0 W and standstill not confirmed within {timeout_s:g} s of the exit halt"
