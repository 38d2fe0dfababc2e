"""The monitor's command gate (ros/safety_gate.py): a guarded executor's heat and motion reach
the controllers only while the monitor is armed, and never after its halt until a local reset.

The probe plays an executor that has not heard of the stop: it keeps sending heat and motion
to the gate at 20 Hz through an e-stop. Watched on the controllers' own topics.
"""

from __future__ import annotations

import threading
import time

import pytest

rclpy = pytest.importorskip("rclpy")

from safety_kitchen import Probe, rearm, start_node, start_script, stop_processes  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from cookwala_msgs.msg import HeaterCommand  # noqa: E402
from cookwala_msgs.srv import ResetSafety  # noqa: E402
from cookwala_ros.ros import names, qos  # noqa: E402

GATE = "/safety_monitor"


@pytest.fixture(scope="module")
def kitchen():
    procs = [start_node("cookwala_ros.ros.arm_sim_node", {}),
             start_node("cookwala_ros.ros.heater_sim_node", {}),
             start_node("cookwala_ros.ros.safety_monitor_node", {"activation_timeout_s": 20.0, "heartbeat_lease_s": 1.0}),
             start_script("safety_heartbeat_sender.py")]
    probe = Probe("gate_probe")
    try:
        probe.wait_state("armed", timeout=30.0)
        probe.wait_for(probe.last_joints, 10.0, "joint states")
        # heat needs a live heartbeat as the monitor hears it (this probe hearing one is not enough:
        # each pair of processes discovers the other on its own)
        probe.wait_for(lambda: (s := probe.status()) and s.executor_heartbeat == "live", 30.0,
                       lambda: f"the monitor hearing the stand-in executor (status: {probe._describe(probe.status())})")
        yield probe
    finally:
        probe.close()
        stop_processes(procs)


class StaleExecutor:
    """Sends heat and a motion through the gate every 50 ms until closed, whatever happens."""

    def __init__(self, probe: Probe, power_w: float):
        node = probe.node
        self.heat = node.create_publisher(HeaterCommand, f"{GATE}/{names.GATE_HEATER_COMMAND}", qos.command())
        self.traj = node.create_publisher(JointTrajectory, f"{GATE}/{names.GATE_ARM_TRAJECTORY}", qos.command())
        self.controller: list = []  # (t, JointTrajectory) seen on the arm controller's topic
        node.create_subscription(JointTrajectory, "/" + names.ARM_TRAJECTORY,
                                 lambda m: self.controller.append((time.monotonic(), m)), qos.command())
        self.probe, self.power_w = probe, power_w
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        probe = self.probe
        assert probe.wait_for(lambda: self.heat.get_subscription_count() and self.traj.get_subscription_count(),
                              10.0, "the monitor's gate")
        self._thread.start()
        return self

    def _run(self):
        direction = 1.0
        while not self._stop.wait(0.05):
            if self.probe.last_joints() is None:
                continue
            self.heat.publish(HeaterCommand(stamp=self.probe.node.get_clock().now().to_msg(),
                                            mode=HeaterCommand.MODE_POWER, power_w=self.power_w, source="executor"))
            _, joints = self.probe.last_joints()
            positions = list(joints.position)
            positions[0] = 1.0 * direction
            direction = -direction
            point = JointTrajectoryPoint(positions=positions)
            point.time_from_start.sec = 1
            self.traj.publish(JointTrajectory(joint_names=list(joints.name), points=[point]))

    def close(self):
        self._stop.set()
        self._thread.join()


def _energising(commands, since: float):
    return [(t, c) for t, c in commands if t > since and c.mode != HeaterCommand.MODE_OFF]


