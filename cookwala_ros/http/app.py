"""The Cookwala Core HTTP API of one device, as a FastAPI app over the ExecutorService.

Thin on purpose: each handler reads and checks what the client sent (`inputs`), calls one
service method in a worker thread (the service blocks on SQLite and its lock), and writes the
answer in `application/vnd.cookwala+json` (or `application/json` when asked). Errors are RFC 9457
problem documents (`problems`); a refusal is a normal 202 status with state `refused`.

Decisions (ARCHITECTURE.md): stop needs no token, If-Match or Idempotency-Key (1); the
Idempotency-Key header wins over the body's key and must agree with it (2); a request whose
`core` is another version is refused, not rejected (3). The OpenAPI document served at
/openapi.json is ours, `schemas/openapi.yaml`.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Callable

from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from cookwala_ros.executor.service import ServiceError
from cookwala_ros.http import inputs
from cookwala_ros.http.openapi_doc import load_openapi
from cookwala_ros.http.problems import PROBLEM_MEDIA_TYPE, Problem, from_service_error

log = logging.getLogger(__name__)

FINAL_STATES = frozenset({"completed", "stopped", "refused", "failed"})


def _json_bytes(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def create_app(service: Any, *, token: str | None = None) -> FastAPI:
    """The device API over `service` (an ExecutorService); `token` enables bearer auth on POSTs."""
    token = token.strip() if isinstance(token, str) and token.strip() else None
    app = FastAPI(title="cookwala_ros device API", docs_url=None, redoc_url=None)
    app.openapi = load_openapi  # type: ignore[method-assign]
    app.state.service = service
    app.state.auth_enabled = token is not None

    def answer(request: Request, document: Any, status: int = 200, headers: dict | None = None) -> Response:
        media = inputs.response_media_type(request.headers.get("accept"))
        return Response(_json_bytes(document), status_code=status, media_type=media, headers=headers)

    def problem_response(request: Request, problem: Problem) -> Response:
        headers = {"WWW-Authenticate": 'Bearer realm="cookwala"'} if problem.status == 401 else None
        return Response(_json_bytes(problem.document(instance=request.url.path)), status_code=problem.status,
                        media_type=PROBLEM_MEDIA_TYPE, headers=headers)

    async def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return await run_in_threadpool(fn, *args, **kwargs)
        except ServiceError as exc:
            raise from_service_error(exc) from exc

    async def body_of(request: Request, *, required: bool = True) -> Any:
        inputs.check_content_type(request.headers.get("content-type"))
        inputs.check_length(request.headers.get("content-length"))
        return inputs.parse_json(await request.body(), required=required)

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
        detail = f"no route {request.method} {request.url.path}" if exc.status_code in (404, 405) else str(exc.detail)
        return problem_response(request, Problem(code, detail, status=exc.status_code))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Response:
        if isinstance(exc, ServiceError):
            return problem_response(request, from_service_error(exc))
        log.exception("unexpected error in %s %s", request.method, request.url.path)
        return problem_response(request, Problem("internal_error", f"{type(exc).__name__}: {exc}"))

    @app.post("/v1/executions", status_code=202)
    async def start_execution(request: Request) -> Response:
        inputs.check_bearer(request.headers.get("authorization"), token)
        body = await body_of(request)
        key = inputs.idempotency_key(request.headers.get(inputs.IDEMPOTENCY_HEADER), body)
        if isinstance(body, dict) and key is not None and "idempotencyKey" not in body:
            body = {**body, "idempotencyKey": key}  # the header alone is enough (decision 2)
        inputs.validate_body(body, "ExecuteRequest", version_is_refusal=True)
        status, _created = await call(service.start_execution, body, key, authorized=True)
        return answer(request, status, 202, status_headers(status))

    @app.get("/v1/executions/{execution_id}")
    async def get_execution(request: Request, execution_id: str) -> Response:
        status = await call(service.get_status, execution_id)
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
        status, before = await call(service.stop_from, execution_id, body, key)
        code = 200 if before in FINAL_STATES else 202
        return answer(request, status, code, status_headers(status))

    @app.post("/v1/executions/{execution_id}/resume", status_code=202)
    async def resume_execution(request: Request, execution_id: str) -> Response:
        inputs.check_bearer(request.headers.get("authorization"), token)
        key = inputs.idempotency_key(request.headers.get(inputs.IDEMPOTENCY_HEADER))
        seq = inputs.if_match_seq(request.headers.get("if-match"))
        await call(service.get_status, execution_id)  # 404 before 428 for an unknown id
        if seq is None:
            raise Problem("precondition_required", "send If-Match with the seq of the last status you saw",
                          header="If-Match")
        status = await call(service.resume, execution_id, seq, key)
        return answer(request, status, 202, status_headers(status))

    @app.get("/v1/executions/{execution_id}/log")
    async def get_execution_log(request: Request, execution_id: str) -> Response:
        return answer(request, await call(service.get_log, execution_id))

    @app.get("/v1/safety-limits")
    async def get_safety_limits(request: Request) -> Response:
        return answer(request, await call(service.safety_limits))

    @app.get("/v1/capabilities")
    async def get_capabilities(request: Request) -> Response:
        return answer(request, await call(service.capabilities))

    return app
