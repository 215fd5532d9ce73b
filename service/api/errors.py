"""Every error is application/problem+json (RFC 9457) naming the offending field where there is one."""

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from clickhouse_connect.driver.exceptions import OperationalError
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from service.api import otlp_http
from service.diagnosis import InputError
from service.errors import ClientError, Conflict, NotFound, StoreUnavailable, field_path

PROBLEM_TYPE = "application/problem+json"
RETRY_AFTER_SECONDS = 5
STORE_DOWN = "the store is unavailable; retry later"
log = logging.getLogger("repute.api")


class Problem(Exception):
    def __init__(
        self, status: int, title: str, detail: str, field: str | None = None, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail, self.field, self.headers = status, title, detail, field, headers


def problem_response(
    request: Request,
    status: int,
    title: str,
    detail: str,
    errors: Sequence[dict[str, Any]] = (),
    headers: Mapping[str, str] | None = None,
) -> Response:
    body: dict[str, Any] = {"type": "about:blank", "title": title, "status": status, "detail": detail}
    body["instance"] = request.url.path
    if errors:
        body["errors"] = list(errors)
    return Response(orjson.dumps(body), status_code=status, media_type=PROBLEM_TYPE, headers=headers)


async def send_problem(
    scope: Scope, receive: Receive, send: Send, status: int, detail: str, headers: Mapping[str, str] | None = None
) -> None:
    """A problem answered by ASGI middleware, which runs outside the app's exception handlers."""
    response = problem_response(Request(scope), status, _title(status), detail, headers=headers)
    await response(scope, receive, send)


def validation_problem(request: Request, errors: Sequence[dict[str, Any]]) -> Response:
    listed = [{"field": field_path(e.get("loc", ())), "message": e.get("msg", "invalid")} for e in errors]
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in listed[:5])
    return problem_response(request, 422, "Unprocessable Content", detail, listed)


def _field_problem(request: Request, status: int, title: str, field: str, message: str) -> Response:
    detail = f"{field}: {message}" if field else message
    return problem_response(request, status, title, detail, [{"field": field or "body", "message": message}])


def client_problem(request: Request, exc: ClientError) -> Response:
    if isinstance(exc, NotFound | Conflict) and not exc.field:  # about a thing, not a field
        return problem_response(request, exc.status, _title(exc.status), str(exc))
    return _field_problem(request, exc.status, _title(exc.status), exc.field, str(exc))


def _not_json(exc: RequestValidationError) -> InputError | None:
    """A body that is not JSON, as the same 400 the routes that parse their own body answer."""
    for error in exc.errors():
        if error.get("type") == "json_invalid":
            document = exc.body if isinstance(exc.body, str) else ""
            position = error["loc"][-1] if isinstance(error["loc"][-1], int) else 0
            reason = json.JSONDecodeError(error.get("ctx", {}).get("error", "invalid JSON"), document, position)
            return InputError("", f"not JSON: {reason}")
    return None


def install(app: FastAPI) -> None:
    @app.exception_handler(Problem)
    async def _problem(request: Request, exc: Problem) -> Response:
        errors = [{"field": exc.field, "message": exc.detail}] if exc.field else []
        return problem_response(request, exc.status, exc.title, exc.detail, errors, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> Response:
        not_json = _not_json(exc)
        return client_problem(request, not_json) if not_json else validation_problem(request, exc.errors())

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> Response:
        detail = exc.detail if isinstance(exc.detail, str) else "request failed"
        return problem_response(request, exc.status_code, _title(exc.status_code), detail, headers=exc.headers)

    @app.exception_handler(ClientError)
    async def _client(request: Request, exc: ClientError) -> Response:
        return client_problem(request, exc)

    @app.exception_handler(StoreUnavailable)
    async def _unavailable(request: Request, exc: StoreUnavailable) -> Response:
        return _store_down(request, exc)

    @app.exception_handler(OperationalError)
    async def _operational(request: Request, exc: OperationalError) -> Response:
        return _store_down(request, exc)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return problem_response(request, 500, "Internal Server Error", "unexpected error; it has been logged")


def _store_down(request: Request, exc: Exception) -> Response:
    """503 with Retry-After: as a google.rpc.Status on the OTLP receivers (what exporters read), else a problem."""
    log.warning("store unavailable: %s", exc)
    request.app.state.metrics.store_errors.inc()
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
    if request.url.path in otlp_http.OTLP_PATHS:
        return otlp_http.unavailable(STORE_DOWN, otlp_http.sends_protobuf(request), headers)
    return problem_response(request, 503, "Service Unavailable", STORE_DOWN, headers=headers)


# The statuses that reach `_title`: client errors, Starlette's own 404 and 405, problems sent by middleware
# (the others name their title where they are raised).
_TITLES = {
    400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 409: "Conflict", 413: "Content Too Large",
    422: "Unprocessable Content",
}  # fmt: skip


def _title(status: int) -> str:
    return _TITLES.get(status, "Error")
