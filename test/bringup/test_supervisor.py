"""The process supervisor: prefixed output, start-up failures, stop escalation, no orphans."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from cookwala_ros.supervisor import ProcessSpec, Supervisor, describe_returncode


def py(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


SLEEPER = py("""
    import time
    print('ready', flush=True)
    try:
        time.sleep(60)
    except KeyboardInterrupt:
        print('interrupted', flush=True)
""")

STUBBORN = py("""
    import signal, time
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print('ready', flush=True)
    time.sleep(60)
""")


def wait_for(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def test_output_lines_are_prefixed_with_the_name_and_colour_is_optional():
    out = io.StringIO()
    sup = Supervisor([ProcessSpec("alpha", py("print('one'); print('two')")),
                      ProcessSpec("b", py("import sys; print('err', file=sys.stderr)"))], output=out)
    sup.start()
    assert wait_for(lambda: not sup.running())
    sup.stop()
    lines = out.getvalue().splitlines()
    assert any(line.startswith("[alpha]") and line.endswith(" one") for line in lines)
    assert any(line.startswith("[alpha]") and line.endswith(" two") for line in lines)
    assert any(line.startswith("[b]") and line.endswith(" err") for line in lines)
    assert "\x1b[" not in out.getvalue()

    coloured = io.StringIO()
    sup = Supervisor([ProcessSpec("alpha", py("print('one')"))], output=coloured, colour=True)
    sup.start()
    assert wait_for(lambda: not sup.running())
    sup.stop()
    assert "\x1b[" in coloured.getvalue() and "one" in coloured.getvalue()


def test_stop_interrupts_children_and_reports_their_codes():
    out = io.StringIO()
    sup = Supervisor([ProcessSpec("a", SLEEPER), ProcessSpec("b", SLEEPER)], output=out)
    sup.start()
    assert sup.wait_started(0.3, ready=lambda: out.getvalue().count("ready") == 2, timeout_s=10) is None
    started = time.monotonic()
    codes = sup.stop()
    assert time.monotonic() - started < 5.0  # the bound `cookwala-ros up` promises
    assert codes == {"a": 0, "b": 0}  # they handled SIGINT (KeyboardInterrupt) and exited
    assert out.getvalue().count("interrupted") == 2


def test_stop_escalates_to_sigkill_within_the_grace_period():
    out = io.StringIO()
    sup = Supervisor([ProcessSpec("stubborn", STUBBORN)], output=out, grace_s=1.0)
    sup.start()
    assert sup.wait_started(0.1, ready=lambda: "ready" in out.getvalue(), timeout_s=10) is None
    pid = sup.pids["stubborn"]
    started = time.monotonic()
    codes = sup.stop()
    assert time.monotonic() - started < 2.5
    assert codes == {"stubborn": -signal.SIGKILL}
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert "'stubborn' did not stop on SIGINT/SIGTERM; killing it" in out.getvalue()


def test_a_required_child_that_exits_during_start_up_is_a_failed_start():
    out = io.StringIO()
    sup = Supervisor([ProcessSpec("ok", SLEEPER), ProcessSpec("bad", py("import sys; sys.exit(3)"))], output=out)
    sup.start()
    try:
        failed = sup.wait_started(5.0)
        assert failed is not None and failed.name == "bad" and failed.returncode == 3
        assert failed.describe() == "required node 'bad' exited during start-up (exit code 3)"
    finally:
        sup.stop()


def test_watch_returns_the_required_child_that_died_and_keeps_optional_ones_going(tmp_path):
    out = io.StringIO()
    marker = tmp_path / "optional-done"
    sup = Supervisor([
        ProcessSpec("steady", SLEEPER),
        ProcessSpec("optional", py(f"import pathlib; pathlib.Path({str(marker)!r}).touch()"), required=False),
        # exits only after the optional child is gone (plus time for the supervisor to notice)
        ProcessSpec("required", py(f"""
            import pathlib, sys, time
            while not pathlib.Path({str(marker)!r}).exists():
                time.sleep(0.01)
            time.sleep(0.5)
            sys.exit(4)
        """)),
    ], output=out)
    sup.start()
    try:
        died = sup.watch()
        assert died is not None and died.name == "required" and died.returncode == 4
        assert died.describe() == "required node 'required' exited (exit code 4)"
        assert "node 'optional' exited (exit code 0); the rest of the scene keeps running" in out.getvalue()
        assert sup.running() == ["steady"]
    finally:
        sup.stop()


def test_request_stop_ends_watch():
    sup = Supervisor([ProcessSpec("a", SLEEPER)], output=io.StringIO())
    sup.start()
    try:
        sup.request_stop()
        assert sup.watch() is None
    finally:
        sup.stop()


def test_a_command_that_cannot_run_is_reported_with_its_name():
    sup = Supervisor([ProcessSpec("ok", SLEEPER), ProcessSpec("ghost", ["/no/such/binary"])], output=io.StringIO())
    with pytest.raises(OSError, match="cannot start 'ghost'"):
        sup.start()
    assert sup.running() == []


def test_children_die_with_a_killed_supervisor():
    """PR_SET_PDEATHSIG: SIGKILL the supervising process and its children go too."""
    if not sys.platform.startswith("linux"):
        pytest.skip("parent-death signals are Linux only")
    script = textwrap.dedent(f"""
        import sys, time
        from cookwala_ros.supervisor import ProcessSpec, Supervisor
        sup = Supervisor([ProcessSpec("a", {SLEEPER!r}), ProcessSpec("b", {SLEEPER!r})])
        sup.start()
        print("pids", *sup.pids.values(), flush=True)
        time.sleep(60)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        line = ""
        while not line.startswith("pids"):
            line = parent.stdout.readline()
            assert line, "the supervising process ended early"
        children = [psutil.Process(int(pid)) for pid in line.split()[1:]]
        assert len(children) == 2 and all(c.is_running() for c in children)
        assert all(os.getpgid(c.pid) == c.pid for c in children)  # each in its own process group
        parent.kill()
        parent.wait(timeout=5)
        gone, alive = psutil.wait_procs(children, timeout=5)
        assert not alive
    finally:
        parent.kill()
        parent.stdout.close()


