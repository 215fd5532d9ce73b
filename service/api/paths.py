"""Paths that name nothing. Route patterns end in `$`, which also matches before a trailing newline,
so `/v1/runs/agent%0A` would read run `agent`; no identifier holds a control character, so a path
with one is answered 404 before any route sees it."""

import re

from starlette.types import ASGIApp, Receive, Scope, Send

from service.api.errors import send_problem

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class ControlCharacterGuard:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and _CONTROL.search(scope["path"]):
            await send_problem(scope, receive, send, 404, "no resource at this path")
            return
        await self.app(scope, receive, send)
