"""The Cookwala Core HTTP API of one device, as a FastAPI app over the ExecutorService.

Thin on purpose: each handler reads and checks what the client sent (`inputs`), calls one
service method in a worker thread (the service blocks on SQLite and its lock), and writes the
answer in `application/vnd.cookwala+json` (or `application/json` when asked). Errors are RFC 9457
problem documents (`problems`); a refusal is a normal 202 status with state `refused`.

Decisions (ARCHITECTURE.md): stop needs no token, If-Match or Idempotency-Key (1); start and
resume need the Idempotency-Key header, which must agree with the body's key (2); a request whose
`core` is another version is refused, not rejected (3); a request `id` already started under
another key is a 409, as the reference hub answers. Hostile input (`limits`, `inputs`) gets a
problem document, never a 5xx: bodies are read chunk by chunk up to the limit, JSON is parsed
with bounded depth and number size. The OpenAPI document served at /openapi.json is ours,
`schemas/openapi.yaml`.
"""

from __future__ import annotations

import logging
import threading
import uuid
from typing import Any, Callable

from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from cookwala_ros.core.lifecycle import FINAL_STATES
from cookwala_ros.executor.service import ServiceError
from cookwala_ros.http import inputs
from cookwala_ros.http.limits import HttpLimits
from cookwala_ros.http.openapi_doc import load_openapi
from cookwala_ros.http.problems import PROBLEM_MEDIA_TYPE, Problem, clip, from_service_error, json_bytes

log = logging.getLogger(__name__)

MAX_ID_CHARS = 128  # longer than any id the device assigns: answered 404 without a look-up
IF_MATCH_STAR_TRIES = 3


def execution_for_request(service: Any, request_id: str) -> str | None:
    """The execution already started for request `request_id`, if any.

    The service has no such look-up yet (the executor owns it and should make the check under its
    own lock); until then this reads the executions table of its store.
    """
    finder = getattr(service, "execution_for_request", None)
    if callable(finder):
        return finder(request_id)
    row = service.store._one("SELECT id FROM executions WHERE request_id=? ORDER BY created_at LIMIT 1",
                             (request_id,))
    return row[0] if row else None


