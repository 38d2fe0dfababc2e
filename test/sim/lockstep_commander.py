"""A test's hob commander in lock-step, acting as the executor's control tick does.

At each step T it waits for the hob's state of T, then sends its command and reports T done: so
the command takes effect from T on, whatever the order in which /clock and the state arrive.
"""

from __future__ import annotations

from cookwala_msgs.msg import HeaterCommand, HeaterState
from cookwala_ros.ros import qos
from cookwala_ros.ros.lockstep import StepParticipant


def stamp_ns(msg) -> int:
    return msg.stamp.sec * 1_000_000_000 + msg.stamp.nanosec


class LockstepCommander:
    def __init__(self, node, command_for, heater_ns: str = ""):
        """`command_for(t_ns, state)` gives the HeaterCommand to send at step t (None: send nothing)."""
        self.node = node
        self.states: list[HeaterState] = []
        self.sent: list[tuple[int, HeaterCommand]] = []
        self._command_for = command_for
        self.publisher = node.create_publisher(HeaterCommand, f"{heater_ns}/heater/command", qos.command())
        node.create_subscription(HeaterState, f"{heater_ns}/heater/state", self._on_state, qos.sensor(depth=1000))
        self.participant = StepParticipant(node, self._on_step)

    def _on_step(self, t_ns: int) -> bool:
        return self._act()

    def _on_state(self, msg: HeaterState) -> None:
        self.states.append(msg)
        if self.participant.pending:
            self._act()

    def _act(self) -> bool:
        t_ns = self.participant.t_ns
        if not self.states or stamp_ns(self.states[-1]) < t_ns:
            return False  # the hob has not finished this step yet
        command = self._command_for(t_ns, self.states[-1])
        if command is not None:
            command.stamp.sec, command.stamp.nanosec = divmod(t_ns, 1_000_000_000)
            self.publisher.publish(command)
            self.sent.append((t_ns, command))
        self.participant.finish()
        return True
