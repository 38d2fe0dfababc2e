"""The robot model: URDF, named poses, joint limits, kinematics and what the arm's controllers
accept. Pure (no ROS); the executor, the safety monitor and the sims all read the robot from here."""
