"""executor: Cookwala executions as ROS 2 actions, services and topics (and the Core HTTP API).

A thin adapter over `cookwala_ros.executor.service.ExecutorService`:
- actions `~/execute_recipe` (ExecuteRecipe: feedback = the ExecutionStatus, cancel = stop) and
  `~/execute_node` (ExecuteNode); services `~/stop`, `~/resume`, `~/get_execution`, `~/get_log`,
  `~/get_safety_limits`, `~/get_capabilities`;
- publishes `/cookwala/events` (CloudEvents), `/cookwala/status` (latched), `/cookwala/heartbeat`
  (10 Hz on the steady clock, liveliness lease for the safety monitor) and `/diagnostics`;
- reads the heater state, joint states, presence and the safety monitor's status, and drives the
  heater command and arm trajectory topics named in the device file (ros/executor_io.py: the
  stop latch, the heater keep-alive, stale-state faults);
- watches the safety monitor the device file names (`executor.safety_monitor_node`, or the
  `safety_monitor_node` parameter): nothing starts before it has been seen armed, and when its
  status goes silent the executor cuts heat, halts the arm, stops the execution with an
  equipment-failure incident and refuses new executions (busy) until the monitor is armed again;
- the control tick runs on the ROS clock (sim time in CI), so a 30-minute simmer runs as fast as
  the simulated /clock goes; with `clock_mode` lockstep it runs once per `tick_hz` period of
  /clock steps instead, once the plant's state of that step has arrived, and reports the step done
  (ros/lockstep.py), so a cook gives the same trace at any load;
- with `http_port` > 0 it serves the Core HTTP API (cookwala_ros.http.app) with uvicorn.

Parameters are validated at start; a bad parameter or device-file entry stops the node with a
message naming it. The ROS goal's `request_json` is authoritative; the other goal fields must
agree with it or the goal is rejected (decision 6).
"""

from __future__ import annotations

import json
import math
import sys
import threading
import time

import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.node import Node

from cookwala_msgs.action import ExecuteNode, ExecuteRecipe
from cookwala_msgs.msg import Event, ExecutionStatus, Heartbeat
from cookwala_msgs.srv import GetCapabilities, GetExecution, GetLog, GetSafetyLimits, Resume, Stop
from cookwala_ros.core import json_limits, lifecycle
from cookwala_ros.capabilities import ServedInterfaces, capabilities_document
from cookwala_ros.device import load_device_config
from cookwala_ros.executor import events as ev
from cookwala_ros.executor import single_node
from cookwala_ros.executor.config import ExecutorConfig
from cookwala_ros.executor.status import stop_request
from cookwala_ros.executor.service import ExecutorService, ServiceError
from cookwala_ros.executor.waiters import ExecutionWaiters
from cookwala_ros.ros import convert, names, qos, readiness
from cookwala_ros.ros.endpoints import LeanEndpoints
from cookwala_ros.ros.node_main import run_node
from cookwala_ros.ros.convert import safety_limit_msgs
from cookwala_ros.ros.executor_io import UNGUARDED, DeviceIO
from cookwala_ros.ros.executor_params import PARAMETERS
from cookwala_ros.ros.executor_lockstep import LockstepTick
from cookwala_ros.ros.params import comma_list, declare_parameters, read_token_file
from cookwala_ros.safety.monitor import OFFLINE

NODE_NAME = names.EXECUTOR_NODE


MONITOR_CHECK_S = 0.05  # how often the monitor's freshness is checked while cooking or heating [s, steady clock]
MONITOR_CHECK_IDLE_S = 0.25  # ... and with nothing cooking and no heat: only a lost monitor's report and
# the readiness news wait for it (a start asks the watch itself)
TICK_HUNG_S = 0.5  # a control tick running this long stops the heater keep-alive [s, steady clock]
HTTP_START_WAIT_S = 10.0  # how long start-up waits to learn whether the HTTP API could listen [s]


