"""The name table: every ROS name a robot's nodes use, in one place.

Per-robot names are *relative*: started under a namespace (`cookwala-ros up kitchen --arg
namespace=robot_a`, or a launch file's `PushRosNamespace`), a robot's nodes resolve
`heater/command` to `/robot_a/heater/command`, so two robots share one ROS domain without
hearing each other's hob. Kitchen-wide names are *absolute*: every robot in the kitchen hears the
same clock, e-stop button, person and smoke detector. The README's name table lists both.

A device file may rename the per-robot topics (a real arm's controller is rarely called
`arm_controller`); the defaults below are what the simulated kitchen serves. A node name given
relative (`executor`) is taken in the namespace of the node that names it.
"""

from __future__ import annotations

# --- kitchen-wide (absolute) -----------------------------------------------------------------
CLOCK = "/clock"
CLOCK_STEP = "/clock_step"     # lock-step participants -> sim_clock (cookwala_msgs/ClockStep)
ESTOP = "/cookwala/estop"          # the kitchen's e-stop button: halts every robot
PRESENCE = "/cookwala/presence"    # is a person in the kitchen, how soon can they reach a robot
SMOKE = "/cookwala/smoke"
DIAGNOSTICS = "/diagnostics"       # the ROS convention: one aggregator per system
# contract-net teaming (REASONING 5.4): every robot's team node and any coordinator share these
TEAM_CFP = "/cookwala/team/cfp"              # TeamCfp: coordinator -> every team node
TEAM_BID = "/cookwala/team/bid"              # TeamBid: one per task a robot can do
TEAM_DECLINE = "/cookwala/team/decline"      # TeamDecline: one per task it will not do, with the reason
TEAM_AWARD = "/cookwala/team/award"          # TeamAward: one per winning robot
TEAM_REPLAN = "/cookwala/team/replan"        # TeamReplan: a lost robot's unstarted tasks go back to the planner
TEAM_PLAN_REQUEST = "/cookwala/team/plan_request"  # std_msgs/String JSON: plan this recipe (ros/team/coordinator_node.py)
TEAM_PLAN = "/cookwala/team/plan"            # std_msgs/String JSON: the answer, by requestId

# --- per robot (relative to the robot's namespace) -------------------------------------------
ARM_TRAJECTORY = "arm_controller/joint_trajectory"                  # JointTrajectoryController topic
ARM_FOLLOW_JOINT_TRAJECTORY = "arm_controller/follow_joint_trajectory"  # its action, where used
JOINT_STATES = "joint_states"
HEATER_COMMAND = "heater/command"
HEATER_STATE = "heater/state"
HEATER_MEDIUM_TEMPERATURE = "heater/medium_temperature"  # sensor_msgs/Temperature of the sim hob
HEATER_PAN_TEMPERATURE = "heater/pan_temperature"
PRESSURE = "cookwala/pressure"     # the robot's pressure vessel, where it has one
HEARTBEAT = "cookwala/heartbeat"   # executor -> safety monitor, with a liveliness lease
EXECUTION_STATUS = "cookwala/status"
EVENTS = "cookwala/events"         # CloudEvents (JSON) of executions and incidents
SAFETY_STATUS = "cookwala/safety/status"
CAPABILITIES_SERVICE = "cookwala/get_capabilities"  # the capabilities node's GetCapabilities

# --- the safety monitor's command gate (private names of the monitor node) -----------------
# A guarded executor sends its heater and arm commands to `<monitor>/gate/...`; the monitor
# forwards them to the controllers only while it is armed, under the lock its stop path holds,
# so nothing the executor computed before it heard of a stop reaches a controller after the halt.
GATE_HEATER_COMMAND = "gate/heater_command"
GATE_ARM_TRAJECTORY = "gate/joint_trajectory"

# --- node names (a robot's namespace applies to them too) ------------------------------------
EXECUTOR_NODE = "executor"
SAFETY_MONITOR_NODE = "safety_monitor"
TEAM_NODE = "team"                  # a robot's team node (answers cfps for it)
TEAM_COORDINATOR_NODE = "team_coordinator"
MONITOR_HEAT_SOURCE = "safety_monitor"  # HeaterCommand.source of the monitor's heat cuts
# The executor's private interfaces (`~/name`): /<ns>/executor/<name>
EXECUTE_RECIPE = "execute_recipe"    # action cookwala_msgs/ExecuteRecipe
EXECUTE_NODE = "execute_node"        # action cookwala_msgs/ExecuteNode
# The safety monitor's private services: /<ns>/safety_monitor/<name>
MONITOR_STOP = "stop"
MONITOR_RESET = "reset"
MONITOR_GET_LIMITS = "get_safety_limits"
MONITOR_TIGHTEN = "tighten_safety_limits"


def namespace_of(text: str) -> str:
    """'robot_a', '/robot_a/' -> '/robot_a'; '' or '/' -> '' (the root)."""
    text = (text or "").strip("/")
    return "/" + text if text else ""


def qualify(namespace: str, name: str) -> str:
    """The absolute form of `name` for a node in `namespace` (no `~`, no remaps)."""
    if name.startswith("/"):
        return name
    return f"{namespace_of(namespace)}/{name}"


def service_of(node_fqn: str, name: str) -> str:
    """A private service or action of a node: service_of('/a/safety_monitor', 'stop')."""
    return f"{node_fqn.rstrip('/')}/{name}"
