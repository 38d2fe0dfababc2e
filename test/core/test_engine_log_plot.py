"""`cookwala-ros log plot`: a PNG temperature plot from an ExecutionLog the engine wrote."""

from __future__ import annotations

import argparse
import json

import pytest
from test_engine_kitchen import DATA, SimKitchen, load_json, make_run

from cookwala_ros.commands import log as log_command

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="cookwala-ros log")
    log_command.add_arguments(parser)
    return parser.parse_args(list(argv))


@pytest.fixture(scope="module")
def simmer_log(tmp_path_factory):
    kitchen = SimKitchen()
    run = make_run(load_json(DATA / "simmer.cookwala.json"), kitchen, wall_clock_origin_s=1_796_000_000.0)
    kitchen.run(run)
    path = tmp_path_factory.mktemp("logs") / "simmer.log.json"
    path.write_text(json.dumps(run.log()), encoding="utf-8")
    return path


def test_plot_writes_a_png_next_to_the_log(simmer_log, capsys):
    assert log_command.run(_args("plot", str(simmer_log))) == 0
    png = simmer_log.with_suffix(".png")
    assert png.read_bytes()[:8] == PNG_MAGIC and png.stat().st_size > 10_000
    assert f"wrote {png}" in capsys.readouterr().out


def test_plot_data_has_the_trace_and_the_step_band(simmer_log):
    data = log_command.plot_data(json.loads(simmer_log.read_text()))
    series = data["series"]
    assert len(series["t_min"]) > 100 and series["t_min"] == sorted(series["t_min"])
    assert max(v for v in series["medium_c"] if v is not None) <= 96
    (step,) = data["steps"]
    assert step["node"] == "s1" and step["band"] == (85.0, 96.0)
    assert 0 <= step["start_min"] < 0.1 and step["end_min"] > 6


def test_plot_of_a_log_without_trace_uses_the_summary(tmp_path):
    doc = load_json(pathlib_example())
    out = tmp_path / "plot.png"
    path = tmp_path / "log.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert log_command.run(_args("plot", str(path), "--output", str(out))) == 0
    assert out.read_bytes()[:8] == PNG_MAGIC


def test_nothing_to_plot_and_bad_input(tmp_path, capsys):
    empty = {"kind": "ExecutionLog", "steps": [{"node": "n1", "op": "cw.op.mix", "verifiedBy": "time",
                                                "envelopeOk": True}]}
    path = tmp_path / "empty.json"
    path.write_text(json.dumps(empty), encoding="utf-8")
    assert log_command.run(_args("plot", str(path))) == 1
    path.write_text(json.dumps({"kind": "ExecutionStatus"}), encoding="utf-8")
    assert log_command.run(_args("plot", str(path))) == 2
    assert "/kind" in capsys.readouterr().err
    assert log_command.run(_args("plot", str(tmp_path / "missing.json"))) == 2
    path.write_text("{not json", encoding="utf-8")
    assert log_command.run(_args("plot", str(path))) == 2


@pytest.mark.parametrize("content, message", [
    (b"[" * 2000 + b"]" * 2000, "nested 2000 levels deep"),  # once a RecursionError traceback
    (b'{"kind": "ExecutionLog\xff", "steps": []}', "not UTF-8"),  # once a UnicodeDecodeError traceback
    (b'{"kind": "ExecutionLog", "steps": [], "n": ' + b"9" * 100_000 + b"}", "100000 digits"),
    (b'{"kind": "ExecutionLog", "steps": [{"op": 5, "startedAt": "2030-01-01T00:00:00Z", "summary": [{"min": 1}]}]}', None),
    (b'{"kind": "ExecutionLog", "steps": [], "x-cookwala-ros-trace": [["a", 1, 2, 3]]}', "no temperature trace"),
    (b'{"kind": "ExecutionLog", "steps": [{"summary": 5}], "x-cookwala-ros-trace": 5}', "no temperature trace"),
    (b'{"kind": "ExecutionLog", "steps": [{"op": "cw.op.simmer"}], "x-cookwala-ros-altitudeM": "x"}',
     "/x-cookwala-ros-altitudeM"),
])
def test_hostile_logs_get_one_message_naming_the_file(tmp_path, capsys, content, message):
    """Issue 15: deep nesting, bad UTF-8, huge numbers and wrong shapes are an exit code, never a traceback."""
    path = tmp_path / "hostile.json"
    path.write_bytes(content)
    code = log_command.run(_args("plot", str(path), "--output", str(tmp_path / "out.png")))
    err = capsys.readouterr().err
    if message is None:
        assert code == 0 and not err
    else:
        assert code in (1, 2) and message in err and str(path) in err and len(err.splitlines()) == 1, err


def pathlib_example():
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "documents" / "tomato-soup.log.json"
    if not path.is_file():
        pytest.skip("examples/documents/tomato-soup.log.json is not there")
    return path
