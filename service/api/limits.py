"""Request body size limit, enforced before a handler reads the body (413)."""

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api import otlp_http
from service.api.errors import problem_response


class BodyTooLarge(Exception):
    pass


def _too_large(scope: Scope, max_bytes: int) -> Response:
    """A problem, or for an OTLP receiver the google.rpc.Status its clients read."""
    detail = f"the request body exceeds {max_bytes} bytes; the limit is the setting REPUTE_MAX_BODY_BYTES"
    request = Request(scope)
    if scope["path"] in otlp_http.OTLP_PATHS:
        return otlp_http.refusal(413, detail, otlp_http.sends_protobuf(request))
    return problem_response(request, 413, "Content Too Large", detail)


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _too_large(scope, self.max_bytes)(scope, receive, send)
            return
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except BodyTooLarge:
            if not started:
                await _too_large(scope, self.max_bytes)(scope, receive, send)
