"""One structured access log line per request (JSON on the `repute.access` logger) and a request id.

The id is the caller's `X-Request-ID` when it is a sane token (1–128 characters of `A-Z a-z 0-9 . _ : @
/ + = -`), else a new one; it is answered as `X-Request-ID` on every response, problems and 413s
included, and kept in the request's state so handlers can name it. The tenant is logged once auth has
resolved the key (service/api/deps.py records it in the same state).
"""

import logging
import re
import sys
import uuid
from datetime import UTC, datetime
from typing import Any

import orjson
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api.watch import WatchedResponse

REQUEST_ID_HEADER = "X-Request-ID"
_SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:@/+=\-]{1,128}$")
log = logging.getLogger("repute.access")


def request_id_of(scope: Scope) -> str:
    """The caller's request id when it is sane, else a new one."""
    given = dict(scope.get("headers") or []).get(REQUEST_ID_HEADER.lower().encode(), b"").decode("latin-1")
    return given if _SANE_REQUEST_ID.match(given) else uuid.uuid4().hex


class AccessLogMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        state["request_id"] = request_id = request_id_of(scope)

        async def with_request_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = request_id
            await send(message)

        response = WatchedResponse(with_request_id)
        try:
            await self.app(scope, receive, response.send)
        finally:
            log.info(access_line(scope, response.status, response.seconds()))


def access_line(scope: Scope, status: int, seconds: float) -> str:
    state: dict[str, Any] = scope.get("state", {})
    entry = {
        "time": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "method": scope["method"],
        "path": scope["path"],
        "status": status,
        "duration_ms": round(seconds * 1000, 1),
        "tenant": state.get("tenant"),
        "request_id": state.get("request_id"),
    }
    return orjson.dumps(entry).decode()


def configure_access_log() -> None:
    """Access lines go to stdout as they are (one JSON object a line) when the server runs."""
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
