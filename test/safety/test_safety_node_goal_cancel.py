"""Every halt also cancels the arm controller's FollowJointTrajectory goals (issue 16, item 10).

A real controller runs a goal of its action to the end unless it is cancelled; the cancel is
action_msgs' CancelGoal service of that action, whatever the action type, so the monitor needs
no control_msgs for it. Here a stand-in controller offers only that service, and the monitor (in
this process, armed: the kitchen of test_safety_node_starved.py) must call it on a stop.
"""

from __future__ import annotations

import time

from action_msgs.srv import CancelGoal
from std_msgs.msg import Bool

from test_safety_node_starved import starved  # noqa: F401 - the fixture: an armed monitor, heating


def test_a_stop_cancels_every_follow_joint_trajectory_goal(starved):  # noqa: F811
    monitor, stand_in, spin_for = starved
    asked: list = []

    def cancel(request, response):
        asked.append(request)
        return response

    stand_in.node.create_service(CancelGoal, "/arm_controller/follow_joint_trajectory/_action/cancel_goal", cancel)
    end = time.monotonic() + 10.0
    while not monitor._cancel.service_is_ready():
        assert time.monotonic() < end, "the monitor never saw the controller's cancel service"
        spin_for(0.05)
    monitor._on_estop(Bool(data=True))
    end = time.monotonic() + 5.0
    while not asked:
        assert time.monotonic() < end, "no goal cancel on the stop"
        spin_for(0.05)
    assert monitor.monitor.state == "stopped"
    goal = asked[0].goal_info
    assert bytes(goal.goal_id.uuid) == bytes(16) and goal.stamp.sec == 0 and goal.stamp.nanosec == 0  # every goal
