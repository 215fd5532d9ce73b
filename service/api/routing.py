"""Request bodies are parsed with orjson: it rejects NaN and Infinity, integers beyond 64 bits and
nesting beyond its depth limit with a decode error, which the API answers as a 400 (service/api/errors.py).

A route with a JSON body model reads the body as JSON whatever its Content-Type says (`curl -d` sends
application/x-www-form-urlencoded): a body that parses is served, one that does not is a 400, never a
confusing "Input should be a valid dictionary".
"""

from collections.abc import Callable, Coroutine
from typing import Any

import orjson
from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.types import Scope

_JSON = b"application/json"


class OrjsonRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = orjson.loads(await self.body())
        return self._json


def _read_as_json(scope: Scope) -> None:
    """Says the body is JSON, so the route parses it as such."""
    headers = [(name, value) for name, value in scope["headers"] if name != b"content-type"]
    scope["headers"] = [*headers, (b"content-type", _JSON)]


class OrjsonRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        reads_json_body = self.body_field is not None

        async def parse_with_orjson(request: Request) -> Response:
            if reads_json_body:
                _read_as_json(request.scope)
            return await handler(OrjsonRequest(request.scope, request.receive))

        return parse_with_orjson
