"""arm_sim: the simulated kitchen arm behind the standard JointTrajectoryController topics.

Subscribes trajectory_msgs/JointTrajectory on `arm_controller/joint_trajectory` and publishes
sensor_msgs/JointState on `joint_states`. Every trajectory is checked as ros2_controllers'
JointTrajectoryController checks it (`robot.joint_trajectory.jtc_problems`, default controller
parameters): what the real one rejects, the empty trajectory included, is logged and changes
nothing; an accepted one replaces the old one. A stop is a hold point
(convert.halt_trajectory_msg). Joint names and limits come from the robot description
(config/robot/). The model steps on the ROS clock, so under `use_sim_time` it follows /clock at
any real-time factor. With `clock_mode` lockstep (sim_clock's) it steps once per /clock message
instead and reports each step done; between steps it re-publishes its joint states on the
steady clock (`steady_rate_hz`), so a slow step never looks like a dead driver. It never moves
slower than real time: when /clock has not stepped for `stall_s` (wall) while the arm moves, it
moves on with the steady clock, as a real arm does, and lets /clock catch up. A stop's braking
(the monitor times it on the steady clock: 0.5 s) so ends in time however long a step takes on a
loaded host; steps that come faster than that leave the trace exactly as lock-step makes it.

Faults for safety tests, settable while running (`ros2 param set /arm_sim fault.… …`):
`fault.frozen_encoder`, `fault.stuck_joints` (comma-separated joint names),
`fault.ignore_commands`.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time

from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.time import Time
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from cookwala_ros.ros.endpoints import LeanEndpoints
from cookwala_ros.ros.node_main import run_node
from cookwala_ros.robot.joint_trajectory import JTC_VERSION, jtc_problems
from cookwala_ros.ros import names, qos
from cookwala_ros.ros.device_names import DEVICE_FILE, robot_names
from cookwala_ros.ros.convert import trajectory_data
from cookwala_ros.ros.lockstep import StepParticipant, clock_mode_param
from cookwala_ros.ros.params import ParameterError, ParamSpec, comma_list, declare_parameters, reject_invalid
from cookwala_ros.sim.arm_model import ArmFaults, ArmModel, Trajectory, TrajectoryError, TrajectoryPoint
from cookwala_ros.robot.description import RobotDescriptionError, load_arm, load_poses
from cookwala_ros.sim.sim_time import SimTime

NODE_NAME = "arm_sim"
STALL_CHECK_S = 0.02  # how often a moving lock-step arm looks whether /clock stalled [s, steady]
TRAJECTORY_TOPIC = names.ARM_TRAJECTORY  # defaults; a device file may rename them
JOINT_STATES_TOPIC = names.JOINT_STATES

PARAMETERS = (
    DEVICE_FILE,
    ParamSpec("robot_description_file", "", "URDF of the arm; empty = the package's config/robot/kitchen_arm.urdf."),
    ParamSpec("joint_limits_file", "", "joint_limits YAML with acceleration limits; empty = joint_limits.yaml next to the URDF."),
    ParamSpec("poses_file", "", "Named poses YAML; empty = the package's config/robot/poses.yaml."),
    ParamSpec("initial_pose", "home", "Named pose the arm starts in."),
    ParamSpec("publish_rate_hz", 100.0, "JointState rate on the ROS clock [Hz].", minimum=0.0, maximum=1000.0,
              exclusive_minimum=True),
    clock_mode_param("the arm steps"),
    ParamSpec("steady_rate_hz", 10.0, "In lockstep: joint states are re-published this often on the steady clock "
              "between steps [Hz].", minimum=0.0, maximum=1000.0, exclusive_minimum=True),
    ParamSpec("stall_s", 0.1, "In lockstep: after this long [s, wall] without a /clock step while the arm moves, it "
              "moves on in real time (a real arm does not wait for the simulation); 0 = it waits for /clock.",
              minimum=0.0, maximum=10.0),
    ParamSpec("control_period_s", 0.01, "Physics substep of the arm model [s] (the controller's update period).",
              minimum=0.0001, maximum=0.1),
    ParamSpec("fault.frozen_encoder", False, "Reported joint states stop updating while the arm keeps moving.",
              read_only=False),
    ParamSpec("fault.stuck_joints", "", "Comma-separated joints that do not move.", read_only=False),
    ParamSpec("fault.ignore_commands", False, "New trajectories, stop included, are silently dropped.",
              read_only=False),
)


def trajectory_from_msg(msg: JointTrajectory, sim_time: SimTime) -> Trajectory:
    stamp_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
    points = tuple(
        TrajectoryPoint(
            time_from_start=p.time_from_start.sec + p.time_from_start.nanosec * 1e-9,
            positions=tuple(p.positions),
            velocities=tuple(p.velocities),
        )
        for p in msg.points
    )
    start = sim_time.model_time(stamp_ns) if stamp_ns > 0 and sim_time.started else None
    return Trajectory(joint_names=tuple(msg.joint_names), points=points, start_time=start)


class ArmSimNode(LeanEndpoints, Node):
    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS)
        device, self._names = robot_names(values["device_file"])
        arm_section = (device.raw.get("arm") or {}) if device else {}
        if not values["robot_description_file"] and arm_section.get("robot_description"):
            values["robot_description_file"] = str(device.resolve(arm_section["robot_description"]))
        if not values["poses_file"] and arm_section.get("poses"):
            values["poses_file"] = str(device.resolve(arm_section["poses"]))
        try:
            arm = load_arm(values["robot_description_file"] or None, values["joint_limits_file"] or None)
        except (RobotDescriptionError, OSError) as exc:
            raise ParameterError("robot_description_file", str(exc)) from None
        try:
            poses = load_poses(values["poses_file"] or None, arm)
        except (RobotDescriptionError, OSError) as exc:
            raise ParameterError("poses_file", str(exc)) from None
        if values["initial_pose"] not in poses:
            raise ParameterError("initial_pose", f"unknown pose {values['initial_pose']!r}; known: {', '.join(poses)}")
        self.arm = arm
        self.model = ArmModel(
            arm.joint_names,
            arm.max_velocity,
            arm.max_acceleration,
            arm.lower,
            arm.upper,
            arm.positions_vector(poses[values["initial_pose"]]),
            control_period=values["control_period_s"],
        )
        self._apply_faults(values)
        self.rejected = 0  # trajectories rejected as the real controller would (tests, diagnostics)
        self._sim_time = SimTime()
        self._lock = threading.Lock()  # the model is shared by the control callbacks and parameter updates
        self._group = MutuallyExclusiveCallbackGroup()
        self.add_on_set_parameters_callback(reject_invalid(PARAMETERS))
        self.add_on_set_parameters_callback(self._check_stuck_joints)
        self.add_post_set_parameters_callback(self._on_parameters_set)
        self._publisher = self.create_publisher(JointState, self._names.joint_states, qos.sensor())
        self._subscription = self.create_subscription(
            JointTrajectory, self._names.arm_trajectory, self._on_trajectory, qos.command(), callback_group=self._group
        )
        self._timer = self.create_timer(1.0 / values["publish_rate_hz"], self._on_tick, callback_group=self._group)
        self.stepper = None
        self._rest_published = False  # lock-step: the rest it sits in was published on a step
        if values["clock_mode"] == "lockstep":
            self._timer.cancel()  # one state per /clock step instead
            self.stepper = StepParticipant(self, self._on_step, callback_group=self._group, idle=lambda: self.model.idle)
            steady = Clock(clock_type=ClockType.STEADY_TIME)
            self.create_timer(1.0 / values["steady_rate_hz"], self._on_steady_tick, callback_group=self._group,
                              clock=steady)
            self._stall_s = float(values["stall_s"])
            self._lead_s = 0.0  # model seconds simulated ahead of /clock while it stalled
            self._stepped_at = self._wall_mark = time.monotonic()  # the last step; the last real-time advance
            self._stall_timer = self.create_timer(STALL_CHECK_S, self._on_stall_check, callback_group=self._group,
                                                  clock=steady)
            self._stall_timer.cancel()  # runs while the arm moves
        self.get_logger().info(
            f"{len(arm.joint_names)} joints at pose {values['initial_pose']!r}; "
            f"trajectories on {self._subscription.topic_name}, states on {self._publisher.topic_name}"
        )

    # ------------------------------------------------------------------ parameters

    def _faults_from(self, values) -> ArmFaults:
        return ArmFaults(
            frozen_encoder=bool(values["fault.frozen_encoder"]),
            stuck_joints=frozenset(comma_list(values["fault.stuck_joints"])),
            ignore_commands=bool(values["fault.ignore_commands"]),
        )

    def _apply_faults(self, values) -> None:
        try:
            self.model.set_faults(self._faults_from(values))
        except ValueError as exc:
            raise ParameterError("fault.stuck_joints", str(exc)) from None

    def _check_stuck_joints(self, parameters: list[Parameter]):
        for parameter in parameters:
            if parameter.name == "fault.stuck_joints" and isinstance(parameter.value, str):
                unknown = sorted(set(comma_list(parameter.value)) - set(self.arm.joint_names))
                if unknown:
                    return SetParametersResult(
                        successful=False, reason=f"parameter 'fault.stuck_joints': unknown joint(s) {', '.join(unknown)}"
                    )
        return SetParametersResult(successful=True)

    def _on_parameters_set(self, parameters: list[Parameter]) -> None:
        if not any(p.name.startswith("fault.") for p in parameters):
            return
        values = {spec.name: self.get_parameter(spec.name).value for spec in PARAMETERS if spec.name.startswith("fault.")}
        with self._lock:
            self.model.set_faults(self._faults_from(values))
        self.get_logger().warning(f"injected faults now: {self.model.faults}")

    # ------------------------------------------------------------------ control

    def _now_ns(self) -> int:
        """The ROS time the model runs to: in lock-step, the step being simulated."""
        return max(self.stepper.t_ns, 0) if self.stepper is not None else self.get_clock().now().nanoseconds

    def _advance(self) -> None:
        """Bring the model to the current ROS time (call with the lock held); what it already
        simulated in real time during a stall of /clock is not simulated twice."""
        step = self._sim_time.advance(self._now_ns())
        seconds = step.seconds
        if self.stepper is not None and self._lead_s > 0:
            caught_up = min(self._lead_s, seconds)
            self._lead_s -= caught_up
            seconds -= caught_up
        if seconds > 0:
            self.model.step(seconds)
        self.model.time = step.model_time + (self._lead_s if self.stepper is not None else 0.0)
        if step.skipped:
            self.get_logger().warning(f"clock jumped ahead: {step.skipped:.1f} s not simulated")

    def _publish(self) -> None:
        sample = self.model.measured()
        msg = JointState()
        # stamped with the time the state describes: ahead of /clock by what a stall let the arm
        # move on (a halt planned from it must not extrapolate motion the arm already made)
        lead_ns = int(self._lead_s * 1e9) if self.stepper is not None else 0
        msg.header.stamp = Time(nanoseconds=self._now_ns() + lead_ns).to_msg()
        msg.name = list(self.arm.joint_names)
        msg.position = sample.positions.tolist()
        msg.velocity = sample.velocities.tolist()
        self._publisher.publish(msg)

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        problems = jtc_problems(trajectory_data(msg), self.arm.joint_names, self._now_ns() * 1e-9,
                                self.model.jtc_options)
        if problems:
            self.rejected += 1
            self.get_logger().warning(f"rejected trajectory as the JointTrajectoryController would "
                                      f"({JTC_VERSION}): {problems[0]}; keeping the current motion")
            return
        with self._lock:
            self._advance()
            was_idle = self.model.idle
            trajectory = trajectory_from_msg(msg, self._sim_time)
            if self.stepper is not None and trajectory.start_time is not None:
                # stamped on /clock, which the model is ahead of
                trajectory = dataclasses.replace(trajectory, start_time=trajectory.start_time + self._lead_s)
            try:
                accepted = self.model.command(trajectory)
            except TrajectoryError as exc:
                self.get_logger().error(f"rejected trajectory: {exc}")
                return
            self._publish()  # the state at the moment the command took effect
            self._rest_published = False  # and the rest after it, on its first step
        if accepted and self.stepper is not None:
            self.stepper.wake()  # lock-step: a resting arm asked to be stepped seconds from now; it moves now
            if self._stall_s > 0 and self._stall_timer.is_canceled():
                with self._lock:
                    if was_idle:  # a stall counts from when there was motion to wait for
                        self._stepped_at = self._wall_mark = time.monotonic()
                self._stall_timer.reset()
        if not accepted:
            self.get_logger().debug("trajectory dropped (fault.ignore_commands)")

    def _on_tick(self) -> None:
        with self._lock:
            self._advance()
            self._publish()

    def _on_step(self, t_ns: int) -> None:
        """Lock-step: advance and publish; at rest only the first step's state (the rest, which
        stays current until the next trajectory: ExecutorIO.readings_at), so a resting arm does not
        wake its listeners every step. The steady tick still publishes it between steps."""
        self._stepped_at = self._wall_mark = time.monotonic()
        with self._lock:
            self._advance()
            resting = self.model.idle and not self.model.faults.frozen_encoder  # a frozen encoder may report motion
            if not (resting and self._rest_published):
                self._publish()
            self._rest_published = resting

    def _on_stall_check(self) -> None:
        """Lock-step, while the arm moves: past `stall_s` without a step, move on in real time."""
        with self._lock:
            if self.model.idle:
                self._stall_timer.cancel()
                return
            now = time.monotonic()
            if now - self._stepped_at < self._stall_s:
                return
            self.model.step(now - self._wall_mark)
            self._lead_s += now - self._wall_mark
            self._wall_mark = now
            self._publish()

    def _on_steady_tick(self) -> None:
        """Lock-step: the joint states as of the current step, however slow the steps."""
        if self.stepper.t_ns >= 0:
            with self._lock:
                self._publish()

    def close(self) -> None:
        if self.stepper is not None:
            self.stepper.leave()


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, ArmSimNode, args, threads=1)


if __name__ == "__main__":
    sys.exit(main())
