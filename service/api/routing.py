"""Request bodies are parsed with orjson: it rejects NaN and Infinity, integers beyond 64 bits and
nesting beyond its depth limit with a decode error, which FastAPI turns into a 422 naming the body."""

from collections.abc import Callable, Coroutine
from typing import Any

import orjson
from fastapi import Request, Response
from fastapi.routing import APIRoute


class OrjsonRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = orjson.loads(await self.body())
        return self._json


class OrjsonRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def parse_with_orjson(request: Request) -> Response:
            return await handler(OrjsonRequest(request.scope, request.receive))

        return parse_with_orjson
