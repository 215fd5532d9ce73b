"""Request body size limit, enforced before a handler reads the body (413)."""

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api.errors import PROBLEM_TYPE


class BodyTooLarge(Exception):
    pass


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
            await self._reject(scope, send)
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
                await self._reject(scope, send)

    async def _reject(self, scope: Scope, send: Send) -> None:
        body = orjson.dumps(
            {
                "type": "about:blank",
                "title": "Content Too Large",
                "status": 413,
                "detail": f"the request body exceeds {self.max_bytes} bytes",
                "instance": scope.get("path", ""),
            }
        )
        headers = [(b"content-type", PROBLEM_TYPE.encode()), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})