class ExecutorNode(LockstepTick, LeanEndpoints, Node):
    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        device = load_device_config(values["device_file"] or None)  # DeviceConfigError names the key
        section = device.executor
        self.token = read_token_file(values["token_file"] or section.get("token_file") or "", device)
        self.http_port = values["http_port"] if values["http_port"] >= 0 else int(section.get("http_port") or 0)
        self.http_bind = values["http_bind"] or section.get("http_bind") or "127.0.0.1"
        config = ExecutorConfig.from_device(device, data_dir=values["data_dir"] or None,
                                            capabilities=capabilities_document(device, self._served()))
        self.device_id = device.device_id
        self._heartbeat_count = 0
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)

        control = MutuallyExclusiveCallbackGroup()
        sensing = MutuallyExclusiveCallbackGroup()
        requests = ReentrantCallbackGroup()
        housekeeping = MutuallyExclusiveCallbackGroup()
        liveliness = MutuallyExclusiveCallbackGroup()  # the heartbeat alone: it never waits behind other work
        guard = MutuallyExclusiveCallbackGroup()  # the safety status and the monitor check
        self._tick_started: float | None = None
        self._ready_published: bool | None = None  # the readiness the last diagnostics reported
        self.io = DeviceIO(self, device, values, sensing, guard)
        self.io.disabled = set(comma_list(values["disabled_sensors"]))
        self.service = ExecutorService(config, self.io, clock=self._ros_now)
        self._status_pub = self.create_publisher(ExecutionStatus, names.EXECUTION_STATUS, qos.latched())
        self._event_pub = self.create_publisher(Event, names.EVENTS, qos.events())
        self._heartbeat_pub = self.create_publisher(Heartbeat, names.HEARTBEAT, qos.heartbeat(values["heartbeat_lease_s"]))
        self._diag_pub = self.create_publisher(DiagnosticArray, names.DIAGNOSTICS, qos.sensor())
        self._waiters = ExecutionWaiters()  # the goals following each execution
        self._closing = threading.Event()
        self.service.add_event_listener(self._on_event)

        if values["clock_mode"] == "lockstep":
            self._start_lockstep(values, control)
        else:
            self.create_timer(1.0 / values["tick_hz"], self._tick, callback_group=control)
        self.create_timer(1.0 / values["heartbeat_hz"], self._heartbeat, callback_group=liveliness, clock=self._steady)
        self.create_timer(1.0, self._diagnostics, callback_group=housekeeping, clock=self._steady)
        self._check_period_s = MONITOR_CHECK_S
        self._check_pace_lock = threading.Lock()
        self._check_timer = self.create_timer(MONITOR_CHECK_S, self._check_monitor, callback_group=guard,
                                              clock=self._steady)
        self._keepalive_s = values["heater_keepalive_s"]
        self.io.keepalive_timer = self.create_timer(  # started and stopped by the DeviceIO with the heat
            self._keepalive_s, self._keepalive, callback_group=MutuallyExclusiveCallbackGroup(), clock=self._steady,
            autostart=False)
        self.create_service(Stop, "~/stop", self._on_stop, callback_group=requests)
        self.create_service(Resume, "~/resume", self._on_resume, callback_group=requests)
        self.create_service(GetExecution, "~/get_execution", self._on_get_execution, callback_group=requests)
        self.create_service(GetLog, "~/get_log", self._on_get_log, callback_group=requests)
        self.create_service(GetSafetyLimits, "~/get_safety_limits", self._on_get_limits, callback_group=requests)
        self.create_service(GetCapabilities, "~/get_capabilities", self._on_get_capabilities, callback_group=requests)
        self._recipe_goals: dict = {}
        goal_qos = {f"{kind}_service_qos_profile": qos.action_goals() for kind in ("goal", "result", "cancel")}
        self._recipe_server = ActionServer(
            self, ExecuteRecipe, f"~/{names.EXECUTE_RECIPE}", execute_callback=self._execute_recipe,
            goal_callback=self._recipe_goal, cancel_callback=self._cancel, callback_group=requests, **goal_qos)
        self._node_server = ActionServer(
            self, ExecuteNode, f"~/{names.EXECUTE_NODE}", execute_callback=self._execute_node,
            goal_callback=self._node_goal, cancel_callback=self._cancel, callback_group=requests, **goal_qos)
        self._http = None
        if self.http_port > 0:
            self._start_http()
        if not self.io.watch.guarded:
            self.get_logger().warning("no safety monitor guards this executor (safety_monitor_node is empty or "
                                      f"'{UNGUARDED}'): nothing but the executor itself cuts heat on a fault")
        self.get_logger().info(
            f"executor of {self.device_id} ready: data {config.data_dir}, {len(self.service.library.recipes())} "
            f"recipe(s), HTTP {'off' if self.http_port <= 0 else f'{self.http_bind}:{self.http_port}'}")

    # ------------------------------------------------------------------ set-up helpers

    def _served(self) -> ServedInterfaces:
        """What this node really serves, for the capabilities' `interfaces`."""
        fqn = self.get_fully_qualified_name()
        host = self.http_bind if self.http_bind not in ("0.0.0.0", "::") else "127.0.0.1"
        host = f"[{host}]" if ":" in host else host
        return ServedInterfaces(
            namespace=self.get_namespace(), action_server=names.service_of(fqn, names.EXECUTE_RECIPE),
            execute_node_action=names.service_of(fqn, names.EXECUTE_NODE),
            http_url=f"http://{host}:{self.http_port}" if self.http_port > 0 else "")

    def _on_set_parameters(self, parameters):
        from rcl_interfaces.msg import SetParametersResult

        for parameter in parameters:
            if parameter.name == "disabled_sensors":
                self.io.disabled = set(comma_list(str(parameter.value)))
        return SetParametersResult(successful=True)

    def _start_http(self) -> None:
        import uvicorn

        from cookwala_ros.http.app import create_app
        from cookwala_ros.http.server import uvicorn_config

        app = create_app(self.service, token=self.token)
        server = uvicorn.Server(uvicorn_config(app, host=self.http_bind, port=self.http_port))
        server.install_signal_handlers = lambda: None  # rclpy owns the signals
        thread = threading.Thread(target=server.run, name="http", daemon=True)
        thread.start()
        self._http = (server, thread)
        # A port it cannot listen on ends uvicorn's thread (it logs the OS error): the node must
        # not stay up without its API. Slow is not dead: after HTTP_START_WAIT_S it goes on.
        deadline = time.monotonic() + HTTP_START_WAIT_S
        while not server.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        if not server.started and not thread.is_alive():
            raise ValueError(f"parameter 'http_port': the HTTP API cannot listen on {self.http_bind}:{self.http_port} "
                             "(the port is in use or not allowed)")

    # ------------------------------------------------------------------ loops

    def _tick(self) -> None:
        now = self._ros_now()
        if now <= 0:
            return  # no /clock yet under sim time
        self._tick_started = time.monotonic()
        try:
            commands = self.service.tick(now, self.io.observation(now))
            if commands is not None:
                self.io.apply(commands)
            self._stop_if_latched()
        except Exception as exc:
            self.io.halt(f"the executor's control tick failed: {exc!r}"[:300])
            raise
        finally:
            self._tick_started = None

    def _stop_if_latched(self) -> None:
        """A running execution whose commands the stop latch holds back is stopped, with the reason."""
        reason = self.io.latched()
        execution = self.service.active_execution() if reason else None
        if execution is None:
            return
        state = self.service.get_status(execution)["state"]
        if state == "stopping" or lifecycle.is_final(state):
            return
        self.get_logger().warning(f"stopping {execution}: {reason}")
        self.service.stop(execution, stop_request(execution, "executor", reason))

    def _pace_monitor_check(self, busy: bool) -> None:
        """The monitor check's period: MONITOR_CHECK_S while a cook runs or heat is on, else the idle one."""
        period = MONITOR_CHECK_S if busy else MONITOR_CHECK_IDLE_S
        with self._check_pace_lock:
            if period == self._check_period_s:
                return
            self._check_period_s = period
            self._check_timer.timer_period_ns = int(period * 1e9)
            self._check_timer.reset()  # the next check one new period from now, not one old period

    def _check_monitor(self) -> None:
        why = self.io.check_monitor(self._check_period_s)  # heat is cut and the arm halted (latched) before this returns
        self._pace_monitor_check(self.service.cooking_now() is not None or self.io.heat_on())
        if (self.io.start_hold() is None) != self._ready_published:
            self._diagnostics()  # whoever waits to start a cook hears at once that it may, or may not
        if why is None:
            return
        self.get_logger().error(f"{why}: heat cut, arm halted; new executions are refused until it is armed again")
        execution = self.service.active_execution()
        if execution is None:  # a running execution reports it through the engine (stored with its events)
            now = self._ros_now()
            self._on_event(ev.incident_event("cw.incident.equipment_failure", source=self.service.source,
                                             time_s=now if now > 0 else time.time(), execution=None, detail=why))

    def _keepalive(self) -> None:
        started = self._tick_started
        self.io.keepalive(min_gap_s=0.5 * self._keepalive_s,
                          hung=started is not None and time.monotonic() - started > TICK_HUNG_S)

    def _heartbeat(self) -> None:
        self._heartbeat_count += 1
        execution, state = self.service.cooking_now() or ("", "idle")  # never waits for the service lock
        self._heartbeat_pub.publish(Heartbeat(
            stamp=self.get_clock().now().to_msg(), device_id=self.device_id,
            node_name=self.get_fully_qualified_name(), execution_id=execution, state=state,
            count=self._heartbeat_count))

    def _diagnostics(self) -> None:
        execution = self.service.active_execution()
        level = DiagnosticStatus.OK
        message = "idle" if execution is None else f"cooking {execution}"
        if self.io.heater_state is None:
            level, message = DiagnosticStatus.WARN, "no heater state received"
        hold = self.io.start_hold()
        if hold:
            level, message = DiagnosticStatus.ERROR if self.io.watch.lost else DiagnosticStatus.WARN, hold
        self._ready_published = hold is None
        values = [KeyValue(key=readiness.READY_KEY, value=str(hold is None).lower()),
                  KeyValue(key=readiness.HOLD_KEY, value=hold or ""),
                  KeyValue(key="active_execution", value=execution or ""),
                  KeyValue(key="safety_armed", value=str(self.io.safety_armed())),
                  KeyValue(key="safety_monitor", value=self.io.watch.name or "none"),
                  KeyValue(key="stop_latch", value=self.io.latched() or ""),
                  KeyValue(key="person_present", value=str(self.io.human_present())),
                  KeyValue(key="recipes", value=str(len(self.service.library.recipes())))]
        status = DiagnosticStatus(level=level, name=f"{self.get_fully_qualified_name()}{readiness.EXECUTOR_SUFFIX}", message=message,
                                  hardware_id=self.device_id, values=values)
        self._diag_pub.publish(DiagnosticArray(header=_header(self), status=[status]))

    def _on_event(self, event: dict) -> None:
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        if event.get("type") == ev.OWN_TYPES["accepted"]:
            self.io.admit()  # a new execution: the stop latch may be released (see DeviceIO.admit)
            self._pace_monitor_check(busy=True)
            if self.stepper is not None:
                self.stepper.wake()  # lock-step: no idle wait for the first tick
        elif data.get("state") in ("stopping", "stopped", "failed") and "cookwalaseq" in event:
            self.io.latch(f"execution {data.get('execution')} is {data['state']}", halt="never")
        self._event_pub.publish(convert.event_msg(event))
        execution = event.get("subject")
        if "cookwalaseq" in event and event["type"].startswith("cookwala.execution.") and execution:
            try:
                status = self.service.get_status(execution)
            except ServiceError:
                return
            self._status_pub.publish(convert.status_msg(status))
            self._waiters.changed(execution)

    # ------------------------------------------------------------------ services

    def _on_stop(self, request, response):
        execution = request.execution_id or self.service.active_execution()
        if not execution:
            response.accepted, response.state, response.message = True, "idle", "nothing is running"
            return response
        stop = stop_request(execution, request.requested_by or "ros", request.reason)
        try:
            status = self.service.stop(execution, stop, request.idempotency_key or None)
        except ServiceError as exc:
            response.accepted, response.message = False, exc.detail
            return response
        response.accepted, response.state, response.seq = True, status["state"], status["seq"]
        response.message = "stopping" if not lifecycle.is_final(status["state"]) else f"already {status['state']}"
        return response

    def _on_resume(self, request, response):
        try:
            status = self.service.resume(request.execution_id, request.if_match_seq, request.idempotency_key or None)
        except ServiceError as exc:
            response.accepted, response.error_code, response.message = False, exc.code, exc.detail
            try:
                current = self.service.get_status(request.execution_id)
                response.state, response.seq = current["state"], current["seq"]
            except ServiceError:
                pass
            return response
        response.accepted, response.state, response.seq, response.message = True, status["state"], status["seq"], "resumed"
        return response

    def _on_get_execution(self, request, response):
        try:
            response.status = convert.status_msg(self.service.get_status(request.execution_id))
            response.found = True
        except ServiceError:
            response.found = False
        return response

    def _on_get_log(self, request, response):
        try:
            response.log_json = json.dumps(self.service.get_log(request.execution_id))
            response.found = True
        except ServiceError:
            response.found = False
        return response

    def _on_get_limits(self, request, response):
        try:
            pack = self.service.safety_limits()
        except ServiceError as exc:  # the guarding monitor's limits are unknown: an empty answer, never ours alone
            self.get_logger().warning(f"get_safety_limits: {exc.detail}")
            return response
        response.pack_id = str(pack.get("id", ""))
        response.limits = safety_limit_msgs(pack)
        response.pack_json = json.dumps(pack)
        return response

    def _on_get_capabilities(self, request, response):
        response.capabilities_json = json.dumps(self.service.capabilities())
        return response

    # ------------------------------------------------------------------ actions

    def _recipe_goal(self, goal) -> GoalResponse:
        problem = goal_problem(goal)
        if problem:
            self.get_logger().warning(f"ExecuteRecipe goal rejected: {problem}")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _node_goal(self, goal) -> GoalResponse:
        problem = node_goal_problem(goal)
        if problem:
            self.get_logger().warning(f"ExecuteNode goal rejected: {problem}")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _cancel(self, goal_handle) -> CancelResponse:
        execution = self._recipe_goals.get(id(goal_handle))
        if execution:
            self.service.stop(execution, stop_request(execution, "ros:action_cancel", "the action goal was cancelled"))
        return CancelResponse.ACCEPT

    def _execute_recipe(self, goal_handle):
        goal = goal_handle.request
        result = ExecuteRecipe.Result()
        try:
            status, _ = self.service.start_execution(json_limits.loads(goal.request_json),
                                                     goal.idempotency_key or None)
        except ServiceError as exc:
            # not an execution (bad body, idempotency conflict): aborted, no state, the problem as log_json
            self.get_logger().warning(f"ExecuteRecipe: {exc}")
            result.log_json = json.dumps({"code": exc.code, "status": exc.status, "detail": exc.detail,
                                          "pointer": exc.pointer})
            goal_handle.abort()
            return result
        final, superseded = self._follow(goal_handle, status["id"], self._recipe_feedback)
        result.state = final["state"]
        if superseded:
            result.log_json = self._superseded(goal_handle, status["id"], final)
            return result
        result.refusal_reason = (final.get("refusal") or {}).get("reason", "")
        result.log_json = json.dumps(self.service.get_log(final["id"]))
        self._finish(goal_handle, final)
        return result

    def _execute_node(self, goal_handle):
        goal = goal_handle.request
        result = ExecuteNode.Result()
        try:
            status, _ = self.service.start_node(json_limits.loads(goal.node_json),
                                                json_limits.loads(goal.target_json) if goal.target_json else None)
        except ServiceError as exc:
            self.get_logger().warning(f"ExecuteNode: {exc}")
            result.deviation_json = json.dumps({"kind": "other", "detail": exc.detail})
            goal_handle.abort()
            return result
        target = json_limits.loads(goal.target_json) if goal.target_json else None
        reached = [False]

        def feedback(current: dict) -> ExecuteNode.Feedback:
            message = self._node_feedback(current)
            reached[0] = reached[0] or convert.target_reached(current, target)
            message.target_reached = reached[0]
            return message

        final, superseded = self._follow(goal_handle, status["id"], feedback)
        if superseded:  # not expected: every ExecuteNode goal starts its own execution
            result.deviation_json = json.dumps({"kind": "other", "detail": json.loads(
                self._superseded(goal_handle, status["id"], final))["detail"]})
            return result
        steps = self.service.get_log(final["id"]).get("steps") or []
        step = steps[-1] if steps else {}
        result.envelope_ok = bool(step.get("envelopeOk", False)) and final["state"] == "completed"
        result.verified_by = step.get("verifiedBy", "")
        result.summary_json = json.dumps(step.get("summary", []))
        deviation = step.get("deviation") or ((final.get("refusal") and {"kind": "other", "detail": final["refusal"]["reason"]}))
        result.deviation_json = json.dumps(deviation) if deviation else ""
        self._finish(goal_handle, final)
        return result

    def _follow(self, goal_handle, execution: str, feedback) -> tuple[dict, bool]:
        """Wait for the execution to end, publishing feedback on every new seq: (its status, and
        whether a newer goal for the same execution took over following it: executor/waiters.py)."""
        self._recipe_goals[id(goal_handle)] = execution
        last_seq = -1
        try:
            with self._waiters.following(execution) as follow:
                while rclpy.ok(context=self.context) and not self._closing.is_set() and not follow.superseded:
                    status = self.service.get_status(execution)
                    if status["seq"] != last_seq:
                        last_seq = status["seq"]
                        if not lifecycle.is_final(status["state"]):
                            goal_handle.publish_feedback(feedback(status))
                    if lifecycle.is_final(status["state"]):
                        return status, False
                    with follow.condition:
                        if not follow.superseded:  # a change wakes it sooner; the timeout covers one
                            follow.condition.wait(0.2)  # between the check and here
                superseded = follow.superseded
            return self.service.get_status(execution), superseded
        finally:
            self._recipe_goals.pop(id(goal_handle), None)

    @staticmethod
    def _superseded(goal_handle, execution: str, status: dict) -> str:
        """The answer of a goal a newer one for the same execution took over: aborted at once, with
        the execution as it stands."""
        goal_handle.abort()
        return json.dumps({"execution": execution, "state": status["state"], "seq": status["seq"],
                           "detail": "a newer goal for this execution (the same idempotency key) follows it now"})

    @staticmethod
    def _recipe_feedback(status: dict) -> ExecuteRecipe.Feedback:
        step = status.get("step") or {}
        return ExecuteRecipe.Feedback(
            seq=status["seq"], state=status["state"], node=step.get("node", ""), op=step.get("op", ""),
            progress=float(step.get("progress", 0.0)), verified_by=step.get("verifiedBy", ""),
            medium_temp_c=convert.medium_temp_c(status), human_needed=(status.get("humanNeeded") or {}).get("why", ""))

    @staticmethod
    def _node_feedback(status: dict) -> ExecuteNode.Feedback:
        step = status.get("step") or {}
        return ExecuteNode.Feedback(progress=float(step.get("progress", 0.0)),
                                    medium_temp_c=convert.medium_temp_c(status), target_reached=False)

    @staticmethod
    def _finish(goal_handle, final: dict) -> None:
        if final["state"] == "completed":
            goal_handle.succeed()
        elif goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:
            goal_handle.abort()

    # ------------------------------------------------------------------ shutdown

    def prepare_close(self) -> None:
        """Goals stop following their executions, so shutting down never waits on a cook."""
        self._closing.set()
        self._waiters.wake_all()

    def close(self) -> None:
        if self._http is not None:
            server, thread = self._http
            server.should_exit = True
            thread.join(timeout=5)
        self.service.close()  # halts the kitchen if it was cooking
        self._say_goodbye()
        if self.stepper is not None:
            self.stepper.leave()

    def _say_goodbye(self) -> None:
        """A last heartbeat saying `offline`: the safety monitor then reads the end of our
        liveliness as a clean exit, not a lost executor (heat or motion would still stop it)."""
        try:
            self._heartbeat_pub.publish(Heartbeat(
                stamp=self.get_clock().now().to_msg(), device_id=self.device_id,
                node_name=self.get_fully_qualified_name(), state=OFFLINE, count=self._heartbeat_count + 1))
            self._heartbeat_pub.wait_for_all_acked(rclpy.duration.Duration(seconds=0.5))
        except Exception as exc:  # noqa: BLE001 - the context may already be gone: the monitor latches then
            self.get_logger().warning(f"goodbye heartbeat not sent: {exc}")


