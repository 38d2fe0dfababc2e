"""Lock-step gives the same cook at any load (issue 22).

The water simmer cooked in a fresh lock-step kitchen on an idle host, and again in another fresh
kitchen with 2 busy processes per core beside it, gives the same ExecutionLog: the same steps,
rungs and verdicts, and each sensor's min, max and end within 0.1 degC. Each cook gets its own
kitchen so both start from the same cold pot. (The soup and the lentil soup take minutes each:
`benchmarks/executor_bench.py --only lockstep` cooks those.)
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from cookwala_ros.http.demo_client import cook

from e2e_http import E2E_RTF, WATER, request as _request

TOLERANCE_C = 0.1
BUSY_PER_CORE = 2


def fingerprint(log: dict) -> list[tuple]:
    """What must not depend on the host's load: per step its node, op, rung, verdict, deviation
    kind, and per sensor (min, max, end)."""
    rows = []
    for step in log.get("steps") or []:
        sensors = {item["sensor"]: tuple(item.get(k) for k in ("min", "max", "end")) for item in step.get("summary") or []}
        rows.append((step.get("node"), step.get("op"), step.get("verifiedBy"), step.get("envelopeOk"),
                     (step.get("deviation") or {}).get("kind"), sensors))
    return rows


def cook_in_a_fresh_kitchen(tag: str) -> dict:
    from cookwala_ros.ros.recipe_demo import LiveKitchen

    with LiveKitchen(rtf=E2E_RTF, recipes=[WATER], startup_timeout_s=90.0) as kitchen:
        kitchen.set_presence(True)
        result = cook(kitchen.base_url, _request(WATER, f"e2e-same-cook-{tag}-{time.time_ns()}"),
                      out=open(os.devnull, "w"), poll_s=0.1, timeout_s=240.0)
    assert result.status["state"] == "completed", result.status
    return result.log


@pytest.mark.timeout(600)
def test_the_water_simmer_gives_the_same_log_idle_and_with_two_busy_processes_per_core():
    idle = fingerprint(cook_in_a_fresh_kitchen("idle"))
    spin = [sys.executable, "-c", "while True: pass"]
    busy = [subprocess.Popen(spin) for _ in range(BUSY_PER_CORE * (os.cpu_count() or 1))]
    try:
        loaded = fingerprint(cook_in_a_fresh_kitchen("loaded"))
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
    assert [row[:5] for row in loaded] == [row[:5] for row in idle], (idle, loaded)
    for (node, *_rest, sensors_idle), (_, *_r, sensors_loaded) in zip(idle, loaded):
        assert sensors_loaded.keys() == sensors_idle.keys(), node
        for sensor, values in sensors_idle.items():
            for what, a, b in zip(("min", "max", "end"), values, sensors_loaded[sensor]):
                assert (a is None) == (b is None) and (a is None or abs(a - b) <= TOLERANCE_C), \
                    f"{node} {sensor} {what}: {a} idle, {b} loaded"
    assert any(sensors for *_rest, sensors in idle)  # the comparison covers readings
