"""The route class of every route: the caller's key and scope are checked before anything reads the
body (see service.api.auth); then bodies are parsed in the write pool when large (every body is a
write's: service.api.writes, in the caller's tenant's turn), and with orjson:
it rejects NaN and Infinity, integers beyond 64 bits and nesting beyond its depth limit with a decode
error, which the API answers as a 400 (service/api/errors.py).

A route with a JSON body model reads the body as JSON whatever its Content-Type says (`curl -d` sends
application/x-www-form-urlencoded): a body that parses is served, one that does not is a 400, never a
confusing "Input should be a valid dictionary". A body sent with `Content-Encoding: gzip` is read
inflated on every route (the OTLP receivers inflate their own); another encoding is a 415 naming it.
"""

from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any, TypeVar

import orjson
from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.requests import ClientDisconnect
from starlette.types import Scope

from service.api.auth import CALLER, required_scope, resolve_caller
from service.api.encoding import GZIP, UnsupportedEncoding, body_encoding
from service.api.errors import Problem
from service.api.inflight import body_in_flight, went_away
from service.api.otlp_http import OTLP_PATHS
from service.otlp.attributes import InflatedTooLarge, OTLPDecodeError
from service.otlp.gzip import gunzip_body

_JSON = b"application/json"
_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})
CLIENT_WENT_AWAY = 499  # never delivered: the status the access log shows for a client that left mid-body
Parsed = TypeVar("Parsed")
# Parsing this much takes well under a millisecond: cheaper at once than handing it to a thread.
INLINE_PARSE_BYTES = 64 * 1024


async def parse_off_loop(request: Request, data: bytes, parse: Callable[[bytes], Parsed]) -> Parsed:
    """`data` as `parse` reads it; large data is parsed in the write pool, in the caller's tenant's turn,
    so the event loop keeps serving other requests meanwhile and no thread the reads need waits."""
    if len(data) <= INLINE_PARSE_BYTES:
        return parse(data)
    return await request.app.state.writes.run(request.scope[CALLER].tenant, partial(parse, data))


async def parse_body(request: Request, parse: Callable[[bytes], Parsed]) -> Parsed:
    return await parse_off_loop(request, await request.body(), parse)


class OrjsonRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = await parse_body(self, orjson.loads)
        return self._json

    async def inflate(self, max_bytes: int) -> None:
        """From now on the body reads inflated (Content-Encoding: gzip), within `max_bytes` as the OTLP
        receivers' bodies; 413 past it, 400 when it is not gzip. An empty body stays empty."""
        data = await self.body()
        if not data:
            return
        try:
            inflated = await parse_off_loop(self, data, partial(gunzip_body, max_bytes=max_bytes))
        except InflatedTooLarge as exc:
            raise Problem(413, "Content Too Large", f"{exc}; the limit is the setting REPUTE_MAX_BODY_BYTES") from exc
        except OTLPDecodeError as exc:
            raise Problem(400, "Bad Request", str(exc), field="body") from exc
        self._body = inflated  # where Starlette's Request keeps the body it read, for body(), json() and stream()


async def _decoded(request: OrjsonRequest) -> OrjsonRequest:
    """The request, its body inflated if it came with gzip; another Content-Encoding is a 415."""
    try:
        encoding = body_encoding(request)
    except UnsupportedEncoding as exc:
        raise Problem(415, "Unsupported Media Type", str(exc), field="header.content-encoding") from exc
    if encoding == GZIP:
        await request.inflate(request.app.state.settings.max_body_bytes)
    return request


def _read_as_json(scope: Scope) -> None:
    """Says the body is JSON, so the route parses it as such."""
    headers = [(name, value) for name, value in scope["headers"] if name != b"content-type"]
    scope["headers"] = [*headers, (b"content-type", _JSON)]


class KeyFirstRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        scope = required_scope(self.dependant)
        reads_json_body = self.body_field is not None
        decodes_its_body = self.path in OTLP_PATHS  # the OTLP receivers inflate while decoding

        async def check_key_then_handle(request: Request) -> Response:
            if scope is None:
                return await handler(request)
            await resolve_caller(request, scope)
            if reads_json_body:
                _read_as_json(request.scope)
            own = OrjsonRequest(request.scope, request.receive)
            state = request.app.state
            timeout = state.settings.body_read_timeout_seconds
            try:
                async with body_in_flight(own, request.scope[CALLER].tenant, state.inflight, timeout):
                    if request.method in _WITH_BODY:
                        await own.body()  # read here, within the limits, before any handler reads it
                    return await handler(own if decodes_its_body else await _decoded(own))
            except ClientDisconnect as gone:
                went_away(own, gone)
                return Response(status_code=CLIENT_WENT_AWAY)

        return check_key_then_handle
