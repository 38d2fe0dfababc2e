"""Achieved real-time factor of the simulated kitchen.

1. The pure models (thermal, heater, arm) stepped as fast as possible on one core: the upper
   bound on how fast any sim can run.
2. The nodes (sim_clock + arm_sim + heater_sim) over ROS at requested real-time factors: how
   fast sim time really advances in what the heater and arm publish, and how many states per
   simulated second a subscriber gets.

Run from the repository with the project's venv:
    .venv/bin/python benchmarks/sim_bench.py [--factors 1,10,50,100] [--sim-s 10]
Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from cookwala_ros import bringup
from cookwala_ros.sim.arm_model import ArmModel, Trajectory, TrajectoryPoint
from cookwala_ros.sim.heater import SimHeater
from cookwala_ros.robot.description import default_arm, load_poses
from cookwala_ros.sim.thermal_model import ThermalConfig, ThermalModel
from cookwala_ros.supervisor import ProcessSpec, Supervisor

SIM_NODES = ("sim_clock", "arm_sim", "heater_sim")


# ---------------------------------------------------------------------------------------------
# Pure models


def bench_thermal(sim_s: float, dt: float) -> float:
    model = ThermalModel(ThermalConfig())
    model.set_power(2000.0)
    steps = int(sim_s / dt)
    start = time.perf_counter()
    for _ in range(steps):
        model.step(dt)
    return sim_s / (time.perf_counter() - start)


def bench_heater(sim_s: float, dt: float) -> float:
    heater = SimHeater(ThermalModel(ThermalConfig()))
    heater.command(1, 2000.0)  # MODE_POWER
    steps = int(sim_s / dt)
    start = time.perf_counter()
    for _ in range(steps):
        heater.step(dt)
        heater.snapshot()  # the node reads a snapshot for every state it publishes
    return sim_s / (time.perf_counter() - start)


def _arm_model() -> tuple[ArmModel, dict[str, np.ndarray]]:
    arm = default_arm()
    poses = {name: arm.positions_vector(p) for name, p in load_poses(arm=arm).items()}
    model = ArmModel(arm.joint_names, arm.max_velocity, arm.max_acceleration, arm.lower, arm.upper,
                     poses["home"], control_period=0.01)
    return model, poses


def bench_arm(sim_s: float, dt: float) -> float:
    """The arm kept moving: a new 2 s trajectory between two poses every 2 s of sim time."""
    model, poses = _arm_model()
    names = ("serve", "dispense")
    steps = int(sim_s / dt)
    per_move = max(1, int(2.0 / dt))
    start = time.perf_counter()
    for i in range(steps):
        if i % per_move == 0:
            target = poses[names[(i // per_move) % 2]]
            model.command(Trajectory(model.joint_names, (TrajectoryPoint(2.0, tuple(target)),)))
        model.step(dt)
        model.measured()
    return sim_s / (time.perf_counter() - start)


def pure_models(sim_s: float) -> None:
    print(f"pure models, stepped as fast as possible ({sim_s:g} s of sim time each, one core):")
    rows = [
        ("thermal model, 0.1 s steps", bench_thermal(sim_s, 0.1)),
        ("thermal model, 1.0 s steps (10 substeps)", bench_thermal(sim_s, 1.0)),
        ("heater (SimHeater), 0.1 s steps + snapshot", bench_heater(sim_s, 0.1)),
        ("arm model, 0.01 s steps, moving", bench_arm(sim_s / 10, 0.01)),
        ("arm model, 0.3 s steps, moving", bench_arm(sim_s / 10, 0.3)),
    ]
    for label, rtf in rows:
        print(f"  {label:<45} real-time factor {rtf:>12,.0f}")


# ---------------------------------------------------------------------------------------------
# Nodes over ROS


def ros_nodes(factors: list[float], sim_s: float, min_wall_s: float, verbose: bool) -> None:
    import rclpy
    import rclpy.executors
    from builtin_interfaces.msg import Duration
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from cookwala_msgs.msg import HeaterCommand, HeaterState
    from cookwala_ros.ros import qos

    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    print(f"\nnodes over ROS ({', '.join(SIM_NODES)}; at least {sim_s:g} s of sim time and {min_wall_s:g} s of wall "
          f"time per factor; heater at 2000 W, arm moving):")
    print(f"  {'requested':>9} | {'sim':>6} | {'/clock':>7} | {'/heater/state':^30} | {'/joint_states':^30}")
    print(f"  {'RTF':>9} | {'s':>6} | {'RTF':>7} | {'RTF':>8} {'msgs/wall s':>11} {'per sim s':>9} |"
          f" {'RTF':>8} {'msgs/wall s':>11} {'per sim s':>9}")
    manifest = bringup.load_manifest("sim_kitchen")
    arm_model, poses = _arm_model()
    for factor in factors:
        specs = [s for s in manifest.node_specs({"real_time_factor": factor}) if s.name in SIM_NODES]
        procs = [ProcessSpec(s.name, bringup.node_command(s), s.required) for s in specs]
        sink = sys.stdout if verbose else open(os.devnull, "w")
        supervisor = Supervisor(procs, output=sink)
        context = rclpy.Context()
        rclpy.init(context=context)
        node = rclpy.create_node("sim_bench", context=context)
        executor = rclpy.executors.SingleThreadedExecutor(context=context)
        executor.add_node(node)
        records: dict[str, list[tuple[float, float]]] = {"clock": [], "heater": [], "arm": []}

        def recorder(key, stamp_of):
            return lambda msg: records[key].append((time.monotonic(), stamp_of(msg)))

        def stamp(t) -> float:
            return t.sec + t.nanosec * 1e-9

        node.create_subscription(Clock, "/clock", recorder("clock", lambda m: stamp(m.clock)), qos.clock())
        node.create_subscription(HeaterState, "/heater/state", recorder("heater", lambda m: stamp(m.stamp)), qos.sensor())
        node.create_subscription(JointState, "/joint_states", recorder("arm", lambda m: stamp(m.header.stamp)), qos.sensor())
        heater_pub = node.create_publisher(HeaterCommand, "/heater/command", qos.command())
        arm_pub = node.create_publisher(JointTrajectory, "/arm_controller/joint_trajectory", qos.command())
        try:
            supervisor.start()
            deadline = time.monotonic() + 60.0
            while not all(records.values()) or not heater_pub.get_subscription_count() or not arm_pub.get_subscription_count():
                if supervisor.poll() or time.monotonic() > deadline:
                    raise RuntimeError(f"the sim nodes did not come up at factor {factor:g}")
                executor.spin_once(timeout_sec=0.05)
            time.sleep(0.5)  # discovery settles both ways
            command = HeaterCommand(mode=HeaterCommand.MODE_POWER, power_w=2000.0, source="operator")
            heater_pub.publish(command)
            window_sim_s = max(sim_s, factor * min_wall_s)  # long enough in wall time to average bursts
            trajectory = JointTrajectory(joint_names=list(arm_model.joint_names))
            for i in range(int(window_sim_s / 2.0) + 2):
                target = poses[("serve", "dispense")[i % 2]]
                t = 2.0 * (i + 1)
                trajectory.points.append(JointTrajectoryPoint(
                    positions=[float(v) for v in target],
                    time_from_start=Duration(sec=int(t), nanosec=int((t % 1) * 1e9))))
            arm_pub.publish(trajectory)
            for values in records.values():
                values.clear()
            wall_limit = time.monotonic() + window_sim_s / factor * 3 + 10.0
            keep_alive_at = time.monotonic() + 0.1  # the hob's dead-man cuts it without a fresh command
            while not records["clock"] or records["clock"][-1][1] - records["clock"][0][1] < window_sim_s:
                if time.monotonic() > wall_limit:
                    break
                if time.monotonic() >= keep_alive_at:
                    heater_pub.publish(command)
                    keep_alive_at += 0.1
                executor.spin_once(timeout_sec=0.01)
            print(f"  {factor:>9g} | {window_sim_s:>6.0f} | {_rtf(records['clock']):>7.1f} | "
                  f"{_row(records['heater'])} | {_row(records['arm'])}")
        finally:
            heater_pub.publish(HeaterCommand(mode=HeaterCommand.MODE_OFF, source="operator"))
            supervisor.stop()
            node.destroy_node()
            rclpy.shutdown(context=context)
            if sink is not sys.stdout:
                sink.close()


def _rtf(records: list[tuple[float, float]]) -> float:
    if len(records) < 2:
        return float("nan")
    (w0, s0), (w1, s1) = records[0], records[-1]
    return (s1 - s0) / (w1 - w0) if w1 > w0 else float("nan")


def _row(records: list[tuple[float, float]]) -> str:
    if len(records) < 2:
        return f"{'no messages':^30}"
    (w0, s0), (w1, s1) = records[0], records[-1]
    wall, sim = w1 - w0, s1 - s0
    return f"{_rtf(records):>8.1f} {len(records) / wall:>11.0f} {len(records) / sim if sim > 0 else float('nan'):>9.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--factors", default="1,10,50,100", help="requested real-time factors (default 1,10,50,100)")
    parser.add_argument("--sim-s", type=float, default=10.0, help="sim seconds measured per factor, at least (default 10)")
    parser.add_argument("--min-wall-s", type=float, default=3.0, help="wall seconds measured per factor, at least (default 3)")
    parser.add_argument("--model-sim-s", type=float, default=3600.0, help="sim seconds per pure-model run (default 3600)")
    parser.add_argument("--skip-ros", action="store_true", help="only the pure models")
    parser.add_argument("--verbose", action="store_true", help="show the nodes' output")
    args = parser.parse_args()
    pure_models(args.model_sim_s)
    if not args.skip_ros:
        ros_nodes([float(f) for f in args.factors.split(",")], args.sim_s, args.min_wall_s, args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