def goal_problem(goal) -> str | None:
    """Why an ExecuteRecipe goal is inconsistent (decision 6), or None. request_json wins."""
    try:
        request = json_limits.loads(goal.request_json)
    except ValueError as exc:  # JsonInputError too: 1,000 nested brackets, a 100,000-digit number
        return f"request_json: not JSON ({exc})"
    if not isinstance(request, dict):
        return "request_json: must be a JSON object (the ExecuteRequest)"
    checks = (("recipe_ref", goal.recipe_ref, request.get("recipe")),
              ("recipe_hash", goal.recipe_hash, request.get("recipeHash")),
              ("idempotency_key", goal.idempotency_key, request.get("idempotencyKey")))
    for name, given, wanted in checks:
        if given and given != wanted:
            return f"{name} {given!r} disagrees with request_json ({wanted!r})"
    from cookwala_ros.core import schemas, versions

    if versions.is_supported(request.get("core")):  # another version is a refusal, not a bad goal
        issues = schemas.validate(request, "ExecuteRequest")
        if issues:
            return f"request_json{issues[0].pointer}: {issues[0].message}"
    servings = request.get("servings")
    if goal.servings and not (isinstance(servings, (int, float)) and math.isclose(goal.servings, servings, rel_tol=1e-6)):
        return f"servings {goal.servings:g} disagrees with request_json ({servings!r})"
    return None


