"""Slow and large bodies (issue #37, service/api/inflight.py), through a live server whose settings make the
limits small: one tenant's bodies in flight are bounded (429 naming REPUTE_MAX_TENANT_BYTES_IN_FLIGHT, with
Retry-After; another tenant is not held up), a body that does not arrive in time is a 408 naming
REPUTE_BODY_READ_TIMEOUT_SECONDS, and a client that goes away mid-body is one line of the log, never a 500.
The slow bodies are sent by hand on a socket: headers, part of the body, then nothing."""

import logging
import socket
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import orjson
import pytest
from fastapi import FastAPI

from service.api.app import create_app
from service.services.keys import create_key
from service.settings import Settings
from service.store.client import Store
from service.testing.live import serve_in_thread, wait_until

BYTES_IN_FLIGHT = 200_000
TIMEOUT_SECONDS = 2.0


@pytest.fixture(scope="module")
def slow_app(embedded_store: Store, data_dir: Path) -> FastAPI:
    settings = Settings(
        data_dir=data_dir,
        max_body_bytes=160_000,
        max_tenant_bytes_in_flight=BYTES_IN_FLIGHT,
        body_read_timeout_seconds=TIMEOUT_SECONDS,
    )
    return create_app(settings, store=embedded_store)


@pytest.fixture(scope="module")
def slow_url(slow_app: FastAPI) -> Iterator[str]:
    with serve_in_thread(slow_app) as url:
        yield url


def _key(store: Store, tenant: str | None = None) -> str:
    tenant = tenant or f"t_{uuid.uuid4().hex[:12]}"
    return create_key(store, tenant, ["ingest", "read"], "slow", datetime.now(UTC)).key


def _holding(app: FastAPI, tenant: str) -> bool:
    """Whether the server reads a body of the tenant now (its bytes are held)."""
    return wait_until(lambda: app.state.inflight.held(tenant) > 0, attempts=200, interval=0.02)


def _slow_body(url: str, key: str, path: str, declared: int, sent: bytes) -> socket.socket:
    """A request whose body is declared `declared` bytes long, of which only `sent` is sent (for now)."""
    where = urlsplit(url)
    connection = socket.create_connection((where.hostname, where.port))
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {where.netloc}\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {declared}\r\n\r\n"
    )
    connection.sendall(head.encode() + sent)
    return connection


def _answer(connection: socket.socket) -> bytes:
    connection.settimeout(30)
    received = b""
    while b"\r\n\r\n" not in received or not received.rstrip().endswith(b"}"):
        chunk = connection.recv(65536)
        if not chunk:
            break
        received += chunk
    return received


def _run(run_id: str, padding: int) -> bytes:
    event = {"event": "tool_call", "tool": "search", "args": {"q": "x"}}
    return orjson.dumps(
        {"run_id": run_id, "identity": "agent-slow", "metadata": {"p": "x" * padding}, "events": [event]}
    )


def test_a_tenants_bodies_in_flight_are_bounded_and_another_tenant_is_not_held_up(
    slow_app: FastAPI, slow_url: str, embedded_store: Store
) -> None:
    """Broken on purpose: `InFlight.hold` always True (no bound: the second body is read and waits), or the
    bytes never released in `body_in_flight`'s finally (the tenant's later run is refused) → this test fails."""
    tenant = f"t_{uuid.uuid4().hex[:12]}"
    key_a, key_b = _key(embedded_store, tenant), _key(embedded_store)
    held = _slow_body(slow_url, key_a, "/v1/sessions", 150_000, b'{"run_id": ')
    try:
        assert _holding(slow_app, tenant)
        with httpx.Client(base_url=slow_url, headers={"Authorization": f"Bearer {key_a}"}, timeout=60) as tenant_a:
            refused = tenant_a.post("/v1/sessions", content=_run("a-second", 100_000))
            assert refused.status_code == 429, refused.text
            assert refused.headers["content-type"] == "application/problem+json"
            assert refused.headers["retry-after"] == "1"
            assert "the limit is the setting REPUTE_MAX_TENANT_BYTES_IN_FLIGHT" in refused.json()["detail"]
            otlp = tenant_a.post(
                "/v1/traces", content=b"{}" + b" " * 100_000, headers={"content-type": "application/json"}
            )
            assert otlp.status_code == 429 and "REPUTE_MAX_TENANT_BYTES_IN_FLIGHT" in otlp.json()["message"]
            with httpx.Client(base_url=slow_url, headers={"Authorization": f"Bearer {key_b}"}, timeout=60) as other:
                assert other.post("/v1/sessions", content=_run("b-run", 100_000)).status_code == 201
            assert tenant_a.get("/v1/runs/a-second").status_code == 404  # the refused request wrote nothing
            assert b" 408 " in _answer(held).split(b"\r\n")[0]  # the slow body timed out, and its bytes went
            assert tenant_a.post("/v1/sessions", content=_run("a-later", 100_000)).status_code == 201
    finally:
        held.close()


def test_a_body_that_does_not_arrive_in_time_is_a_408_naming_the_setting(slow_url: str, embedded_store: Store) -> None:
    """Broken on purpose: `asyncio.wait_for(receive(), ...)` → `await receive()` (no timeout: the request
    waits for its body forever) → this test fails."""
    for path in ("/v1/sessions", "/v1/logs"):
        connection = _slow_body(slow_url, _key(embedded_store), path, 1000, b'{"resource')
        try:
            answer = _answer(connection)
        finally:
            connection.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408 "), answer[:300]
        assert b"the limit is the setting REPUTE_BODY_READ_TIMEOUT_SECONDS" in body


def test_a_client_going_away_mid_body_is_one_line_of_the_log(
    slow_app: FastAPI, slow_url: str, embedded_store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    """Broken on purpose: the `except ClientDisconnect` of the route class removed (Starlette's error reaches
    the 500 handler, which logs a traceback) → this test fails."""
    caplog.set_level(logging.INFO)
    tenant = f"t_{uuid.uuid4().hex[:12]}"
    connection = _slow_body(slow_url, _key(embedded_store, tenant), "/v1/sessions", 5000, b'{"run_id": "gone"')
    assert _holding(slow_app, tenant)
    connection.close()
    assert wait_until(lambda: any("went away" in r.getMessage() for r in caplog.records), attempts=100)
    gone = [r for r in caplog.records if "went away" in r.getMessage()]
    assert len(gone) == 1 and gone[0].exc_info is None and "POST /v1/sessions" in gone[0].getMessage()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
