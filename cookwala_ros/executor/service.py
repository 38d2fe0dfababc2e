"""ExecutorService: owns executions, their persistence and their events (issue 5, Part B).

The HTTP app and the ROS node are thin adapters over this class. One lock serialises every
change, and each change is committed to the database (status + event + idempotency key in one
transaction) *before* it is acknowledged or published: a crash loses nothing a client was told.
The engine (`core.engine.RecipeRun`, one per execution) is driven by `tick()`; every externally
visible change of its status increments the execution's seq and becomes one CloudEvent with
`cookwalaseq` = seq. A restart never resumes cooking: executions that were running become
`failed` (or `stopped` where the lifecycle table allows no `failed`) with a reason, stamped with
the wall clock (the ROS clock may read 0 before /clock arrives), and their log keeps the trace up
to the crash (rows are appended to the store as the engine samples them).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cookwala_ros.core import lifecycle, versions
from cookwala_ros.core.canonical import CanonicalError
from cookwala_ros.core.execution_log import TRACE_FIELD
from cookwala_ros.core.limits import default_pack, merge_packs
from cookwala_ros.core.request_checks import RequestContext, check_recalls
from cookwala_ros.core.run_types import RunConfig
from cookwala_ros.core.trust import document_hash
from cookwala_ros.executor import events as ev
from cookwala_ros.executor import single_node, untrusted
from cookwala_ros.executor.config import DevicePorts, ExecutorConfig, LimitsUnknown, StaticPorts
from cookwala_ros.executor.library import RecipeLibrary
from cookwala_ros.executor.prestart import check_request
from cookwala_ros.executor.status import REASON_KEY, minimal_log, new_status, running_status, stop_request
from cookwala_ros.executor.store import Store

TRACE_MAX_ROWS = 3600  # a recovered trace is thinned to this, as the engine thins its own

LOG = logging.getLogger("cookwala_ros.executor")
_SIGNIFICANT = {"state", "step_started", "step_ended", "needs_human", "deviation"}
STATUS_POLL_S = 1.0  # without engine changes, progress/readings are checked this often [s of ROS time]
LOG_SNAPSHOT_S = 30.0  # the stored log JSON of a running execution is refreshed at least this often
# (its trace rows are appended as they are sampled, so a crash loses at most the newest row)


class ServiceError(Exception):
    """A request the service cannot take; `status` is the HTTP status an adapter should answer."""

    STATUS = {"invalid_request": 400, "unauthorized": 401, "not_found": 404, "idempotency_conflict": 409,
              "invalid_state": 409, "precondition_failed": 412}

    def __init__(self, code: str, detail: str, pointer: str | None = None, status: int | None = None):
        super().__init__(f"{code}: {detail}" + (f" (at {pointer})" if pointer is not None else ""))
        self.code = code
        self.detail = detail
        self.pointer = pointer
        self.status = status or self.STATUS.get(code, 400)


@dataclass
class _Active:
    """An execution this process is cooking."""

    run: Any
    status: dict
    request: dict
    recipe_ref: str
    recipe_hash: str
    step_node: str | None = None
    step_started_s: float | None = None
    bucket: int = -1
    last_status_s: float = 0.0
    last_poll_s: float = -1e18
    last_log_s: float = -1e18
    trace_t_s: float = -1e18  # run time of the newest trace row appended to the store
    extra: dict = field(default_factory=dict)


def run_config(config: ExecutorConfig, execution_id: str, request: dict) -> RunConfig:
    """The engine's RunConfig for one execution: the device's figures, the request's recipe and
    servings, then `config.run_options` (names checked when the ExecutorConfig was made)."""
    return RunConfig(execution_id=execution_id, recipe_ref=request["recipe"], recipe_hash=request["recipeHash"],
                     servings=request.get("servings"), altitude_m=config.altitude_m, poses=tuple(config.poses),
                     max_heater_power_w=config.max_heater_power_w, device=config.device_info, limits=config.limits,
                     **config.run_options)


def _default_run_factory(recipe: dict, plan: list, config: ExecutorConfig, start_s: float,
                         execution_id: str, request: dict) -> Any:
    from cookwala_ros.core.engine import RecipeRun

    return RecipeRun(recipe, plan, run_config(config, execution_id, request), start_s)


class ExecutorService:
    def __init__(self, config: ExecutorConfig, ports: DevicePorts | None = None,
                 clock: Callable[[], float] = time.time, *, run_factory: Callable[..., Any] | None = None,
                 poll_recalls: bool = True, wall_clock: Callable[[], float] = time.time):
        self.config = config
        self.ports = ports or StaticPorts()
        self.clock = clock  # control time (the ROS clock: sim time in a simulated kitchen)
        self.wall_clock = wall_clock  # record times that must be real whatever the ROS clock reads
        self.run_factory = run_factory or _default_run_factory
        self.store = Store(config.data_dir, exclusive=True)  # one executor per data dir
        self.library = RecipeLibrary(config.library_dir)
        for problem in self.library.problems:
            LOG.warning("recipe library: %s", problem)
        self.source = ev.source_uri(config.device_id)
        self._lock = threading.RLock()
        self._listeners: list[Callable[[dict], None]] = []
        self._active: dict[str, _Active] = {}
        self._cooking: tuple[str, str] | None = None  # (execution, state) of the active one: see cooking_now
        self._boot = uuid.uuid4().hex[:8]
        self._heartbeats = 0
        self._last_heartbeat_s: float | None = None
        self._boot_events: list[dict] = []
        self._closed = False
        self._recover()
        self._poller = None
        if config.catalog_url and poll_recalls:
            from cookwala_ros.executor.recalls import RecallPoller

            self._poller = RecallPoller(config.catalog_url, config.recall_poll_s, config.trusted_keys,
                                        self.apply_recalls)
            self._poller.start()

    # ------------------------------------------------------------------ events

    def add_event_listener(self, callback: Callable[[dict], None]) -> None:
        """Receive every CloudEvent from now on (plus the ones written while starting up)."""
        with self._lock:
            self._listeners.append(callback)
            for event in self._boot_events:
                self._deliver_to(callback, event)

    def stored_events(self, execution_id: str | None = None, after: int = 0) -> list[tuple[int, dict]]:
        """(ordinal, event) as stored; redelivering them is safe (ids are stable)."""
        return self.store.events(execution_id, after)

    def _deliver_to(self, callback: Callable[[dict], None], event: dict) -> None:
        try:
            callback(event)
        except Exception:  # a broken subscriber must not break cooking
            LOG.exception("event listener failed")

    def _emit(self, events: list[dict]) -> None:
        for event in events:
            for callback in list(self._listeners):
                self._deliver_to(callback, event)

    # ------------------------------------------------------------------ start-up recovery

    def _recover(self) -> None:
        """Mark what was running when the last executor died as failed, at the wall-clock time
        (the ROS clock may not have a /clock yet), with the trace rows appended up to the crash."""
        now = self.wall_clock()
        for row in self.store.active_executions():
            state = "failed" if lifecycle.can_transition(row.state, "failed") else "stopped"
            reason = (f"the executor restarted while the execution was {row.state}; "
                      "cooking is never resumed automatically")
            status = new_status(row.id, row.request_id, state, row.seq + 1, now)
            status[REASON_KEY] = {"code": "executor_restarted", "detail": reason}
            log = row.log or minimal_log(row.id, row.request, self.config.device_info, now, "failed")
            log["outcome"] = "failed" if state == "failed" else "aborted_safe"
            log["endedAt"] = ev.rfc3339(now)
            log[REASON_KEY] = reason
            trace = _recovered_trace(log.get(TRACE_FIELD), self.store.trace_rows(row.id))
            if trace:
                log[TRACE_FIELD] = trace
            event = ev.execution_event(status, source=self.source, time_s=now, previous_state=row.state,
                                       recipe=row.recipe_ref, recipe_hash=row.recipe_hash, detail=reason)
            with self.store.transaction():
                self.store.update_status(status, True, log)
                self.store.add_event(event, row.id, status["seq"])
                self.store.drop_trace(row.id)
            self._boot_events.append(event)
            LOG.warning("execution %s: %s -> %s (%s)", row.id, row.state, state, reason)

    # ------------------------------------------------------------------ start

    def start_execution(self, request: Any, idempotency_key: str | None = None, *,
                        authorized: bool = True) -> tuple[dict, bool]:
        """(ExecutionStatus, created). Refusals are a status (state `refused`), not an error."""
        if not isinstance(request, dict):
            raise ServiceError("invalid_request", "the ExecuteRequest must be a JSON object", "")
        body_key = request.get("idempotencyKey")
        if idempotency_key is not None and isinstance(body_key, str) and body_key != idempotency_key:
            raise ServiceError("invalid_request", "idempotencyKey differs from the Idempotency-Key header",
                               "/idempotencyKey")
        version_refusal = versions.refusal(request["core"]) if isinstance(request.get("core"), str) else None
        if version_refusal is None:
            from cookwala_ros.core import schemas

            issues = schemas.validate(request, "ExecuteRequest")
            if issues:
                raise ServiceError("invalid_request", issues[0].message, issues[0].pointer)
        key = idempotency_key if idempotency_key is not None else (body_key if isinstance(body_key, str) else None)
        try:
            body_hash = document_hash(request, exclude=())
        except CanonicalError as exc:
            raise ServiceError("invalid_request", f"the request cannot be canonicalised: {exc}", "") from None
        limits, limits_hold = self._limits_for_start()  # may ask the safety monitor: before taking the lock
        with self._lock:
            self._check_open()
            if key is not None:
                known = self.store.idempotency("start", key)
                if known is not None:
                    if known[0] != body_hash:
                        raise ServiceError("idempotency_conflict",
                                           f"Idempotency-Key {key!r} was used with a different request body")
                    return self.get_status(known[1]), False
            now = self.clock()
            execution_id = f"exec-{uuid.uuid4().hex[:20]}"
            request_id = request["id"] if isinstance(request.get("id"), str) else execution_id
            if version_refusal:
                refusal, plan, recipe = {"reason": version_refusal[0], "detail": version_refusal[1]}, [], None
            else:
                if self.library.refresh():
                    for problem in self.library.problems:
                        LOG.warning("recipe library: %s", problem)
                result = check_request(
                    request, config=self.config, limits=limits, library=self.library, recalls=self.store.recalls(),
                    busy=bool(self._active), human_present=bool(self.ports.human_present()),
                    demoted_sensors=set(self.ports.demoted_sensors()), now_s=now, authorized=authorized,
                    safety_hold=self.ports.safety_hold() or limits_hold)
                refusal, plan, recipe = result.refusal(), result.plan, result.recipe
            return self._create(execution_id, request_id, request, refusal, plan,
                                recipe.document if recipe else None, key, body_hash, now, limits=limits)

    def _create(self, execution_id: str, request_id: str, request: dict, refusal: dict | None, plan: list,
                recipe: dict | None, key: str | None, body_hash: str, now: float,
                scope: str = "start", limits: dict | None = None) -> tuple[dict, bool]:
        """Store a new execution (accepted or refused) with its event and key, then start cooking.

        `limits` is the effective SafetyLimits pack the run enforces (default: the configured one).
        """
        state = "refused" if refusal else "accepted"
        status = new_status(execution_id, request_id, state, 1, now, refusal)
        ref, rhash = str(request.get("recipe", "")), str(request.get("recipeHash", ""))
        event = ev.execution_event(status, source=self.source, time_s=now, previous_state=None,
                                   recipe=ref or None, recipe_hash=rhash or None)
        incidents = self._untrusted_incidents(request, recipe, execution_id, now)
        log = minimal_log(execution_id, request, self.config.device_info, now, "refused", now) if refusal else None
        config = dataclasses.replace(self.config, limits=limits) if limits is not None else self.config
        try:
            run = None if refusal else self.run_factory(recipe, plan, config, now, execution_id, request)
        except ValueError as exc:  # a node the checks let through but the engine cannot read: nothing stored yet
            raise ServiceError("invalid_request", str(exc)) from None
        with self.store.transaction():
            self.store.insert_execution(status, request, ref, rhash, bool(refusal), now)
            if log:
                self.store.save_log(execution_id, log)
            if key is not None:
                self.store.remember_key(scope, key, body_hash, execution_id, now)
            self.store.add_event(event, execution_id, 1)
            for incident in incidents:
                self.store.add_event(incident, execution_id, None)
        if run is not None:
            self._active[execution_id] = _Active(run, status, request, ref, rhash, last_status_s=now)
            self._cooking = (execution_id, status["state"])
        self._emit([event, *incidents])
        return dict(status), True

    def start_node(self, node: Any, target: Any = None, idempotency_key: str | None = None) -> tuple[dict, bool]:
        """Run one recipe node (ROS ExecuteNode: a hub splitting a recipe across robots).

        The node is wrapped in a one-node recipe and goes through the same per-node checks
        (capability, equipment, envelope, limits, presence, sensor ladder) and busy check; the
        device's own envelope is used, whatever the sender resolved. `target` (a Target) narrows it."""
        problem = single_node.node_problem(node, target)
        if problem:
            raise ServiceError("invalid_request", problem[1], problem[0])
        node = single_node.with_target(node, target)
        recipe = single_node.recipe_for(node)
        request = single_node.request_for(recipe, idempotency_key)
        body_hash = document_hash(request, exclude=("id",))
        limits, limits_hold = self._limits_for_start()  # may ask the safety monitor: before taking the lock
        with self._lock:
            self._check_open()
            scope = "node"
            if idempotency_key is not None:
                known = self.store.idempotency(scope, idempotency_key)
                if known is not None:
                    if known[0] != body_hash:
                        raise ServiceError("idempotency_conflict", f"key {idempotency_key!r} was used for another node")
                    return self.get_status(known[1]), False
            now = self.clock()
            try:
                result = single_node.precheck_node(recipe, self.config, busy=bool(self._active),
                                                   human_present=bool(self.ports.human_present()),
                                                   demoted=set(self.ports.demoted_sensors()), now_s=now,
                                                   limits=limits, safety_hold=self.ports.safety_hold() or limits_hold)
            except ValueError as exc:
                raise ServiceError("invalid_request", str(exc), "/node_json") from None
            refusal = None
            if not result.accepted:
                refusal = {"reason": result.reason, "detail": (result.detail or result.reason)[:500]}
                if result.node:
                    refusal["node"] = result.node
            execution_id = f"exec-{uuid.uuid4().hex[:20]}"
            return self._create(execution_id, request["id"], request, refusal, list(result.plan), recipe,
                                idempotency_key, body_hash, now, scope, limits=limits)

    def _untrusted_incidents(self, request: dict, recipe: dict | None, execution_id: str, now: float) -> list[dict]:
        found = untrusted.findings(request, "request") + (untrusted.findings(recipe, "recipe") if recipe else [])
        out = []
        for item in found:
            LOG.warning("untrusted instruction-like text ignored at %s: %r", item["pointer"], item["excerpt"])
            out.append(ev.incident_event(untrusted.INCIDENT, source=self.source, time_s=now, execution=execution_id,
                                         detail=f"instruction-like free text at {item['pointer']} was ignored",
                                         extra={"pointer": item["pointer"]}))
        return out

    # ------------------------------------------------------------------ reads

    def get_status(self, execution_id: str) -> dict:
        with self._lock:
            active = self._active.get(execution_id)
            if active is not None:
                return dict(active.status)
            row = self.store.execution(execution_id)
        if row is None:
            raise ServiceError("not_found", f"no execution {execution_id!r}")
        return row.status

    def get_log(self, execution_id: str) -> dict:
        with self._lock:
            active = self._active.get(execution_id)
            if active is not None:
                return active.run.log()
            row = self.store.execution(execution_id)
        if row is None:
            raise ServiceError("not_found", f"no execution {execution_id!r}")
        return row.log or minimal_log(row.id, row.request, self.config.device_info, self.clock(), "failed")

    def cooking_now(self) -> tuple[str, str] | None:
        """(execution, state) of the active execution, read without the service lock: the heartbeat
        must never wait for a control tick or a durable write (an fsync on a busy disk), or the
        monitor's lease counts a slow write as a dead executor."""
        return self._cooking

    def active_execution(self) -> str | None:
        with self._lock:
            return next(iter(self._active), None)

    def safety_limits(self) -> dict:
        """The effective pack: ours merged with what the device's safety monitor enforces now
        (limits tightened there since start-up included), for each scope the stricter. A guarding
        monitor that does not answer is `unavailable` (503): never our own pack in its place."""
        own = self.config.limits or default_pack()
        try:
            monitor = self.ports.safety_limits()
        except LimitsUnknown as exc:
            raise ServiceError("unavailable", f"{exc}; the device's effective safety limits are unknown",
                               status=503) from None
        return merge_packs(own, monitor) if monitor else own

    def _limits_for_start(self) -> tuple[dict, str | None]:
        """The pack a new execution runs under, and why it may not start (its monitor's limits unknown)."""
        try:
            return self.safety_limits(), None
        except ServiceError as exc:
            return self.config.limits or default_pack(), exc.detail

    def capabilities(self) -> dict:
        return self.config.capabilities

    # ------------------------------------------------------------------ stop / resume

    def stop(self, execution_id: str, stop_request: dict | None = None, idempotency_key: str | None = None) -> dict:
        """Stop safely (decision 1): never needs auth; a no-op returning the status when final."""
        return self.stop_from(execution_id, stop_request, idempotency_key)[0]

    def stop_from(self, execution_id: str, stop_request: dict | None = None,
                  idempotency_key: str | None = None) -> tuple[dict, str]:
        """Stop, and say which state the execution was in when the stop arrived (HTTP answers
        200 for one that had already ended, 202 otherwise). The halt goes out before any
        database work."""
        reason = "stop requested"
        if stop_request is not None:
            from cookwala_ros.core import schemas

            issues = schemas.validate(stop_request, "StopRequest")
            if issues:
                raise ServiceError("invalid_request", issues[0].message, issues[0].pointer)
            if stop_request["execution"] != execution_id:
                raise ServiceError("invalid_request", "the StopRequest names another execution", "/execution")
            reason = f"stop requested by {stop_request['requestedBy']}" + (
                f": {stop_request['reason']}" if stop_request.get("reason") else "")
        # The kitchen stops first, without waiting for the lock a control tick may hold (a dict
        # read is atomic); recording it comes after.
        active = self._active.get(execution_id)
        if active is not None and not lifecycle.is_final(active.status["state"]):
            self.ports.halt(reason)
        with self._lock:
            status = self.get_status(execution_id)
            before = status["state"]
            if idempotency_key is not None and self.store.idempotency(f"stop:{execution_id}", idempotency_key):
                return status, before
            active = self._active.get(execution_id)
            if active is not None and not lifecycle.is_final(status["state"]):
                active.run.stop(reason)
                self.ports.halt()  # again, in case a tick that was running commanded heat after the first
                self._absorb(active, self.clock())
                status = dict(active.status) if execution_id in self._active else self.get_status(execution_id)
            if idempotency_key is not None:
                self.store.remember_key(f"stop:{execution_id}", idempotency_key, "", execution_id, self.clock())
        return status, before

    def resume(self, execution_id: str, if_match_seq: int | None, idempotency_key: str | None = None) -> dict:
        with self._lock:
            status = self.get_status(execution_id)
            scope = f"resume:{execution_id}"
            if idempotency_key is not None and self.store.idempotency(scope, idempotency_key):
                return status
            if if_match_seq is not None and int(if_match_seq) != status["seq"]:
                raise ServiceError("precondition_failed", f"If-Match seq {if_match_seq} but the status is at seq {status['seq']}")
            active = self._active.get(execution_id)
            if active is None or status["state"] not in ("paused", "needs_human"):
                raise ServiceError("invalid_state", f"execution {execution_id} is {status['state']}; only a paused or"
                                   " needs_human execution can be resumed")
            if status["state"] == "paused":
                active.run.resume()
            else:
                active.run.human_done()
            self._absorb(active, self.clock(), force=True)
            if idempotency_key is not None:
                self.store.remember_key(scope, idempotency_key, "", execution_id, self.clock())
            return self.get_status(execution_id)

    # ------------------------------------------------------------------ recalls

    def apply_recalls(self, recalls: list[dict]) -> None:
        """Cache the current recall list; a `block_and_stop_running` recall stops what it covers."""
        self.store.replace_recalls(recalls, self.clock())
        stopping = [r for r in recalls if isinstance(r, dict) and r.get("action") == "block_and_stop_running"]
        with self._lock:
            hits = []
            for execution_id, active in self._active.items():
                for recall in stopping:
                    ctx = RequestContext(recipe_ref=active.recipe_ref, expected_hash=active.recipe_hash,
                                         recalls=[recall])
                    if check_recalls({"id": active.recipe_ref}, ctx):
                        hits.append((execution_id, recall))
                        break
        for execution_id, recall in hits:
            LOG.warning("recall %s stops execution %s", recall.get("id"), execution_id)
            self.stop(execution_id, stop_request(execution_id, f"recall:{recall.get('id')}",
                                                 f"recall {recall.get('id')} ({recall.get('reason')})"))

    # ------------------------------------------------------------------ tick

    def tick(self, now_s: float, observation: Any) -> Any:
        """Advance the active execution by one control period; returns the engine's Commands."""
        with self._lock:
            if self._closed:
                return None
            heartbeat = self._heartbeat(now_s)
            active = next(iter(self._active.values()), None)
            commands = None
            if active is not None:
                commands = active.run.tick(observation)
                self._append_trace(active)
                self._absorb(active, now_s)
        if heartbeat:
            self._emit([heartbeat])
        if commands is None:
            from cookwala_ros.core.engine import Commands

            commands = Commands()
        return commands

    def _append_trace(self, active: _Active) -> None:
        """Store the trace rows the engine sampled since the last tick (a few per second)."""
        trace = getattr(getattr(active.run, "builder", None), "trace", None)
        if not trace:
            return
        new = []
        for row in reversed(trace):
            if not row or row[0] <= active.trace_t_s:
                break
            new.append(row)
        if new:
            new.reverse()
            self.store.append_trace(active.status["id"], new)
            active.trace_t_s = new[-1][0]

    def _heartbeat(self, now_s: float) -> dict | None:
        last = self._last_heartbeat_s
        if last is not None and 0 <= now_s - last < self.config.heartbeat_interval_s:
            return None
        self._last_heartbeat_s = now_s
        self._heartbeats += 1
        active = next(iter(self._active.values()), None)
        return ev.heartbeat_event(device_id=self.config.device_id, source=self.source, boot=self._boot,
                                  count=self._heartbeats, time_s=now_s,
                                  execution=active.status["id"] if active else None,
                                  state=active.status["state"] if active else None,
                                  interval_s=self.config.heartbeat_interval_s)

    def _absorb(self, active: _Active, now_s: float, force: bool = False) -> None:
        """Turn the engine's changes since the last call into stored statuses and events."""
        run = active.run
        changes = run.drain_changes()
        if not changes and not force and now_s - active.last_poll_s < STATUS_POLL_S:
            return  # nothing happened: progress and readings are looked at once a second
        active.last_poll_s = now_s
        engine_status = run.status()
        node = engine_status.get("node")
        if node != active.step_node:
            active.step_node, active.step_started_s = node, (now_s if node else None)
        states = [data for kind, data in changes if kind == "state"]
        significant = force or any(kind in _SIGNIFICANT for kind, _ in changes)
        progress = engine_status.get("progress") or 0.0
        bucket = int(float(progress) * 10) if isinstance(progress, (int, float)) else 0
        stale = now_s - active.last_status_s >= self.config.status_interval_s and bool(engine_status.get("readings"))
        final_state = run.state
        if not states and final_state != active.status["state"]:
            states = [final_state]
        targets = [s for s in states if s != active.status["state"]] or []
        if not targets and (significant or bucket != active.bucket or stale):
            targets = [active.status["state"]]
        active.bucket = bucket
        events: list[dict] = []
        for state in targets:
            previous = active.status["state"]
            status = running_status(active.status, state, active.status["seq"] + 1, now_s, engine_status,
                                    active.step_started_s)
            final = lifecycle.is_final(state)
            detail = engine_status.get("stopReason") if state in ("stopping", "stopped", "failed") else None
            if detail:
                status[REASON_KEY] = {"code": "stop", "detail": str(detail)[:500]}
            event = ev.execution_event(status, source=self.source, time_s=now_s, previous_state=previous,
                                       recipe=active.recipe_ref, recipe_hash=active.recipe_hash, detail=detail)
            log = None
            if final or state != previous or any(k == "step_ended" for k, _ in changes) or \
                    now_s - active.last_log_s >= LOG_SNAPSHOT_S:
                log, active.last_log_s = run.log(), now_s
            # Progress and readings are not acknowledged to anyone: committed without an fsync
            # (WAL survives a process crash); state changes are synced before they are published.
            with self.store.transaction(durable=state != previous or final):
                self.store.update_status(status, final, log)
                self.store.add_event(event, status["id"], status["seq"])
            active.status = status
            active.last_status_s = now_s
            self._cooking = (status["id"], status["state"])
            events.append(event)
        for kind, data in changes:
            if kind == "incident" and isinstance(data, dict):
                incident = ev.incident_event(str(data.get("type") or data.get("incident") or
                                                 "cw.incident.equipment_failure"),
                                             source=self.source, time_s=now_s, execution=active.status["id"],
                                             detail=str(data.get("detail", "")))
                self.store.add_event(incident, active.status["id"], None)
                events.append(incident)
        if lifecycle.is_final(active.status["state"]):
            self._active.pop(active.status["id"], None)
            self._cooking = next(((i, a.status["state"]) for i, a in self._active.items()), None)
            self.store.drop_trace(active.status["id"])  # the final log holds the whole trace
        self._emit(events)

    # ------------------------------------------------------------------ life

    def _check_open(self) -> None:
        if self._closed:
            raise ServiceError("invalid_state", "the executor is shutting down", status=503)

    def close(self) -> None:
        """Stop the poller and close the database. Running executions stay as stored: the next
        start marks them failed (a clean shutdown while cooking is still not a completion)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self._poller is not None:
            self._poller.close()
        with self._lock:
            cooking = bool(self._active)
            self.store.close()
        if cooking:
            self.ports.halt()


def _recovered_trace(snapshot: Any, appended: list[list]) -> list[list]:
    """The log snapshot's trace followed by the rows appended after it, thinned like the engine's."""
    rows = [r for r in snapshot if isinstance(r, list) and r] if isinstance(snapshot, list) else []
    last = rows[-1][0] if rows else None
    rows += [r for r in appended if last is None or r[0] > last]
    while len(rows) > TRACE_MAX_ROWS:
        rows = rows[::2]
    return rows
