"""The monitor's scheduling request (ros/realtime.py): it gets what it says it got.

Run in a child process, so the test runner itself is never made real-time."""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import json, os, threading
from cookwala_ros.ros import realtime
said = realtime.claim(int(os.environ["PRIORITY"]))
seen = {}
def look():
    seen["policy"] = os.sched_getscheduler(0)
after = threading.Thread(target=look); after.start(); after.join()
print(json.dumps({"said": said, "policy": os.sched_getscheduler(0), "thread_policy": seen["policy"],
                  "fifo": os.SCHED_FIFO, "nice": os.getpriority(os.PRIO_PROCESS, 0)}))
"""


def _claim(priority: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=30,
                         env={**__import__("os").environ, "PRIORITY": str(priority)})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_zero_leaves_scheduling_alone():
    got = _claim(0)
    assert got["said"].startswith("normal scheduling") and got["policy"] != got["fifo"]


def test_a_priority_is_granted_or_the_refusal_is_said():
    got = _claim(10)
    if got["said"].startswith("SCHED_FIFO priority 10"):
        assert got["policy"] == got["fifo"] and got["thread_policy"] == got["fifo"]  # later threads inherit it
    elif got["said"].startswith("nice"):
        assert got["policy"] != got["fifo"] and got["nice"] < 0
    else:
        assert "refused" in got["said"] and got["policy"] != got["fifo"]
    assert "memory" in got["said"]
