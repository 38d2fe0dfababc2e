"""What `make test` hands one xdist worker as one unit of work (test/conftest.py's scheduler)."""

from __future__ import annotations

# The heavy tests: whole kitchen scenes (a /clock, sims, executor, monitor), two robots at once,
# lock-step cooks (they run as fast as the CPU lets them) and the colcon build. One worker runs
# these one after the other, so two of them never share the 2 cores and the real-time stop bounds
# they assert are measured on a busy host, not a starved one.
HEAVY = ("faults/", "foundation/test_colcon_workspace.py", "bringup/test_two_robots.py",
         "bringup/test_robot_device_file.py", "executor/test_executor_node.py", "sim/test_simmer_at_speed.py")


def work_unit(nodeid: str) -> str:
    """What xdist hands a worker as one unit: every heavy test together, else a whole module (so
    a module's scene fixture starts once, on one worker, never twice at the same time)."""
    path = nodeid.split("::", 1)[0]
    where = path[len("test/"):] if path.startswith("test/") else path
    return "heavy" if where.startswith(HEAVY) else path
