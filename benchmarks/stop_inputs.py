"""The stop inputs that need more than a message of the driver: executor heartbeat loss, the
monitor's own inputs with an executor stand-in beating, and the executor's HTTP stop.

Used by stop_latency.py (run from there); kept apart so that the benchmark reads as its
observer, its driver and its report.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from typing import TYPE_CHECKING

from stop_processes import HEARTBEAT_CODE, start, stop, wait_for

if TYPE_CHECKING:  # pragma: no cover
    from stop_latency import Driver

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEARTBEAT_LEASE_S = 0.3  # the monitor's default heartbeat_lease_s


def fire(driver: Driver, name: str) -> float:
    """Fire one trigger of a topic or service input; the trigger time on the steady clock."""
    if name == "service":
        request = driver.m["Stop"].Request(requested_by="bench", reason="stop latency benchmark")
        t0 = time.monotonic()
        driver.stop_client.call_async(request)
    elif name == "estop":
        msg = driver.m["Bool"](data=True)
        t0 = time.monotonic()
        driver.estop.publish(msg)
    else:
        msg = driver.m["FluidPressure"](fluid_pressure=150_000.0)  # 150 kPa gauge > pressure.max 110
        t0 = time.monotonic()
        driver.pressure.publish(msg)
    return t0


class HeartbeatInput:
    """Executor heartbeat loss: a fresh heartbeat sender per stop, SIGKILLed as the trigger."""

    def __init__(self, driver: Driver):
        self.driver = driver
        self.proc: subprocess.Popen | None = None

    def prepare(self) -> None:
        seen = self.driver.heartbeats
        # the executor's stand-in runs at normal priority
        self.proc = start(HEARTBEAT_CODE, module=False, normal=True, stdout=subprocess.PIPE, text=True)
        matched = threading.Event()
        threading.Thread(target=lambda out=self.proc.stdout: "matched\n" in out and matched.set(),
                         daemon=True).start()
        wait_for(matched.is_set, 20.0, "heartbeat sender matched by the monitor")
        wait_for(lambda: self.driver.heartbeats > seen + 3, 20.0, "heartbeats")

    def fire(self) -> float:
        t0 = time.monotonic()
        os.kill(self.proc.pid, signal.SIGKILL)
        # the lease runs from the last heartbeat (seen here a little after it was sent)
        self.grace_s = self.driver.last_heartbeat_at + HEARTBEAT_LEASE_S - t0
        return t0

    def finish(self) -> None:
        self.proc.wait()

    def abandon(self) -> None:
        self.close()

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class GuardedInput:
    """The monitor's own inputs (service, estop, limit) with an executor stand-in beating.

    The monitor stops heat commanded without a live executor heartbeat (`heartbeat_lost`), so the
    arm and the hob are driven with a heartbeat sender running, as a real executor would be; it
    lives for the whole input and is never the trigger."""

    def __init__(self, driver: Driver, name: str):
        self.name = name
        self.beat = HeartbeatInput(driver)

    def prepare(self) -> None:
        if self.beat.proc is None or self.beat.proc.poll() is not None:
            self.beat.prepare()

    def fire(self) -> float:
        return fire(self.beat.driver, self.name)

    def finish(self) -> None:
        pass

    def abandon(self) -> None:
        pass

    def close(self) -> None:
        self.beat.close()


class HttpInput:
    """POST /v1/executions/{id}/stop on the executor's Core HTTP API while it cooks.

    The executor node runs for this input only (its heartbeat would mask the heartbeat input).
    Each stop needs an execution that is cooking: a water simmer from the e2e test data.
    """

    RECIPE = os.path.join(REPO, "test", "e2e", "data", "recipes", "e2e-water-simmer.cookwala.json")

    def __init__(self, driver: Driver, log):
        import shutil

        from cookwala_ros.http.server import free_port

        self.driver = driver
        self.data_dir = tempfile.mkdtemp(prefix="stop-latency-executor-")
        os.makedirs(os.path.join(self.data_dir, "recipes"))
        shutil.copy(self.RECIPE, os.path.join(self.data_dir, "recipes"))
        self.port = free_port()
        self.proc = start("cookwala_ros.ros.executor_node", {"data_dir": self.data_dir, "http_port": self.port},
                          stdout=log, stderr=subprocess.STDOUT)
        self.execution = None
        self.key = 0
        with open(self.RECIPE, encoding="utf-8") as f:
            self.recipe = json.load(f)
        wait_for(self._up, 60.0, "executor HTTP API")

    def _request(self, method: str, path: str, body: dict | None = None, timeout: float = 10.0):
        import http.client

        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            payload = None if body is None else json.dumps(body)
            headers = {} if body is None else {"content-type": "application/vnd.cookwala+json"}
            if isinstance(body, dict) and "idempotencyKey" in body:
                headers["Idempotency-Key"] = body["idempotencyKey"]
            connection.request(method, path, body=payload, headers=headers)
            response = connection.getresponse()
            return response.status, json.loads(response.read() or b"null")
        finally:
            connection.close()

    def _up(self) -> bool:
        try:
            return self._request("GET", "/v1/capabilities", timeout=1.0)[0] == 200
        except OSError:
            return False

    def prepare(self) -> None:
        """Start an execution once the executor sees the monitor armed; wait until it runs."""
        from cookwala_ros.ros.recipe_demo import request_for_recipe

        def accepted():
            self.key += 1
            body = request_for_recipe(self.recipe, key=f"stop-latency-{os.getpid()}-{self.key:05d}")
            code, status = self._request("POST", "/v1/executions", body)
            if code == 202 and status["state"] != "refused":
                return status["id"]
            time.sleep(0.2)  # e.g. busy: the executor has not seen the monitor re-armed yet
            return None

        self.driver.rearm()
        self.execution = wait_for(accepted, 20.0, "an accepted execution")
        # running its simmer step (the driver then turns the heat up and moves the arm, as for
        # every input: after a few hundred stops the water may already sit at the simmer target)
        wait_for(lambda: self._request("GET", f"/v1/executions/{self.execution}")[1]["state"] == "running",
                 30.0, "the execution running")

    def fire(self) -> float:
        import http.client

        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10.0)
        connection.connect()  # the connection exists before the trigger, like a client's keep-alive
        t0 = time.monotonic()
        connection.request("POST", f"/v1/executions/{self.execution}/stop")
        connection.getresponse().read()
        connection.close()
        return t0

    def finish(self) -> None:
        wait_for(lambda: self._request("GET", f"/v1/executions/{self.execution}")[1]["state"] == "stopped",
                 30.0, "the execution stopped")

    def abandon(self) -> None:
        """The monitor stopped before the trigger: the executor stops this execution by itself."""
        self._request("POST", f"/v1/executions/{self.execution}/stop")
        self.finish()

    def close(self) -> None:
        stop(self.proc)
