"""One tenant's flood never holds up another tenant's writes beyond its fair share (SPEC §13): while tenant
A's batches, large bodies and conflicting runs queue, tenant B's single run is served after at most the
job A has running. Asserted as an order (how much of A's flood was done when B's answer came), never as a
duration."""

import random
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import httpx
import orjson
import pytest

from service.api.app import create_app
from service.services.keys import create_key
from service.settings import Settings
from service.store.client import Store
from service.testing.factory import make_session
from service.testing.live import serve_in_thread, wait_until

FLOOD = 24


@pytest.fixture(scope="module", params=[1, 3], ids=["one write at a time", "three at a time"])
def fair_url(request: pytest.FixtureRequest, embedded_store: Store, data_dir) -> Iterator[str]:
    """A server whose tenants run `write_concurrency` writes at once while alone (one while another tenant
    has work), with one worker more: with three, the turn order between the tenants decides who runs."""
    settings = Settings(data_dir=data_dir, write_concurrency=request.param)
    with serve_in_thread(create_app(settings, store=embedded_store)) as url:
        yield url


def _client(url: str, store: Store, tenant: str) -> httpx.Client:
    key = create_key(store, tenant, ["ingest", "read"], "fairness", datetime.now(UTC)).key
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=300)


def _flood_request(number: int) -> tuple[str, bytes]:
    """A batch of 60 runs, a body of about 1 MiB, or a run conflicting with one stored already."""
    rng = random.Random(number)
    if number % 3 == 0:
        runs = [make_session(rng, f"flood-{number}-{i}", "agent-a", 50) for i in range(60)]
        return "/v1/sessions/batch", orjson.dumps(runs)
    if number % 3 == 1:
        big = make_session(rng, f"big-{number}", "agent-a", 50)
        big["metadata"] = {"padding": "x" * 1_000_000}
        return "/v1/sessions", orjson.dumps(big)
    return "/v1/sessions", orjson.dumps(make_session(rng, "conflicting", "agent-a", 5 + number))


def test_a_flooding_tenant_does_not_hold_up_another_tenants_write(fair_url: str, embedded_store: Store) -> None:
    flooder = _client(fair_url, embedded_store, f"t_a_{uuid.uuid4().hex[:8]}")
    other = _client(fair_url, embedded_store, f"t_b_{uuid.uuid4().hex[:8]}")
    done, lock = [0], threading.Lock()

    def flood(number: int) -> int:
        path, body = _flood_request(number)
        status = flooder.post(path, content=body).status_code
        with lock:
            done[0] += 1
        return status

    with ThreadPoolExecutor(FLOOD) as pool:
        statuses = [pool.submit(flood, number) for number in range(FLOOD)]
        assert wait_until(lambda: done[0] > 0, attempts=6000, interval=0.05)  # the flood is in and queued
        single = other.post(
            "/v1/sessions", content=orjson.dumps(make_session(random.Random(1), "b-run", "agent-b", 50))
        )
        with lock:
            flood_done_then = done[0]
        answers = [future.result() for future in statuses]
    assert single.status_code == 201, single.text
    assert flood_done_then < FLOOD // 2, f"tenant B's run waited for {flood_done_then} of {FLOOD} flood requests"
    assert set(answers) <= {200, 201, 409}, answers  # the conflicting runs are refused alone
    assert other.get("/v1/runs/b-run").json()["status"] == "finalized"
