"""Cook one recipe on a device through its Core HTTP API, showing a progress bar per step.

Pure HTTP (httpx): POST the ExecuteRequest, poll the status until the execution ends, then read
the log. On a terminal each step's bar is redrawn in place; otherwise (CI logs, pipes) a plain
line is printed when a step starts, at every 25 % of progress and when it ends. A step that needs
a person can be confirmed automatically (the demo plays the person: POST resume with If-Match).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

import httpx

from cookwala_ros.core import lifecycle

MEDIA = "application/vnd.cookwala+json"
FINAL = lifecycle.FINAL_STATES
BAR_WIDTH = 30


class DemoClientError(RuntimeError):
    """The device answered something the demo cannot go on from (the message says what)."""


@dataclass
class CookResult:
    status: dict
    log: dict | None
    statuses_seen: int = 0
    wall_s: float = 0.0
    steps: list[str] = field(default_factory=list)


def bar(progress: float, width: int = BAR_WIDTH) -> str:
    done = max(0, min(width, int(round(progress * width))))
    return "[" + "#" * done + "." * (width - done) + f"] {progress * 100:5.1f}%"


def _reading_text(step: dict) -> str:
    parts = []
    for reading in step.get("readings") or []:
        unit = {"degC": " °C"}.get(reading.get("unit"), " " + str(reading.get("unit", "")))
        value = reading.get("value")
        parts.append(f"{reading.get('sensor', '?').rsplit('.', 1)[-1]} {value:.1f}{unit}"
                     if isinstance(value, (int, float)) else str(reading.get("sensor")))
    return ", ".join(parts)


class ProgressView:
    """Renders status updates: one bar per step (in place on a TTY, plain lines otherwise)."""

    def __init__(self, out: TextIO, tty: bool | None = None):
        self.out = out
        self.tty = out.isatty() if tty is None else tty
        self.node: str | None = None
        self.last_quarter = -1
        self.state: str | None = None

    def _line(self, text: str, *, in_place: bool = False) -> None:
        if self.tty and in_place:
            self.out.write("\r\x1b[2K" + text)
        else:
            if self.tty and self.node is not None:
                self.out.write("\n")
            self.out.write(text + ("" if self.tty and in_place else "\n"))
        self.out.flush()

    def update(self, status: dict) -> None:
        state = status.get("state")
        step = status.get("step") or {}
        node = step.get("node")
        if node and node != self.node:
            self.finish_step()
            self.node, self.last_quarter = node, -1
            if not self.tty:
                self._line(f"step {node} {step.get('op', '')} started (verified by {step.get('verifiedBy', '?')})")
        if state != self.state:
            self.state = state
            if state not in ("running",) or not self.tty:
                self._line(f"execution {status.get('id')}: {state}"
                           + (f" ({(status.get('humanNeeded') or {}).get('why', '')})" if state == "needs_human" else ""))
        if not node:
            return
        progress = float(step.get("progress") or 0.0)
        text = f"{node:<4} {step.get('op', ''):<16} {bar(progress)} {step.get('verifiedBy', '') or ''} {_reading_text(step)}"
        if self.tty:
            self._line(text, in_place=True)
        else:
            quarter = int(progress * 4)
            if quarter != self.last_quarter:
                self.last_quarter = quarter
                self._line("  " + text)

    def finish_step(self) -> None:
        if self.tty and self.node is not None:
            self.out.write("\n")
            self.out.flush()
        self.node = None


def _check(response: httpx.Response, what: str) -> dict:
    if response.status_code >= 400:
        try:
            detail = response.json().get("detail", response.text)
        except ValueError:
            detail = response.text
        raise DemoClientError(f"{what}: HTTP {response.status_code}: {detail}")
    return response.json()


def cook(base_url: str, request: dict, *, token: str | None = None, out: TextIO | None = None,
         poll_s: float = 0.1, timeout_s: float = 600.0, confirm_human: bool = True,
         client: httpx.Client | None = None, tty: bool | None = None,
         on_status: Callable[[dict], None] | None = None) -> CookResult:
    """Start `request` on the device at `base_url` and follow it to its end (or raise on timeout)."""
    out = out or sys.stdout
    headers = {"accept": MEDIA}
    if token:
        headers["authorization"] = f"Bearer {token}"
    own = client is None
    client = client or httpx.Client(base_url=base_url, timeout=10.0)
    view = ProgressView(out, tty)
    started = time.monotonic()
    seen = 0
    steps: list[str] = []
    try:
        key = request.get("idempotencyKey") or f"demo-{time.time_ns()}"
        status = _check(client.post("/v1/executions", json=request,
                                    headers={**headers, "content-type": MEDIA, "Idempotency-Key": key}),
                        "start")
        execution = status["id"]
        while True:
            seen += 1
            view.update(status)
            if on_status:
                on_status(status)
            node = (status.get("step") or {}).get("node")
            if node and (not steps or steps[-1] != node):
                steps.append(node)
            if status.get("state") in FINAL:
                break
            if status.get("state") == "needs_human" and confirm_human:
                resumed = client.post(f"/v1/executions/{execution}/resume",
                                      headers={**headers, "If-Match": f'"{status["seq"]}"',
                                               "Idempotency-Key": f"{key}-resume-{status['seq']}"[-128:]})
                if resumed.status_code not in (202, 409, 412):  # 409/412: it moved on meanwhile
                    _check(resumed, "resume")
            if time.monotonic() - started > timeout_s:
                client.post(f"/v1/executions/{execution}/stop", headers=headers)
                raise DemoClientError(f"execution {execution} did not finish within {timeout_s:g} s "
                                      f"(last state {status.get('state')}); stopped it")
            time.sleep(poll_s)
            status = _check(client.get(f"/v1/executions/{execution}", headers=headers), "status")
        view.finish_step()
        log_response = client.get(f"/v1/executions/{execution}/log", headers=headers)
        log = log_response.json() if log_response.status_code == 200 else None
        return CookResult(status, log, seen, time.monotonic() - started, steps)
    finally:
        if own:
            client.close()


def _fmt(value: Any) -> str:
    return f"{value:.1f}" if isinstance(value, (int, float)) else "-"


def log_summary(log: dict) -> list[str]:
    """Readable lines: outcome, then per step its verification, envelope verdict and min/max/end."""
    lines = [f"outcome: {log.get('outcome', '?')}  ({log.get('startedAt', '?')} -> {log.get('endedAt', '?')})"]
    for step in log.get("steps") or []:
        envelope = {True: "held", False: "NOT held"}.get(step.get("envelopeOk"), "n/a")
        lines.append(f"  {step.get('node', '?'):<4} {step.get('op', ''):<16} verified by {step.get('verifiedBy', '?'):<7}"
                     f" envelope {envelope}")
        for item in step.get("summary") or []:
            lines.append(f"       {item.get('sensor', '?')}: min {_fmt(item.get('min'))} max {_fmt(item.get('max'))}"
                         f" end {_fmt(item.get('end'))} {item.get('unit', '')}")
        if step.get("deviation"):
            lines.append(f"       deviation: {step['deviation']}")
    for step in log.get("x-cookwala-ros-unfinishedSteps") or []:
        lines.append(f"  {step.get('node', '?'):<4} {step.get('op', ''):<16} unfinished (no envelope verdict)")
        if step.get("deviation"):
            lines.append(f"       deviation: {step['deviation']}")
    for event in log.get("safetyEvents") or []:
        lines.append(f"  safety event: {event}")
    for item in log.get("humanInterventions") or []:
        lines.append(f"  a person: {item.get('kind')} at {item.get('at')}")
    return lines
