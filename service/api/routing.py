"""The route class of every route: the caller's key and scope are checked before anything reads the
body (see service.api.auth); then bodies are parsed off the event loop when large, and with orjson:
it rejects NaN and Infinity, integers beyond 64 bits and nesting beyond its depth limit with a decode
error, which FastAPI turns into a 422 naming the body."""

from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import orjson
from fastapi import Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.routing import APIRoute

from service.api.auth import required_scope, resolve_caller

Parsed = TypeVar("Parsed")
# Parsing this much takes well under a millisecond: cheaper at once than handing it to a thread.
INLINE_PARSE_BYTES = 64 * 1024


async def parse_body(request: Request, parse: Callable[[bytes], Parsed]) -> Parsed:
    """The body as `parse` reads it; a large one is parsed in a worker thread, so the event loop
    keeps serving other requests meanwhile."""
    body = await request.body()
    if len(body) <= INLINE_PARSE_BYTES:
        return parse(body)
    return await run_in_threadpool(parse, body)


class OrjsonRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = await parse_body(self, orjson.loads)
        return self._json


class KeyFirstRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        scope = required_scope(self.dependant)

        async def check_key_then_handle(request: Request) -> Response:
            if scope is not None:
                await resolve_caller(request, scope)
            return await handler(OrjsonRequest(request.scope, request.receive))

        return check_key_then_handle
