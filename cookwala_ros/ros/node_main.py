"""The one `main()` every cookwala node shares: init, build, spin, clean shutdown.

A node that cannot start (a bad parameter, a bad device file: any ValueError raised while it
is built) exits with status 2 and one line naming the problem, not a traceback. Ctrl-C and an
external shutdown end it cleanly with status 0.

`graceful_signals=True` keeps the ROS context alive through SIGINT/SIGTERM until the node's
`close()` has run: rclpy's own handler shuts the context down inside the signal, after which a
node can no longer publish its last words (the executor's halt and its goodbye heartbeat).

`kill -USR1 <pid>` prints every thread's Python stack to the node's stderr and the node goes on:
a node that does not exit, or stops answering, says where it is (the tests do this before they
kill a node that lingers).
"""

from __future__ import annotations

import faulthandler
import gc
import signal
import sys
from typing import Callable

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node

from cookwala_ros.ros.endpoints import QosDoctor
from cookwala_ros.ros.executors import MultiThreadedExecutor

EXIT_OK = 0
EXIT_CANNOT_START = 2


def freeze_startup_objects() -> None:
    """Keep the garbage collector's full passes short: they stop every thread of the process.

    A node's start-up (rclpy, numpy, message types, vocabulary, schemas) leaves tens of thousands
    of long-lived objects; a full collection over them takes 10-30 ms here, at a random moment,
    which would land in a stop's path. Frozen objects are never scanned again (gc.freeze); the
    collector then only looks at what the node allocated since.
    """
    gc.collect()
    gc.freeze()


def run_node(
    name: str,
    make_node: Callable[[], Node],
    args: list[str] | None = None,
    *,
    threads: int | None = None,
    before_spin: Callable[[Node], None] | None = None,
    graceful_signals: bool = False,
) -> int:
    """Build the node with `make_node` and spin it (`threads=1`: on a SingleThreadedExecutor).

    `before_spin` runs once the node exists (e.g. to start a console reader). A node with a
    `close()` method has it called before it is destroyed; with graceful signals, one with a
    `prepare_close()` has that called first, before its running callbacks are waited for.
    """
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    if graceful_signals:
        from rclpy.signals import SignalHandlerOptions

        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # KeyboardInterrupt in the main thread
        signal.signal(signal.SIGTERM, signal.default_int_handler)
    else:
        rclpy.init(args=args)
    node = None
    executor = None
    try:
        node = make_node()
        QosDoctor(node)  # the incompatible-QoS warnings of rclpy's default event handlers (ros/endpoints.py)
        if before_spin is not None:
            before_spin(node)
        freeze_startup_objects()
        # one thread: rclpy's executor overhead once, for nodes whose callbacks need no parallelism
        executor = SingleThreadedExecutor() if threads == 1 else MultiThreadedExecutor(num_threads=threads)
        executor.add_node(node)
        try:
            executor.spin()
        except Exception:
            # Ctrl-C shuts the context down while another thread may be inside a callback;
            # the RCLError that callback then raises is part of a clean shutdown, not a fault.
            if rclpy.ok():
                raise
    except ValueError as exc:
        print(f"{name}: cannot start: {exc}", file=sys.stderr)
        return EXIT_CANNOT_START
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if graceful_signals:  # no second signal may cut close() short
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if executor is not None and graceful_signals:
            prepare = getattr(node, "prepare_close", None)
            if callable(prepare):
                prepare()  # e.g. end callbacks that wait for something
            executor.shutdown(timeout_sec=2.0)  # spin has returned: let running callbacks finish first
        if node is not None:
            close = getattr(node, "close", None)
            if callable(close):
                close()
            node.destroy_node()
        rclpy.try_shutdown()
    return EXIT_OK
