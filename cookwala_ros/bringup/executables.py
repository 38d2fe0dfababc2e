"""The package's node executables: console-script name -> `module:function`.

setup.py installs these as console scripts (`ros2 run cookwala_ros <name>` in a workspace,
`<name>` on PATH in a venv). The scene runner falls back to this table when an editable
install predates an executable, so a checkout always starts the nodes its scenes name.
"""

NODE_EXECUTABLES = {
    "capabilities_node": "cookwala_ros.ros.capabilities_node:main",
    "arm_sim": "cookwala_ros.ros.arm_sim_node:main",
    "heater_sim": "cookwala_ros.ros.heater_sim_node:main",
    "pot_sim": "cookwala_ros.ros.pot_sim_node:main",
    "sim_clock": "cookwala_ros.ros.sim_clock_node:main",
    "safety_monitor": "cookwala_ros.ros.safety_monitor_node:main",
    "estop_button": "cookwala_ros.ros.estop_button_node:main",
    "executor": "cookwala_ros.ros.executor_node:main",
    "team_node": "cookwala_ros.ros.team.team_node:main",
    "team_coordinator": "cookwala_ros.ros.team.coordinator_node:main",
}