def create_app(service: Any, *, token: str | None = None) -> FastAPI:
    """The device API over `service` (an ExecutorService); `token` enables bearer auth on POSTs."""
    token = token.strip() if isinstance(token, str) and token.strip() else None
    app = FastAPI(title="cookwala_ros device API", docs_url=None, redoc_url=None, redirect_slashes=False)
    app.openapi = load_openapi  # type: ignore[method-assign]
    app.add_middleware(HttpLimits)
    app.state.service = service
    app.state.auth_enabled = token is not None
    starting = threading.Lock()  # one start at a time: the request-id check and the start are one step

    def answer(request: Request, document: Any, status: int = 200, headers: dict | None = None) -> Response:
        media = inputs.response_media_type(request.headers.get("accept"))
        return Response(json_bytes(document), status_code=status, media_type=media, headers=headers)

    def problem_response(request: Request, problem: Problem, headers: dict | None = None) -> Response:
        headers = dict(headers or {})
        if problem.status == 401:
            headers["WWW-Authenticate"] = 'Bearer realm="cookwala"'
        return Response(json_bytes(problem.document(instance=request.url.path)), status_code=problem.status,
                        media_type=PROBLEM_MEDIA_TYPE, headers=headers or None)

    async def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return await run_in_threadpool(fn, *args, **kwargs)
        except ServiceError as exc:
            raise from_service_error(exc) from exc

    async def body_of(request: Request, *, required: bool = True) -> Any:
        inputs.check_content_type(request.headers.get("content-type"))
        inputs.check_length(request.headers.get("content-length"))
        try:
            raw = await inputs.read_body(request.stream())
        except ClientDisconnect:
            raise Problem("invalid_request", "the client went away before the body ended", pointer="") from None
        return inputs.parse_json(raw, required=required)

    def known_id(execution_id: str) -> str:
        if len(execution_id) > MAX_ID_CHARS:
            raise Problem("not_found", f"no execution {clip(execution_id, 40)!r}")
        return execution_id

    def status_headers(status: dict) -> dict[str, str]:
        headers = {"Location": f"/v1/executions/{status.get('id')}"}
        if isinstance(status.get("seq"), int):
            headers["ETag"] = inputs.etag(status["seq"])
        return headers

    @app.exception_handler(Problem)
    async def _problem(request: Request, exc: Problem) -> Response:
        return problem_response(request, exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "invalid_request")
        where = f"{request.method} {clip(request.url.path, 80)}"
        detail = {404: f"no route {where}",
                  405: f"{where}: allowed are {(exc.headers or {}).get('Allow', 'none')}"}.get(exc.status_code,
                                                                                             str(exc.detail))
        return problem_response(request, Problem(code, detail, status=exc.status_code), headers=exc.headers)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Response:
        if isinstance(exc, ServiceError):
            return problem_response(request, from_service_error(exc))
        ref = uuid.uuid4().hex[:12]
        log.error("unexpected error %s in %s %s: %r", ref, request.method, clip(request.url.path, 80), exc,
                  exc_info=exc)
        return problem_response(request, Problem("internal_error", f"an internal error; the device log names it {ref}"))

    @app.post("/v1/executions", status_code=202)
    async def start_execution(request: Request) -> Response:
        inputs.check_bearer(request.headers.get("authorization"), token)
        body = await body_of(request)
        key = inputs.idempotency_key(request.headers.get(inputs.IDEMPOTENCY_HEADER), body, required=True)
        if isinstance(body, dict) and "idempotencyKey" not in body:
            body = {**body, "idempotencyKey": key}  # the header alone is enough (decision 2)
        inputs.validate_body(body, "ExecuteRequest", version_is_refusal=True)
        inputs.check_servings(body)
        status = await call(start_once, body, key)
        return answer(request, status, 202, status_headers(status))

    def start_once(body: dict, key: str) -> dict:
        """Start `body`, unless its request id was started under another key (409, like the hub)."""
        request_id = body.get("id")
        with starting:
            if isinstance(request_id, str) and service.store.idempotency("start", key) is None:
                earlier = execution_for_request(service, request_id)
                if earlier is not None:
                    raise Problem("request_conflict", f"request {clip(request_id, 80)!r} was already started as "
                                                      f"{earlier} under another {inputs.IDEMPOTENCY_HEADER}",
                                  pointer="/id", extra={"execution": earlier})
            return service.start_execution(body, key, authorized=True)[0]

    @app.get("/v1/executions/{execution_id}")
    async def get_execution(request: Request, execution_id: str) -> Response:
        status = await call(service.get_status, known_id(execution_id))
        return answer(request, status, 200, status_headers(status))

    @app.post("/v1/executions/{execution_id}/stop", status_code=202)
    async def stop_execution(request: Request, execution_id: str) -> Response:
        body = await body_of(request, required=False)
        if body is not None:
            inputs.validate_body(body, "StopRequest")
            if body.get("execution") != execution_id:
                raise Problem("invalid_request", f"execution {body.get('execution')!r} in the body is not "
                                                 f"{execution_id!r} of the path", pointer="/execution")
        key = inputs.idempotency_key(request.headers.get(inputs.IDEMPOTENCY_HEADER))
        status, before = await call(service.stop_from, known_id(execution_id), body, key)
        code = 200 if before in FINAL_STATES else 202
        return answer(request, status, code, status_headers(status))

    @app.post("/v1/executions/{execution_id}/resume", status_code=202)
    async def resume_execution(request: Request, execution_id: str) -> Response:
        inputs.check_bearer(request.headers.get("authorization"), token)
        key = inputs.idempotency_key(request.headers.get(inputs.IDEMPOTENCY_HEADER), required=True)
        if_match = request.headers.get("if-match")
        for attempt in range(IF_MATCH_STAR_TRIES):
            current = await call(service.get_status, known_id(execution_id))  # 404 before 428 for an unknown id
            seq = inputs.if_match_seq(if_match, current.get("seq"))
            if seq is None:
                raise Problem("precondition_required", "send If-Match with the seq of the last status you saw",
                              header="If-Match")
            try:
                status = await call(service.resume, execution_id, seq, key)
            except Problem as exc:  # `*` matches whatever is current: a change in between is no mismatch
                if exc.status != 412 or if_match.strip() != "*" or attempt + 1 == IF_MATCH_STAR_TRIES:
                    raise
                continue
            return answer(request, status, 202, status_headers(status))

    @app.get("/v1/executions/{execution_id}/log")
    async def get_execution_log(request: Request, execution_id: str) -> Response:
        return answer(request, await call(service.get_log, known_id(execution_id)))

    @app.get("/v1/safety-limits")
    async def get_safety_limits(request: Request) -> Response:
        return answer(request, await call(service.safety_limits))

    @app.get("/v1/capabilities")
    async def get_capabilities(request: Request) -> Response:
        return answer(request, await call(service.capabilities))

    return app
