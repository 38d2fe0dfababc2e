"""heater_sim: the simulated induction hob and the pan on it.

Subscribes cookwala_msgs/HeaterCommand on `heater/command`; publishes cookwala_msgs/HeaterState
on `heater/state` and sensor_msgs/Temperature on `heater/medium_temperature` and
`heater/pan_temperature`. A command takes effect in the subscription callback and the new state
is published at once, so OFF shows 0 W immediately (unless the relay is welded). The thermal
model is integrated over the elapsed ROS time at every tick (in bounded substeps), so the hob
keeps up with /clock at any real-time factor. With `clock_mode` lockstep (sim_clock's) it
steps once per /clock message instead and reports each step done; between steps it re-publishes
its state on the steady clock (`steady_rate_hz`), so a slow step never looks like a dead driver.

Dead-man: with `command_timeout_s` > 0 (default 0.5 s, on the steady clock, whatever /clock
does) a hob that heats and hears no fresh HeaterCommand for that long goes to 0 W by itself
(commanded mode OFF), logs it once and says it in HeaterState.fault_detail until the next
command. Whoever keeps the hob on re-sends its command (every 0.1 s); the safety monitor's
repeated OFF is then a keep-alive of the stop, not the only guard.

Safety priority: an OFF whose `source` is the safety monitor (`safety_source`) holds the hob
off for `safety_hold_s` (steady clock), renewed by each such OFF (the monitor re-sends its OFF
every 0.1 s while it is stopped). Meanwhile heat commands from anybody else are ignored and
counted, as a safety relay in a real hob's power path would: a command another node computed
before it heard of the stop can no longer bring the heat back. Once the monitor is reset it stops
sending, and the hold ends `safety_hold_s` later.

Faults for safety tests, settable while running: `fault.medium_sensor` and `fault.pan_sensor`
(none | disconnected | stuck), `fault.relay_welded`.

The pot's contents are settable while running too: `medium`, `medium_mass_kg` and `lid` (in the
kitchen scene pot_sim sets them when a heat step starts, as the executor's status shows). One
SetParametersAtomically call is applied at once, as one change: the pan keeps its temperature,
the medium keeps its temperature only if it is the same medium (see ThermalModel.refilled); the
command in force stays.
"""

from __future__ import annotations

import math
import sys
import threading
import time

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.time import Time
from sensor_msgs.msg import Temperature

from cookwala_msgs.msg import HeaterCommand, HeaterState
from cookwala_ros.ros import names, qos
from cookwala_ros.ros.device_names import DEVICE_FILE, robot_names
from cookwala_ros.ros.endpoints import LeanEndpoints
from cookwala_ros.ros.lockstep import StepParticipant, clock_mode_param
from cookwala_ros.ros.node_main import run_node
from cookwala_ros.ros.params import ParameterError, ParamSpec, declare_parameters, reject_invalid
from cookwala_ros.ros.pending import deliver_waiting
from cookwala_ros.sim.heater import HeaterMode, SimHeater
from cookwala_ros.sim.sim_time import SimTime
from cookwala_ros.sim.thermal_model import MEDIA, SOURCE_EFFICIENCY, SensorFault, ThermalConfig, ThermalModel

NODE_NAME = "heater_sim"
COMMAND_TOPIC = names.HEATER_COMMAND  # defaults; a device file may rename the command and state topics
STATE_TOPIC = names.HEATER_STATE
MEDIUM_TEMPERATURE_TOPIC = names.HEATER_MEDIUM_TEMPERATURE
PAN_TEMPERATURE_TOPIC = names.HEATER_PAN_TEMPERATURE
SENSOR_FAULTS = tuple(f.value for f in SensorFault)
CONTENTS = ("medium", "medium_mass_kg", "lid")

