"""Scheduling for the stop chain: on a busy computer the safety monitor runs first.

A kitchen computer is rarely idle (vision, planning, logging), and a monitor that waits for a
core misses the standard's 0.5 s / 1 s however fast its own code is. So, as ros2_control does for
its controller manager, the monitor asks for real-time scheduling: `SCHED_FIFO` at the priority
given, for every thread of the process (the DDS threads that receive a stop included) and every
thread started later; where that is refused, the lowest nice it may take; and its memory is
locked so a page fault never delays a halt. It says in one line what it got.

On a robot, grant it like this (as ros2_control's real-time docs do): a group with
`@realtime - rtprio 98` and `@realtime - memlock unlimited` in /etc/security/limits.conf, or
`setcap cap_sys_nice,cap_ipc_lock+ep` on the interpreter that runs the monitor.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

MCL_CURRENT, MCL_FUTURE = 1, 2


def _threads() -> list[int]:
    try:
        return [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:
        return [0]


def _fifo(priority: int) -> str | None:
    """SCHED_FIFO for every thread; None on success, else why not."""
    try:
        for tid in _threads():
            os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(priority))
    except (OSError, AttributeError) as exc:
        return getattr(exc, "strerror", None) or str(exc)
    return None


def _lowest_nice() -> int:
    """The lowest nice value every thread could take (0 = none below the default)."""
    for nice in range(-20, 0):
        try:
            for tid in _threads():
                os.setpriority(os.PRIO_PROCESS, tid, nice)
            return nice
        except (OSError, AttributeError):
            continue
    return 0


def _lock_memory() -> str | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        if libc.mlockall(MCL_CURRENT | MCL_FUTURE) != 0:
            return os.strerror(ctypes.get_errno())
    except (OSError, AttributeError) as exc:
        return str(exc)
    return None


def claim(priority: int) -> str:
    """Ask for SCHED_FIFO at `priority` (1–99; 0 = leave scheduling alone) and lock memory.

    Call it once the process has started its middleware threads; threads started afterwards
    inherit the policy. Returns what it got, for the node's start-up log line.
    """
    if priority <= 0:
        return "normal scheduling (realtime_priority 0)"
    refused = _fifo(priority)
    if refused is None:
        got = f"SCHED_FIFO priority {priority}"
    else:
        nice = _lowest_nice()
        got = (f"nice {nice} (SCHED_FIFO refused: {refused})" if nice < 0
               else f"normal scheduling (SCHED_FIFO and a lower nice refused: {refused}; see README 'Real-time')")
    unlocked = _lock_memory()
    return got + (", memory locked" if unlocked is None else f", memory not locked ({unlocked})")
