"""Request bodies in flight (SPEC §13; issue #37): one tenant's bodies being read or handled hold at most
REPUTE_MAX_TENANT_BYTES_IN_FLIGHT bytes at once (429 with Retry-After past it), and a body arrives whole
within REPUTE_BODY_READ_TIMEOUT_SECONDS of its request's start (408 past it). So a tenant's flood of
large or slow bodies queues in its clients, not in the server's memory, and its backlog stays small enough
to end soon after the flood does.

A body declared with Content-Length holds its length from the start, so a request over the tenant's room
is refused before a byte of it is read (the server reads a body only as the app asks for it); a chunked
body holds its bytes as they come. Held until the request's handler has answered. A client that goes
away mid-body is one line of the log, not an error (`ClientDisconnect`).
"""

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.requests import ClientDisconnect, Request
from starlette.types import Message

from service.api import otlp_http
from service.api.errors import Problem

log = logging.getLogger("repute.api")
RETRY_AFTER_SECONDS = 1
TIMEOUT_SETTING = "REPUTE_BODY_READ_TIMEOUT_SECONDS"
BYTES_SETTING = "REPUTE_MAX_TENANT_BYTES_IN_FLIGHT"


class InFlight:
    """The bytes each tenant's request bodies hold now (the event loop's: no lock)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._held: dict[str, int] = {}

    def held(self, tenant: str) -> int:
        return self._held.get(tenant, 0)

    def hold(self, tenant: str, count: int) -> bool:
        """Holds `count` more bytes for the tenant, unless that goes past the limit (then holds none). A
        tenant holding nothing may always take one body, whatever its size (the body limit bounds it)."""
        held = self.held(tenant)
        if held and held + count > self.limit:
            return False
        self._held[tenant] = held + count
        return True

    def release(self, tenant: str, count: int) -> None:
        left = self.held(tenant) - count
        if left > 0:
            self._held[tenant] = left
        else:
            self._held.pop(tenant, None)


def refusal(request: Request, status: int, title: str, detail: str, headers: dict[str, str]) -> Exception:
    """The refusal of a request's body: a google.rpc.Status on an OTLP receiver, else a problem."""
    if request.url.path in otlp_http.OTLP_PATHS:
        return otlp_http.Refused(status, detail, otlp_http.sends_protobuf(request), headers)
    return Problem(status, title, detail, headers=headers)


def _declared_length(request: Request) -> int | None:
    declared = request.headers.get("content-length", "")
    return int(declared) if declared.isdigit() else None


@asynccontextmanager
async def body_in_flight(request: Request, tenant: str, inflight: InFlight, timeout: float) -> AsyncIterator[None]:
    """Within it the request's body is read (`request.body()`) within the tenant's bytes and the timeout;
    raises the refusal (429, 408) for the app's handlers to answer."""
    held = 0

    def hold(count: int) -> None:
        nonlocal held
        if not inflight.hold(tenant, count):
            detail = (
                f"tenant {tenant} has {inflight.held(tenant)} bytes of request bodies in flight and this request"
                f" would add {count}; the limit is the setting {BYTES_SETTING} ({inflight.limit}); retry after"
                f" {RETRY_AFTER_SECONDS} s"
            )
            raise refusal(request, 429, "Too Many Requests", detail, {"Retry-After": str(RETRY_AFTER_SECONDS)})
        held += count

    declared = _declared_length(request)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    receive, complete = request.receive, False

    async def within_limits() -> Message:
        nonlocal complete
        if complete:
            return await receive()
        try:
            message = await asyncio.wait_for(receive(), max(deadline - loop.time(), 0))
        except TimeoutError:
            detail = f"the body did not arrive whole within {timeout:g} s; the limit is the setting {TIMEOUT_SETTING}"
            raise refusal(request, 408, "Request Timeout", detail, {"Connection": "close"}) from None
        if message["type"] == "http.request":
            complete = not message.get("more_body", False)
            if declared is None:
                hold(len(message.get("body", b"")))
        return message

    if declared:
        hold(declared)
    request._receive = within_limits  # where Starlette's Request reads the body from
    try:
        yield
    finally:
        inflight.release(tenant, held)


def went_away(request: Request, error: ClientDisconnect) -> None:
    """A client that disconnected before its body arrived whole: one line, no traceback."""
    tenant = getattr(request.state, "tenant", None) or "-"
    log.warning("client went away mid-body: %s %s (tenant %s)", request.method, request.url.path, tenant)