def test_describe_returncode():
    assert describe_returncode(2) == "exit code 2"
    assert describe_returncode(-9) == "killed by SIGKILL"


def _stops_slowly(name: str, record) -> list[str]:
    """A child that, on SIGINT, records when its stop began and ended (0.3 s apart)."""
    return py(f"""
        import time
        print('ready', flush=True)
        try:
            time.sleep(60)
        except KeyboardInterrupt:
            with open({str(record)!r}, 'a') as f:
                f.write('{name} begin %.6f\\n' % time.monotonic())
            time.sleep(0.3)
            with open({str(record)!r}, 'a') as f:
                f.write('{name} end %.6f\\n' % time.monotonic())
    """)


def test_stop_goes_group_by_group_in_stop_order(tmp_path):
    record = tmp_path / "stops.txt"
    sup = Supervisor([
        ProcessSpec("clock", _stops_slowly("clock", record), stop_order=3),
        ProcessSpec("plant", _stops_slowly("plant", record), stop_order=2),
        ProcessSpec("monitor", _stops_slowly("monitor", record), stop_order=1),
        ProcessSpec("executor", _stops_slowly("executor", record), stop_order=0),
        ProcessSpec("client", _stops_slowly("client", record), stop_order=0),
    ], output=(out := io.StringIO()))
    sup.start()
    assert wait_for(lambda: out.getvalue().count(" ready") == 5), out.getvalue()  # every child is in its sleep
    codes = sup.stop()
    assert set(codes) == {"clock", "plant", "monitor", "executor", "client"}
    events = [line.split() for line in record.read_text().splitlines()]
    when = {(name, what): float(t) for name, what, t in events}
    assert len(when) == 10, events
    # the guarded nodes have both ended before the monitor is interrupted, and so on
    assert max(when["executor", "end"], when["client", "end"]) <= when["monitor", "begin"]
    assert when["monitor", "end"] <= when["plant", "begin"]
    assert when["plant", "end"] <= when["clock", "begin"]
    # nodes of one order stop together
    assert abs(when["executor", "begin"] - when["client", "begin"]) < 0.25


def test_a_continue_node_that_dies_is_reported_with_its_restart_line_and_the_scene_goes_on():
    out = io.StringIO()
    sup = Supervisor([
        ProcessSpec("plant", SLEEPER),
        ProcessSpec("executor", py("import sys, time; time.sleep(0.3); sys.exit(3)"), required=False,
                    restart_hint="cookwala-ros up kitchen --only executor --arg http_port=1"),
    ], output=out)
    sup.start()
    try:
        assert sup.watch(until=lambda: "executor" not in sup.running() and sup.exits) is None
        time.sleep(0.3)
        assert sup.watch(until=lambda: True) is None
        assert sup.running() == ["plant"]
        assert ("node 'executor' exited (exit code 3); the rest of the scene keeps running; restart it with: "
                "cookwala-ros up kitchen --only executor --arg http_port=1") in out.getvalue()
    finally:
        sup.stop()


def test_watch_returns_once_no_child_is_left(tmp_path):
    marker = tmp_path / "a-done"
    sup = Supervisor([
        ProcessSpec("a", py(f"import pathlib, time; time.sleep(0.2); pathlib.Path({str(marker)!r}).touch()"),
                    required=False),
        ProcessSpec("b", py(f"""
            import pathlib, sys, time
            while not pathlib.Path({str(marker)!r}).exists():
                time.sleep(0.01)
            time.sleep(0.3)
            sys.exit(5)
        """), required=False),
    ], output=io.StringIO())
    sup.start()
    try:
        started = time.monotonic()
        last = sup.watch()
        assert time.monotonic() - started < 10.0
        assert last is not None and last.name == "b" and last.returncode == 5
        assert [e.name for e in sup.exits] == ["a", "b"]
    finally:
        sup.stop()
