"""Counts the requests that read (GET, HEAD) while they are in flight, so the write path steps aside
for them (`service.priority`)."""

from starlette.types import ASGIApp, Receive, Scope, Send

from service.priority import reads

READING = frozenset({"GET", "HEAD"})


class ReadsFirstMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in READING:
            await self.app(scope, receive, send)
            return
        with reads.reading():
            await self.app(scope, receive, send)
