"""Simulated kitchen hardware: arm (JointTrajectoryController semantics) and thermal models. Pure numpy."""
