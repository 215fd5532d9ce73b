"""The route class of every route: the caller's key and scope are checked before anything reads the
body (see service.api.auth); then bodies are parsed off the event loop when large, and with orjson:
it rejects NaN and Infinity, integers beyond 64 bits and nesting beyond its depth limit with a decode
error, which the API answers as a 400 (service/api/errors.py).

A route with a JSON body model reads the body as JSON whatever its Content-Type says (`curl -d` sends
application/x-www-form-urlencoded): a body that parses is served, one that does not is a 400, never a
confusing "Input should be a valid dictionary".
"""

from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import orjson
from fastapi import Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.routing import APIRoute
from starlette.types import Scope

from service.api.auth import required_scope, resolve_caller
from service.priority import writers_turn

_JSON = b"application/json"
Parsed = TypeVar("Parsed")
# Parsing this much takes well under a millisecond: cheaper at once than handing it to a thread.
INLINE_PARSE_BYTES = 64 * 1024


async def parse_off_loop(data: bytes, parse: Callable[[bytes], Parsed]) -> Parsed:
    """`data` as `parse` reads it; large data is parsed in a worker thread, so the event loop keeps
    serving other requests meanwhile, and in the writers' turn (every body is a write's)."""
    if len(data) <= INLINE_PARSE_BYTES:
        return parse(data)
    return await run_in_threadpool(_parse_in_turn, parse, data)


def _parse_in_turn(parse: Callable[[bytes], Parsed], data: bytes) -> Parsed:
    with writers_turn:
        return parse(data)


async def parse_body(request: Request, parse: Callable[[bytes], Parsed]) -> Parsed:
    return await parse_off_loop(await request.body(), parse)


class OrjsonRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = await parse_body(self, orjson.loads)
        return self._json


def _read_as_json(scope: Scope) -> None:
    """Says the body is JSON, so the route parses it as such."""
    headers = [(name, value) for name, value in scope["headers"] if name != b"content-type"]
    scope["headers"] = [*headers, (b"content-type", _JSON)]


class KeyFirstRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        scope = required_scope(self.dependant)
        reads_json_body = self.body_field is not None

        async def check_key_then_handle(request: Request) -> Response:
            if scope is not None:
                await resolve_caller(request, scope)
            if reads_json_body:
                _read_as_json(request.scope)
            return await handler(OrjsonRequest(request.scope, request.receive))

        return check_key_then_handle