def test_the_gate_forwards_while_armed_and_holds_everything_after_the_halt(kitchen):
    probe = kitchen
    rearm(probe)
    executor = StaleExecutor(probe, 1500.0).start()
    try:
        probe.wait_for(lambda: (h := probe.last_heater()) and h.power_w == 1500.0, 5.0, "heat through the gate")
        probe.wait_for(lambda: executor.controller, 5.0, "motion through the gate")
        t_stop = time.monotonic()
        probe.estop(True)
        probe.wait_state("stopped", timeout=2.0)
        time.sleep(1.0)  # the stale executor goes on sending for a second
        with probe.lock:
            commands = list(probe.heater_commands)
        first_off = next(t for t, c in commands if t > t_stop and c.mode == HeaterCommand.MODE_OFF
                         and c.source == "safety_monitor")
        assert not _energising(commands, first_off), "heat reached the hob after the monitor's off"
        moves_after = [m for t, m in executor.controller if t > first_off and len(m.points) == 1
                       and any(abs(v) > 0 for v in m.points[0].velocities or [])]
        assert not moves_after
        assert not [m for t, m in executor.controller if t > first_off + 0.05 and m.points
                    and m.points[0].positions[0] in (1.0, -1.0)], "a motion reached the arm after the halt"
        assert probe.last_heater().power_w == 0.0
        # a local reset opens the gate again: the same executor's heat gets through
        probe.estop(False)

        def reset():
            reply = probe.call(probe.reset_client, ResetSafety.Request(requested_by="test"))
            return reply.accepted and reply.state == "armed"

        probe.wait_for(reset, 5.0, "a reset to be accepted (once the monitor heard the e-stop released)")
        try:
            probe.wait_for(lambda: (h := probe.last_heater()) and h.power_w == 1500.0, 5.0, "heat after the reset")
        except AssertionError as exc:
            with probe.lock:
                recent = list(probe.heater_commands)[-6:]
            raise AssertionError(f"{exc}; sender alive {executor._thread.is_alive()}, monitor {probe.status()}, "
                                 f"hob {probe.last_heater()}, last commands {recent}") from None
    finally:
        executor.close()
        rearm(probe)


def _monitor_process():
    import psutil

    for proc in psutil.Process().children(recursive=True):
        try:
            if any("safety_monitor_node" in part for part in proc.cmdline()):
                return proc
        except psutil.Error:
            continue
    raise AssertionError("no safety_monitor_node process among this test's children")


def test_commands_that_waited_while_the_monitor_stalled_are_not_forwarded(kitchen):
    """A monitor descheduled for 0.35 s (SIGSTOP; shorter than its 0.5 s state timeouts) then
    catching up: the executor's commands queued meanwhile would refresh the hob's dead-man for an
    executor that may be gone. None older than MAX_AGE_S reaches the controller; fresh ones do."""
    import signal

    from cookwala_ros.ros.safety_gate import MAX_AGE_S

    probe = kitchen
    rearm(probe)
    forwarded: list[tuple[float, HeaterCommand]] = []  # (wall time the monitor sent it on, command)
    probe.node.create_subscription(HeaterCommand, "/" + names.HEATER_COMMAND,
                                   lambda m, info: forwarded.append((info["source_timestamp"] * 1e-9, m)),
                                   qos.command(100))
    executor = StaleExecutor(probe, 1500.0).start()
    monitor = _monitor_process()
    try:
        probe.wait_for(lambda: (h := probe.last_heater()) and h.power_w == 1500.0, 5.0, "heat through the gate")
        monitor.send_signal(signal.SIGSTOP)
        try:
            time.sleep(0.35)
        finally:
            monitor.send_signal(signal.SIGCONT)
        resumed = time.time()

        def after_resume():
            return [(at, m) for at, m in list(forwarded) if at > resumed and m.source == "executor"]

        probe.wait_for(lambda: len(after_resume()) >= 5, 10.0,
                       lambda: f"commands forwarded after the monitor resumed (monitor {probe._describe(probe.status())})")
        # each forwarded command's age when the monitor sent it on: its sender stamped it (system
        # time) as it published; a queued one would be up to 0.35 s old
        ages = [at - (m.stamp.sec + m.stamp.nanosec * 1e-9) for at, m in after_resume()]
        assert max(ages) <= MAX_AGE_S + 0.05, sorted(ages)[-5:]
    finally:
        executor.close()
        rearm(probe)