PARAMETERS = (
    DEVICE_FILE,
    ParamSpec("medium", "water", "What is in the pan (pan_surface = an empty pan).", choices=tuple(MEDIA),
              read_only=False),
    ParamSpec("medium_mass_kg", 1.0, "Mass of the medium [kg] (1 L of water = 1.0, of oil = 0.92).",
              minimum=0.0, maximum=50.0, exclusive_minimum=True, read_only=False),
    ParamSpec("initial_temp_c", 20.0, "Starting temperature of pan and medium [degC].", minimum=-50.0, maximum=400.0),
    ParamSpec("ambient_temp_c", 20.0, "Kitchen temperature [degC].", minimum=-30.0, maximum=60.0),
    ParamSpec("altitude_m", 0.0, "Kitchen altitude [m]; water boils 1 degC lower per 300 m.",
              minimum=-500.0, maximum=9000.0),
    ParamSpec("heat_source", "electric_induction", "Kind of hob; sets the default efficiency.",
              choices=tuple(SOURCE_EFFICIENCY)),
    ParamSpec("efficiency", 0.0, "Share of electrical power reaching the pan; 0 = the heat_source's figure.",
              minimum=0.0, maximum=1.0),
    ParamSpec("max_power_w", 2000.0, "Highest power the hob delivers [W].", minimum=0.0, maximum=10000.0,
              exclusive_minimum=True),
    ParamSpec("pan_mass_kg", 1.0, "Mass of the pan [kg].", minimum=0.0, maximum=20.0, exclusive_minimum=True),
    ParamSpec("losses", True, "Heat losses to the kitchen (off for closed-form checks)."),
    ParamSpec("lid", False, "A lid on the pan (cuts losses from the medium's surface).", read_only=False),
    ParamSpec("oil_smoke_point_c", 230.0, "Smoke point of the oil [degC].", minimum=100.0, maximum=300.0),
    ParamSpec("overtemp_cutoff_c", 300.0, "The hob's own cut-out on pan temperature [degC]; 0 disables it.",
              minimum=0.0, maximum=600.0),
    ParamSpec("command_timeout_s", 0.5, "Dead-man: no fresh HeaterCommand within this [s, steady clock] cuts the "
              "hob to 0 W; 0 disables it.", minimum=0.0, maximum=60.0),
    ParamSpec("safety_hold_s", 0.3, "An OFF from `safety_source` holds the hob off this long [s, steady clock] "
              "against heat commands from other sources; 0 disables the priority.", minimum=0.0, maximum=10.0),
    ParamSpec("safety_source", "safety_monitor", "HeaterCommand.source of the safety monitor."),
    ParamSpec("publish_rate_hz", 10.0, "State and temperature rate on the ROS clock [Hz].", minimum=0.0,
              maximum=1000.0, exclusive_minimum=True),
    clock_mode_param("the hob steps"),
    ParamSpec("steady_rate_hz", 10.0, "In lockstep: the state is re-published this often on the steady clock "
              "between steps [Hz].", minimum=0.0, maximum=1000.0, exclusive_minimum=True),
    ParamSpec("max_substep_s", 0.1, "Longest thermal integration step [s].", minimum=0.001, maximum=1.0),
    ParamSpec("frame_id", "pan_link", "frame_id of the temperature messages."),
    ParamSpec("fault.medium_sensor", "none", "Medium temperature sensor fault.", choices=SENSOR_FAULTS,
              read_only=False),
    ParamSpec("fault.pan_sensor", "none", "Pan surface temperature sensor fault.", choices=SENSOR_FAULTS,
              read_only=False),
    ParamSpec("fault.relay_welded", False, "The power relay is welded: power stays on whatever is commanded.",
              read_only=False),
)


def thermal_config(values: dict) -> ThermalConfig:
    return ThermalConfig(
        medium=values["medium"],
        medium_mass_kg=values["medium_mass_kg"],
        heat_source=values["heat_source"],
        efficiency=values["efficiency"] or None,
        pan_mass_kg=values["pan_mass_kg"],
        altitude_m=values["altitude_m"],
        ambient_c=values["ambient_temp_c"],
        initial_temp_c=values["initial_temp_c"],
        losses=values["losses"],
        lid=values["lid"],
        oil_smoke_point_c=values["oil_smoke_point_c"],
        max_substep_s=values["max_substep_s"],
    )


