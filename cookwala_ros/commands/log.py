"""`cookwala-ros log plot LOG.json [--output PNG]`: a temperature plot of an ExecutionLog.

Draws the medium and pan temperatures (and the heater power) from the log's compact trace
(`x-cookwala-ros-trace`, written by the execution engine), shades each heat step's envelope band
and marks where steps begin. A log without a trace (from another implementation) still gets a
plot of its per-step min/max/end summary. matplotlib (Agg backend) is imported only here.
Exit 0 written, 1 nothing to plot, 2 unreadable input or not an ExecutionLog.
"""

from __future__ import annotations

import argparse
import datetime
import pathlib
import sys
from typing import Any

from cookwala_ros.core import envelope, json_limits, vocab
from cookwala_ros.core.execution_log import TRACE_FIELD


class _BadInput(Exception):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    plot = sub.add_parser("plot", help="render a temperature plot (PNG) of an execution log")
    plot.add_argument("log", metavar="LOG", help="ExecutionLog document (JSON)")
    plot.add_argument("--output", "-o", metavar="PNG", help="where to write the plot (default: LOG with .png)")
    plot.add_argument("--title", help="plot title (default: recipe and execution id)")


def _seconds(text: Any) -> float | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def read_log(path: str) -> dict:
    try:
        raw = pathlib.Path(path).read_bytes()
    except OSError as exc:
        raise _BadInput(f"{path}: cannot read ({exc.strerror})") from None
    try:
        data = json_limits.loads(raw)  # bounded depth and numbers; UTF-8 checked
    except json_limits.JsonInputError as exc:
        accepts = "" if exc.kind == "malformed" else " this reader accepts"
        raise _BadInput(f"{path}: not JSON{accepts} ({exc.message})") from None
    if not isinstance(data, dict) or data.get("kind") != "ExecutionLog":
        raise _BadInput(f"{path}: /kind: not an ExecutionLog")
    if not isinstance(data.get("steps"), list):
        raise _BadInput(f"{path}: /steps: must be an array")
    return data


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_trace_row(row: Any) -> bool:
    """[t_s, medium_c, pan_c, power_w, ...]: a time, then numbers or null (a log from elsewhere may differ)."""
    return (isinstance(row, list) and len(row) >= 4 and _is_number(row[0])
            and all(v is None or _is_number(v) for v in row[1:4]))


def plot_data(log: dict) -> dict:
    """What the plot shows, in minutes since the start: series, step spans and envelope bands."""
    start = _seconds(log.get("startedAt")) or 0.0
    trace = log.get(TRACE_FIELD)
    rows = [r for r in trace if _is_trace_row(r)] if isinstance(trace, list) else []
    series = {
        "t_min": [r[0] / 60.0 for r in rows],
        "medium_c": [r[1] for r in rows],
        "pan_c": [r[2] for r in rows],
        "power_w": [r[3] for r in rows],
    }
    altitude = log.get("x-cookwala-ros-altitudeM", 0) or 0
    if not _is_number(altitude):
        raise _BadInput("/x-cookwala-ros-altitudeM: must be a number of metres")
    steps = []
    for i, step in enumerate(log["steps"]):
        if not isinstance(step, dict):
            raise _BadInput(f"/steps/{i}: must be an object")
        t0, t1 = _seconds(step.get("startedAt")), _seconds(step.get("endedAt"))
        op = step.get("op") if isinstance(step.get("op"), str) else ""
        band = envelope.band(op, altitude) if vocab.is_known_op(op) else None
        summary = step.get("summary") if isinstance(step.get("summary"), list) else []
        steps.append({
            "node": str(step.get("node", f"#{i}")), "op": op,
            "start_min": None if t0 is None else (t0 - start) / 60.0,
            "end_min": None if t1 is None else (t1 - start) / 60.0,
            "band": None if band is None else (float(band.lo), float(band.hi)),
            "summary": [entry for entry in summary if isinstance(entry, dict)], "verifiedBy": step.get("verifiedBy"),
            "envelopeOk": step.get("envelopeOk"),
        })
    return {"series": series, "steps": steps}


def render(log: dict, output: pathlib.Path, title: str | None = None) -> int:
    """Write the PNG; returns the number of trace rows drawn."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    data = plot_data(log)
    s = data["series"]
    fig, ax = plt.subplots(figsize=(11, 5.5), dpi=100)
    try:
        for i, step in enumerate(data["steps"]):
            if step["start_min"] is None:
                continue
            end = step["end_min"] if step["end_min"] is not None else (s["t_min"][-1] if s["t_min"] else step["start_min"])
            ax.axvline(step["start_min"], color="0.8", lw=0.8, zorder=0)
            label_y = 1.0 if i % 2 == 0 else 0.92  # stagger labels of short neighbouring steps
            ax.annotate(f"{step['node']}\n{step['op'].rsplit('.', 1)[-1]}", (step["start_min"], label_y),
                        xycoords=("data", "axes fraction"), fontsize=7, va="top", ha="left", color="0.35")
            if step["band"] is not None and step["verifiedBy"] != "human":
                colour = "tab:green" if step["envelopeOk"] is not False else "tab:red"
                ax.fill_between([step["start_min"], end], *step["band"], color=colour, alpha=0.12, lw=0)
            if not s["t_min"]:  # no trace: draw the summary
                for entry in step["summary"]:
                    for key, marker in (("min", "v"), ("max", "^"), ("end", "o")):
                        if isinstance(entry.get(key), (int, float)):
                            ax.plot([end], [entry[key]], marker, color="tab:blue", ms=4)
        if s["t_min"]:
            ax.plot(s["t_min"], [_nan(v) for v in s["medium_c"]], color="tab:blue", lw=1.4, label="medium °C")
            ax.plot(s["t_min"], [_nan(v) for v in s["pan_c"]], color="tab:orange", lw=1.0, label="pan surface °C")
            power_ax = ax.twinx()
            power_ax.plot(s["t_min"], [_nan(v) for v in s["power_w"]], color="0.5", lw=0.7, alpha=0.6, label="heater W")
            power_ax.set_ylabel("heater power [W]")
            power_ax.set_ylim(bottom=0)
        ax.set_xlabel("time since start [min]")
        ax.set_ylabel("temperature [°C]")
        ax.set_title(title or f"{log.get('recipe', '')} · {log.get('id', '')} · {log.get('outcome', '')}")
        if s["t_min"]:
            ax.legend(loc="lower right", fontsize=8)
        fig.tight_layout()
        fig.savefig(output, format="png")
    finally:
        plt.close(fig)
    return len(s["t_min"])


def _nan(value: Any) -> float:
    return float("nan") if value is None else float(value)


def run(args: argparse.Namespace) -> int:
    try:
        log = read_log(args.log)
    except _BadInput as exc:
        print(f"cookwala-ros log: {exc}", file=sys.stderr)
        return 2
    try:
        data = plot_data(log)
    except _BadInput as exc:
        print(f"cookwala-ros log: {args.log}: {exc}", file=sys.stderr)
        return 2
    has_summary = any(step["summary"] for step in data["steps"])
    if not data["series"]["t_min"] and not has_summary:
        print(f"cookwala-ros log: {args.log}: no temperature trace and no step summary to plot", file=sys.stderr)
        return 1
    output = pathlib.Path(args.output) if args.output else pathlib.Path(args.log).with_suffix(".png")
    try:
        rows = render(log, output, args.title)
    except OSError as exc:
        print(f"cookwala-ros log: cannot write {output} ({exc.strerror})", file=sys.stderr)
        return 2
    print(f"wrote {output} ({rows} trace points, {len(data['steps'])} steps)")
    return 0
