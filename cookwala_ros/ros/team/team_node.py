"""cookwala_team: one per robot; answers every call for proposals for its robot.

Started in the robot's namespace like its other nodes, it reads the robot's device file
(parameter `device_file`, empty = the package's config/device.yaml) into the capabilities
document and listens to the kitchen-wide `/cookwala/team/cfp`. Every task of a cfp gets one
TeamBid (`/cookwala/team/bid`) or one TeamDecline with its reason (`/cookwala/team/decline`),
judged by `teaming.bidder.answer_cfp` (the executor's own pre-start checks, with the device
file's SafetyLimits and altitude). While its robot's executor runs an execution (its status on
`cookwala/status`) or its safety monitor holds it stopped (`cookwala/safety/status`), every task
is declined `busy`, naming why, as the executor would refuse the goal. Parameter
`human_present` (may be set while running) lifts the presence declines. A malformed cfp, or one
whose deadline has passed, is logged and not answered. A bad device file stops the node at
start with a message naming the key.
"""

from __future__ import annotations

import sys
import time

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node

from cookwala_msgs.msg import Event, ExecutionStatus, SafetyStatus, TeamBid, TeamCfp, TeamDecline
from cookwala_ros.core.lifecycle import is_final, is_state
from cookwala_ros.capabilities import ServedInterfaces, capabilities_document
from cookwala_ros.device import load_device_config
from cookwala_ros.executor.config import effective_limits
from cookwala_ros.ros import convert, names, qos
from cookwala_ros.ros.endpoints import LeanEndpoints
from cookwala_ros.ros.node_main import run_node
from cookwala_ros.ros.params import ParamSpec, declare_parameters, reject_invalid
from cookwala_ros.ros.team import wire
from cookwala_ros.teaming import events
from cookwala_ros.teaming.auction import deadline_seconds
from cookwala_ros.teaming.bidder import answer_cfp
from cookwala_ros.teaming.types import Bid

PARAMETERS = (
    ParamSpec("device_file", "", "Path of the device file (YAML); empty = the package's config/device.yaml."),
    ParamSpec("human_present", False, "A responsible person is present (lifts the presence declines).",
              read_only=False),
)


class TeamNode(LeanEndpoints, Node):
    def __init__(self, **kwargs) -> None:
        super().__init__(names.TEAM_NODE, **kwargs)
        device_file = declare_parameters(self, PARAMETERS)["device_file"] or None
        self.add_on_set_parameters_callback(reject_invalid(PARAMETERS))
        # Raises DeviceConfigError naming the key: run_node turns it into a clean exit.
        config = load_device_config(device_file)
        self.capabilities = capabilities_document(config, ServedInterfaces(namespace=self.get_namespace()))
        self.actor_id = config.device_id
        self.limits = effective_limits(config)  # None: the standard's default pack, as the executor
        self.altitude_m = config.altitude_m
        self.answered = 0  # cfps answered (for logs and tests)
        self._running: dict[str, str] = {}  # execution id -> state, while not final (its executor's status)
        self._hold: str | None = None  # why its safety monitor holds it stopped, or None
        self._bid_pub = self.create_publisher(TeamBid, names.TEAM_BID, qos.team())
        self._decline_pub = self.create_publisher(TeamDecline, names.TEAM_DECLINE, qos.team())
        self._event_pub = self.create_publisher(Event, names.EVENTS, qos.events())  # its answers as CloudEvents
        self._source = f"urn:cookwala:device:{self.actor_id}"
        group = MutuallyExclusiveCallbackGroup()
        self.create_subscription(TeamCfp, names.TEAM_CFP, self._on_cfp, qos.team(), callback_group=group)
        self.create_subscription(ExecutionStatus, names.EXECUTION_STATUS, self._on_execution, qos.latched(),
                                 callback_group=group)
        self.create_subscription(SafetyStatus, names.SAFETY_STATUS, self._on_safety, qos.latched(),
                                 callback_group=group)
        self.get_logger().info(f"answering calls for proposals on {names.TEAM_CFP} as {self.actor_id} "
                               f"({len(config.ops)} ops)")

    def _on_execution(self, msg: ExecutionStatus) -> None:
        if not is_state(msg.state) or is_final(msg.state):
            self._running.pop(msg.id, None)
        else:
            self._running[msg.id] = msg.state

    def _on_safety(self, msg: SafetyStatus) -> None:
        held = msg.state in (SafetyStatus.STATE_STOPPED, SafetyStatus.STATE_FAULT)
        self._hold = (f"the safety monitor is {msg.state_label}" + (f" ({msg.last_trigger})" if msg.last_trigger else "")
                      if held else None)

    @property
    def busy(self) -> str:
        """What keeps the robot busy ('' when nothing does)."""
        return "; ".join(f"running execution {eid} ({state})" for eid, state in sorted(self._running.items()))

    def _on_cfp(self, msg: TeamCfp) -> None:
        try:
            cfp = wire.cfp_from_msg(msg)
            deadline_s = deadline_seconds(cfp.deadline)
            if deadline_s is not None and time.time() >= deadline_s:
                # the caller's auction ignores answers after its deadline: answering would only add load
                self.get_logger().info(f"cfp {cfp.cfp_id} from {cfp.from_id}: its deadline {cfp.deadline} has "
                                       "passed, not answered")
                return
            answers = answer_cfp(cfp, self.capabilities, actor_id=self.actor_id,
                                 human_present=bool(self.get_parameter("human_present").value), busy=self.busy,
                                 limits=self.limits, altitude_m=self.altitude_m, safety_hold=self._hold)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:  # never let a sender stop this node
            self.get_logger().warning(f"ignoring malformed cfp {msg.cfp_id!r} from {msg.from_id!r}: {exc}")
            return
        stamp = self.get_clock().now().to_msg()
        now = time.time()
        for answer in answers:
            out = wire.answer_msg(answer, stamp, cfp.session_id or "")
            (self._bid_pub if isinstance(answer, Bid) else self._decline_pub).publish(out)
            self._event_pub.publish(convert.event_msg(events.answer_event(answer, source=self._source, time_s=now,
                                                                          session=cfp.session_id)))
        self.answered += 1
        bids = sum(isinstance(a, Bid) for a in answers)
        self.get_logger().info(f"cfp {cfp.cfp_id}: {bids} bids, {len(answers) - bids} declines")


def main(args: list[str] | None = None) -> int:
    return run_node("cookwala_team", TeamNode, args, threads=1)


if __name__ == "__main__":
    sys.exit(main())