class HeaterSimNode(LeanEndpoints, Node):
    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS)
        _, topics = robot_names(values["device_file"])
        config = thermal_config(values)
        for problem in config.problems():  # cross-field rules, e.g. water above its boiling point
            name, _, detail = problem.partition(": ")
            raise ParameterError({"ambient_c": "ambient_temp_c"}.get(name, name), detail)
        self.heater = SimHeater(ThermalModel(config), values["max_power_w"], values["overtemp_cutoff_c"])
        self._frame_id = values["frame_id"]
        self._apply_faults(values)
        self._sim_time = SimTime(max_step_s=3600.0)
        self._lock = threading.Lock()
        self._group = MutuallyExclusiveCallbackGroup()
        self._smoke_reported = False
        self.add_on_set_parameters_callback(reject_invalid(PARAMETERS))
        self.add_post_set_parameters_callback(self._on_parameters_set)
        self._state_pub = self.create_publisher(HeaterState, topics.heater_state, qos.sensor())
        self._medium_pub = self.create_publisher(Temperature, MEDIUM_TEMPERATURE_TOPIC, qos.sensor())
        self._pan_pub = self.create_publisher(Temperature, PAN_TEMPERATURE_TOPIC, qos.sensor())
        self._subscription = self.create_subscription(
            HeaterCommand, topics.heater_command, self._on_command, qos.command(), callback_group=self._group
        )
        self._timer = self.create_timer(1.0 / values["publish_rate_hz"], self._on_tick, callback_group=self._group)
        self._command_timeout_s = values["command_timeout_s"]
        self._last_command = time.monotonic()  # steady receipt time of the latest valid command
        self.dead_man_cuts = 0  # how often the dead-man cut the hob (tests, diagnostics)
        self._safety_hold_s = values["safety_hold_s"]
        self._safety_source = values["safety_source"]
        self._commanded_by = ""  # the source of the command that set the mode (HeaterState.commanded_by)
        self._safety_hold_until = -math.inf  # steady clock
        self.ignored_during_hold = 0  # heat commands the safety priority dropped (tests, diagnostics)
        self._dead_man_timer = None
        if self._command_timeout_s > 0:  # checked on the steady clock: a paused /clock never keeps heat on
            self._dead_man_timer = self.create_timer(  # runs only while the hob is not idle (_sync_dead_man)
                min(0.05, self._command_timeout_s / 5), self._on_dead_man, callback_group=self._group,
                clock=Clock(clock_type=ClockType.STEADY_TIME), autostart=not self._idle())
        self.stepper = None
        if values["clock_mode"] == "lockstep":
            self._timer.cancel()  # one state per /clock step instead
            self.stepper = StepParticipant(self, self._on_step, callback_group=self._group, idle=self._idle)
            self.create_timer(1.0 / values["steady_rate_hz"], self._on_steady_tick, callback_group=self._group,
                              clock=Clock(clock_type=ClockType.STEADY_TIME))
        thermal = self.heater.thermal
        self.get_logger().info(
            f"{config.medium} {thermal.medium_mass_kg:g} kg at {config.start_temp_c:g} degC on a "
            f"{values['max_power_w']:g} W {config.heat_source} hob (efficiency {thermal.efficiency:g}, "
            f"boiling point {thermal.boiling_point_c:.1f} degC); commands on {self._subscription.topic_name}"
        )

    # ------------------------------------------------------------------ parameters

    def _apply_faults(self, values) -> None:
        self.heater.set_sensor_fault("medium", SensorFault(values["fault.medium_sensor"]))
        self.heater.set_sensor_fault("pan", SensorFault(values["fault.pan_sensor"]))
        self.heater.set_relay_welded(values["fault.relay_welded"])

    def _on_parameters_set(self, parameters: list[Parameter]) -> None:
        if any(p.name in CONTENTS for p in parameters):
            with self._lock:
                self._advance()  # the old contents up to now, the new ones from now on
                self._apply_contents()
                self._publish()
        if not any(p.name.startswith("fault.") for p in parameters):
            return
        values = {spec.name: self.get_parameter(spec.name).value for spec in PARAMETERS if spec.name.startswith("fault.")}
        with self._lock:
            self._advance()
            self._apply_faults(values)
            self._publish()
        self.get_logger().warning(f"injected faults now: {values}")

    # ------------------------------------------------------------------ control

    def _now_ns(self) -> int:
        """The ROS time the model runs to: in lock-step, the step being simulated."""
        return max(self.stepper.t_ns, 0) if self.stepper is not None else self.get_clock().now().nanoseconds

    def _advance(self) -> None:
        """Integrate the hob up to the current ROS time (call with the lock held)."""
        step = self._sim_time.advance(self._now_ns())
        if step.seconds > 0:
            self.heater.step(step.seconds)
        if step.skipped:
            self.get_logger().warning(f"clock jumped ahead: {step.skipped:.1f} s not simulated")
        if self.heater.thermal.smoking and not self._smoke_reported:
            self.get_logger().warning(f"oil passed its smoke point ({self.heater.thermal.config.oil_smoke_point_c:g} degC)")
        self._smoke_reported = self.heater.thermal.smoking

    def _publish(self) -> None:
        snap = self.heater.snapshot()
        stamp = Time(nanoseconds=self._now_ns()).to_msg()
        state = HeaterState()
        state.stamp = stamp
        state.on = snap.on
        state.power_w = snap.power_w
        state.commanded_mode = int(snap.commanded_mode)
        state.commanded_by = self._commanded_by
        state.medium = snap.medium
        state.medium_mass_kg = snap.medium_mass_kg
        state.medium_temp_c = snap.medium_temp_c
        state.pan_surface_temp_c = snap.pan_surface_temp_c
        state.medium_sensor_ok = snap.medium_sensor_ok
        state.pan_sensor_ok = snap.pan_sensor_ok
        state.fault = int(snap.fault)
        state.fault_detail = snap.fault_detail
        self._state_pub.publish(state)
        self._sync_dead_man()
        for publisher, value in ((self._medium_pub, snap.medium_temp_c), (self._pan_pub, snap.pan_surface_temp_c)):
            msg = Temperature()
            msg.header.stamp = stamp
            msg.header.frame_id = self._frame_id
            msg.temperature = value
            msg.variance = 0.0 if math.isfinite(value) else math.nan
            publisher.publish(msg)

    def _on_command(self, msg: HeaterCommand) -> None:
        now = time.monotonic()
        if msg.mode == HeaterCommand.MODE_OFF and msg.source == self._safety_source and self._safety_hold_s > 0:
            self._safety_hold_until = now + self._safety_hold_s
        elif msg.mode != HeaterCommand.MODE_OFF and now < self._safety_hold_until:
            self.ignored_during_hold += 1
            if self.ignored_during_hold == 1 or self.ignored_during_hold % 100 == 0:
                self.get_logger().warning(f"heat command from {msg.source or 'unknown'} ignored: the safety monitor "
                                          f"holds the hob off ({self.ignored_during_hold} so far)")
            return
        with self._lock:
            self._advance()
            try:
                self.heater.command(msg.mode, msg.power_w, msg.setpoint_c)
            except ValueError as exc:
                self.get_logger().error(f"rejected heater command from {msg.source or 'unknown'}: {exc}")
                return
            self._last_command = time.monotonic()
            self._commanded_by = msg.source
            self._publish()
        if self.stepper is not None and not self._idle():
            self.stepper.wake()  # lock-step: an idle hob asked to be stepped seconds from now; it heats now

    def _on_dead_man(self) -> None:
        silent_s = time.monotonic() - self._last_command
        if silent_s < self._command_timeout_s:
            return
        if deliver_waiting(self._subscription, self._on_command):  # they came while this process slept
            silent_s = time.monotonic() - self._last_command
            if silent_s < self._command_timeout_s:
                return
        with self._lock:
            self._advance()
            detail = (f"dead-man: no HeaterCommand for {silent_s:.2f} s (command_timeout_s "
                      f"{self._command_timeout_s:g}): cut to 0 W")
            if self.heater.cut_for_silence(detail):  # once per occurrence: it is OFF afterwards
                self._commanded_by = NODE_NAME  # the hob's own cut, nobody's command
                self.dead_man_cuts += 1
                self.get_logger().warning(detail)
                self._publish()

    def _sync_dead_man(self) -> None:
        """The dead-man check runs while the hob is on or delivering, and sleeps while it is off: an
        idle hob has nothing to cut. Every state change is published, so this sees each one; a heat
        command that restarts it also resets the silence it measures."""
        timer = self._dead_man_timer
        if timer is None:
            return
        idle = self._idle()
        if idle and not timer.is_canceled():
            timer.cancel()
        elif not idle and timer.is_canceled():
            timer.reset()

    def _apply_contents(self) -> None:
        """Put the contents the parameters name in the pan (call with the lock held, after _advance)."""
        medium, mass, lid = (self.get_parameter(name).value for name in CONTENTS)
        before = self.heater.thermal
        try:
            self.heater.set_contents(medium, float(mass), bool(lid))
        except ValueError as exc:  # the parameter checks should have refused it already
            self.get_logger().error(f"pot contents not changed: {exc}")
            return
        self.get_logger().info(
            f"pot now holds {medium} {self.heater.thermal.medium_mass_kg:g} kg{' with a lid' if lid else ''} "
            f"(was {before.config.medium} {before.medium_mass_kg:g} kg); pan {self.heater.thermal.pan_c:.1f} degC, "
            f"medium {self.heater.thermal.medium_c:.1f} degC")

    def _on_tick(self) -> None:
        with self._lock:
            self._advance()
            self._publish()

    def _idle(self) -> bool:
        """Off and delivering nothing (a welded relay delivers): the pan only cools."""
        return self.heater.mode is HeaterMode.OFF and self.heater.power_w == 0.0

    def _on_step(self, t_ns: int) -> None:
        self._on_tick()

    def _on_steady_tick(self) -> None:
        """Lock-step: the state as of the current step, so it stays fresh however slow the steps."""
        if self.stepper.t_ns >= 0:
            with self._lock:
                self._publish()

    def close(self) -> None:
        if self.stepper is not None:
            self.stepper.leave()


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, HeaterSimNode, args, threads=1)


if __name__ == "__main__":
    sys.exit(main())
