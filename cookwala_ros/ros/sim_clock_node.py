"""sim_clock: publishes /clock so the whole stack runs on simulated time.

Simulated time advances `real_time_factor` times as fast as the steady wall clock (1 = real
time, 50 = a 30-minute simmer in 36 s), published `publish_rate_hz` times per wall second.
Nodes started with `use_sim_time:=true` then run their timers, stamps and timeouts on it. Sim
time is computed from the steady clock at every tick (never accumulated), so at factor 1 it
tracks wall time without drift; changing `real_time_factor` at run time continues from the
current sim time. Starts at the current wall-clock time unless `start_from_wall_clock` is false.
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

from cookwala_ros.ros.node_main import run_node
from cookwala_ros.ros import qos
from cookwala_ros.ros.params import ParameterError, ParamSpec, declare_parameters, reject_invalid

NODE_NAME = "sim_clock"
CLOCK_TOPIC = "/clock"

PARAMETERS = (
    ParamSpec("real_time_factor", 1.0, "Simulated seconds per wall second.", minimum=0.0, maximum=1000.0,
              exclusive_minimum=True, read_only=False),
    ParamSpec("publish_rate_hz", 100.0, "/clock messages per wall second.", minimum=1.0, maximum=1000.0),
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


class SimClockNode(Node):
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
        self._publisher = self.create_publisher(ClockMsg, CLOCK_TOPIC, qos.clock())
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
        msg = ClockMsg()
        msg.clock.sec, msg.clock.nanosec = divmod(now_ns, 1_000_000_000)
        self._publisher.publish(msg)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, SimClockNode, args)


if __name__ == "__main__":
    sys.exit(main())
