"""What the middlewares that watch requests (metrics, access log) need: the status a response started
with and how long the request took."""

import time

from starlette.types import Message, Send


class WatchedResponse:
    """Wraps `send`: records the response's status (500 until one starts) and its start time."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.status = 500
        self.started = time.perf_counter()

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
        await self._send(message)

    def seconds(self) -> float:
        return time.perf_counter() - self.started