def node_goal_problem(goal) -> str | None:
    """Why an ExecuteNode goal cannot start, or None: the node and target are checked as
    `start_node` checks them, so a bad shape is a rejected goal, not an aborted one."""
    documents = {}
    for name in ("node_json", "envelope_json", "target_json"):
        text = getattr(goal, name)
        if not text:
            continue
        try:
            documents[name] = json_limits.loads(text)
        except ValueError as exc:  # JsonInputError too: 1,000 nested brackets, a 100,000-digit number
            return f"{name}: not JSON ({exc})"
        if not isinstance(documents[name], dict):
            return f"{name}: must be a JSON object"
    if "node_json" not in documents:
        return "node_json is empty"
    problem = single_node.node_problem(documents["node_json"], documents.get("target_json"))
    return problem[1] if problem else None


def _header(node: Node):
    from std_msgs.msg import Header

    return Header(stamp=node.get_clock().now().to_msg())


def _prepare_before_the_graph() -> None:
    """Work that needs no node, done before the node shows in the ROS graph: a monitor that
    expects this executor gives it `executor_start_grace_s` from appearing to its first
    heartbeat, and on a loaded host these took most of that (the schemas, the HTTP stack)."""
    from cookwala_ros.core.schemas import default_schemas
    from cookwala_ros.http import app, server  # noqa: F401 - imported for their import time only

    default_schemas()


def main(args: list[str] | None = None) -> int:
    _prepare_before_the_graph()
    # ParameterError and DeviceConfigError are ValueErrors: run_node reports them by name.
    return run_node(NODE_NAME, ExecutorNode, args, threads=6, graceful_signals=True)


if __name__ == "__main__":
    sys.exit(main())
