"""Start a set of processes, prefix their output, stop them all together. Pure stdlib.

Used by `cookwala-ros up`, the demo and the tests, so the scene behaves the same everywhere.
Guarantees aimed for:
- every child runs in its own process group (a terminal's Ctrl-C reaches only us; we decide
  the order) and, on Linux, gets SIGKILL when the supervising thread dies (PR_SET_PDEATHSIG),
  so no child outlives us even if we are SIGKILLed;
- `stop()` stops the children in groups of ascending `stop_order` (guarded nodes, then the safety
  monitor, then the plant and the clock): each group gets SIGINT, then SIGTERM, then SIGKILL to
  each child's process group, within `grace_s` (default 4.0 s) per group plus a short reap, and
  the next group is only signalled once the previous one is gone;
- a required child (`on_exit: shutdown`) that exits stops the scene and is named with its exit
  code; any other child that exits is reported (with how to restart it) and the scene keeps
  running until no child is left.

Children must be started from a thread that lives as long as they should (PDEATHSIG fires when
the *thread* that forked them exits); the main thread is the normal choice.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Callable, Sequence, TextIO

_PR_SET_PDEATHSIG = 1
_COLOURS = ("36", "33", "35", "32", "34", "91", "96", "93")


@dataclasses.dataclass(frozen=True)
class ProcessSpec:
    """One child: a display name, its argv, whether the scene depends on it, when it stops."""

    name: str
    argv: Sequence[str]
    required: bool = True
    env: dict[str, str] | None = None  # extra variables on top of os.environ
    stop_order: int = 0  # lower stops first
    restart_hint: str | None = None  # a command line that restarts this child alone


@dataclasses.dataclass
class Exit:
    name: str
    returncode: int
    required: bool
    during_startup: bool
    restart_hint: str | None = None

    def describe(self) -> str:
        how = describe_returncode(self.returncode)
        when = "during start-up" if self.during_startup else ""
        kind = "required node" if self.required else "node"
        return " ".join(filter(None, [kind, repr(self.name), "exited", when, f"({how})"]))

    def report(self) -> str:
        """The line for a non-required child that exited: the scene goes on; how to restart it."""
        line = self.describe() + "; the rest of the scene keeps running"
        if self.restart_hint:
            line += f"; restart it with: {self.restart_hint}"
        return line


def describe_returncode(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _child_setup(parent_pid: int) -> Callable[[], None]:
    """Runs in the child between fork and exec: own process group, die with the parent."""

    libc = None
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            libc = None

    def setup() -> None:
        os.setpgid(0, 0)
        if libc is not None:
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent_pid:  # the parent died before prctl took effect
                os._exit(1)

    return setup


class Supervisor:
    """A group of child processes with prefixed output and an all-or-nothing lifetime."""

    def __init__(
        self,
        specs: Sequence[ProcessSpec],
        output: TextIO | None = None,
        colour: bool | None = None,
        grace_s: float = 4.0,
        log: Callable[[str], None] | None = None,
    ) -> None:
        names = [s.name for s in specs]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate process names: {names}")
        self.specs = list(specs)
        self.output = output if output is not None else sys.stdout
        self.colour = self.output.isatty() if colour is None else colour
        self.grace_s = grace_s
        self._log = log or (lambda msg: self._write("supervisor", msg, "1"))
        self._write_lock = threading.Lock()
        self._procs: dict[str, subprocess.Popen] = {}
        self._readers: list[threading.Thread] = []
        self._exits: dict[str, Exit] = {}
        self._started = False
        self._stop_requested = threading.Event()
        self._width = max([len(n) for n in names] + [10])

    # -- output ---------------------------------------------------------------------------------

    def _write(self, name: str, line: str, colour: str | None = None) -> None:
        prefix = f"[{name}]".ljust(self._width + 2)
        if self.colour and colour:
            prefix = f"\x1b[{colour}m{prefix}\x1b[0m"
        with self._write_lock:
            try:
                self.output.write(f"{prefix} {line}\n")
                self.output.flush()
            except (ValueError, OSError):
                pass  # output closed while a child was still talking

    def log(self, message: str) -> None:
        self._log(message)

    def _pump(self, name: str, stream, colour: str) -> None:
        for raw in iter(stream.readline, b""):
            self._write(name, raw.decode("utf-8", "replace").rstrip("\r\n"), colour)
        stream.close()

    # -- life cycle -----------------------------------------------------------------------------

    @property
    def pids(self) -> dict[str, int]:
        return {name: proc.pid for name, proc in self._procs.items()}

    def running(self) -> list[str]:
        """Names of the children still running."""
        return [name for name, proc in self._procs.items() if proc.poll() is None]

    def start(self) -> None:
        """Start every child. Raises OSError (after stopping the others) if one cannot start."""
        from cookwala_ros.bringup.dds_profile import use_default_profile

        base_env = use_default_profile(dict(os.environ, PYTHONUNBUFFERED="1"))
        for index, spec in enumerate(self.specs):
            env = dict(base_env, **(spec.env or {}))
            try:
                proc = subprocess.Popen(
                    list(spec.argv),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    env=env,
                    preexec_fn=_child_setup(os.getpid()),
                )
            except OSError as exc:
                self.stop()
                raise OSError(f"cannot start {spec.name!r}: {exc}") from exc
            self._procs[spec.name] = proc
            colour = _COLOURS[index % len(_COLOURS)]
            reader = threading.Thread(target=self._pump, args=(spec.name, proc.stdout, colour), daemon=True)
            reader.start()
            self._readers.append(reader)
        self._started = True

    def poll(self, during_startup: bool = False) -> list[Exit]:
        """Record and return children that exited since the last poll."""
        new = []
        for spec in self.specs:
            proc = self._procs.get(spec.name)
            if proc is None or spec.name in self._exits:
                continue
            code = proc.poll()
            if code is not None:
                exit_ = Exit(spec.name, code, spec.required, during_startup, spec.restart_hint)
                self._exits[spec.name] = exit_
                new.append(exit_)
        return new

    def wait_started(self, settle_s: float, ready: Callable[[], bool] | None = None,
                     timeout_s: float | None = None) -> Exit | None:
        """Wait `settle_s` (and, if given, until `ready()` is true, at most `timeout_s`).

        Returns the first required child that exited meanwhile (a failed start), or None when
        all are up. Optional children that exit are reported and left out.
        """
        start = time.monotonic()
        deadline = start + max(settle_s, timeout_s or 0.0)
        while True:
            for exit_ in self.poll(during_startup=True):
                if exit_.required:
                    return exit_
                self.log(exit_.report())
            if self._stop_requested.is_set():
                return None
            elapsed = time.monotonic() - start
            if elapsed >= settle_s and (ready is None or ready()):
                return None
            if time.monotonic() >= deadline:
                raise TimeoutError(f"the scene did not become ready within {deadline - start:.1f} s")
            time.sleep(0.05)

    def request_stop(self, *_args) -> None:
        """Safe to call from a signal handler."""
        self._stop_requested.set()

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested.is_set()

    def watch(self, until: Callable[[], bool] | None = None, period_s: float = 0.05) -> Exit | None:
        """Block until a stop is requested, `until()` is true, a required child exits or no
        child is left running.

        Non-required children that exit are reported and the scene keeps running.
        Returns the required child's exit (or the last exit when none is left), or None.
        """
        while not self._stop_requested.is_set():
            for exit_ in self.poll():
                if exit_.required:
                    return exit_
                self.log(exit_.report())
            if self._procs and not self.running():
                for exit_ in self.poll():
                    if exit_.required:
                        return exit_
                    self.log(exit_.report())
                return self.exits[-1] if self._exits else None
            if until is not None and until():
                return None
            self._stop_requested.wait(period_s)
        return None

    @property
    def exits(self) -> list[Exit]:
        """Children that exited (as seen by `poll`), in the order they were noticed."""
        return list(self._exits.values())

    def stop(self) -> dict[str, int]:
        """Stop every child, group by group in ascending `stop_order`: SIGINT, SIGTERM after 60 %
        of the grace period, SIGKILL at its end; a group is signalled once the one before is gone.

        Returns name -> return code. Idempotent.
        """
        orders = sorted({spec.stop_order for spec in self.specs})
        for order in orders:
            group = {s.name: self._procs[s.name] for s in self.specs
                     if s.stop_order == order and s.name in self._procs}
            self._stop_group(group)
        for proc in self._procs.values():
            try:
                proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
        for proc in self._procs.values():  # leftovers of a child's own children
            self._signal_group(proc, signal.SIGKILL)
        for reader in self._readers:
            reader.join(timeout=0.5)
        self.poll()
        return {n: p.returncode for n, p in self._procs.items()}

    def _stop_group(self, procs: dict[str, subprocess.Popen]) -> None:
        alive = {n: p for n, p in procs.items() if p.poll() is None}
        deadline_term = time.monotonic() + self.grace_s * 0.6
        deadline_kill = time.monotonic() + self.grace_s
        for sig, deadline in ((signal.SIGINT, deadline_term), (signal.SIGTERM, deadline_kill)):
            for proc in alive.values():
                self._signal_group(proc, sig)
            while alive and time.monotonic() < deadline:
                alive = {n: p for n, p in alive.items() if p.poll() is None}
                time.sleep(0.02)
            if not alive:
                break
        for name, proc in alive.items():
            self.log(f"{name!r} did not stop on SIGINT/SIGTERM; killing it")
            self._signal_group(proc, signal.SIGKILL)
        for proc in alive.values():
            try:
                proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass

    @staticmethod
    def _signal_group(proc: subprocess.Popen, sig: int) -> None:
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def __enter__(self) -> "Supervisor":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


class StopOnSignals:
    """Within the block, SIGINT/SIGTERM/SIGHUP ask the supervisor to stop (main thread only)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self, supervisor: Supervisor) -> None:
        self.supervisor = supervisor
        self.received: int | None = None
        self._previous: dict[int, object] = {}

    def _handle(self, signum, _frame) -> None:
        self.received = signum
        self.supervisor.request_stop()

    def __enter__(self) -> "StopOnSignals":
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
