"""The one `main()` every cookwala node shares: init, build, spin, clean shutdown.

A node that cannot start (a bad parameter, a bad device file: any ValueError raised while it
is built) exits with status 2 and one line naming the problem, not a traceback. Ctrl-C and an
external shutdown end it cleanly with status 0.
"""

from __future__ import annotations

import gc
import sys
from typing import Callable

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node

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
) -> int:
    """Build the node with `make_node` and spin it (`threads=1`: on a SingleThreadedExecutor).

    `before_spin` runs once the node exists (e.g. to start a console reader). A node with a
    `close()` method has it called before it is destroyed.
    """
    rclpy.init(args=args)
    node = None
    try:
        node = make_node()
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
        if node is not None:
            close = getattr(node, "close", None)
            if callable(close):
                close()
            node.destroy_node()
        rclpy.try_shutdown()
    return EXIT_OK
