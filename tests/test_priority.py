"""Reads first (service.priority): the write path's Python steps aside only while reads are in flight, the
API counts its reads (GET, HEAD) exactly while they run, and only the engine work of a job that gives way
runs at the lowest OS priority."""

import asyncio
import sys
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from service import priority
from service.api.app import create_app
from service.api.reads_first import ReadsFirstMiddleware
from service.priority import JobAnswers, lowered, reads, step_aside, stepping_aside, yielding
from service.settings import Settings
from service.store.client import Store
from service.testing.clock import FakeClock


def test_writers_step_aside_only_while_reads_are_in_flight(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []
    monkeypatch.setattr(priority, "time", SimpleNamespace(sleep=pauses.append))  # this module's clock only
    assert stepping_aside(str, range(3)) == ["0", "1", "2"]
    assert pauses == []
    with reads.reading():
        stepping_aside(str, range(3))
    assert pauses == [0, 0, 0]
    assert reads.count == 0


def test_a_paused_write_goes_on_when_the_last_read_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that gives way sleeps while a read is in flight and wakes when the last read ends, not when
    its pause runs out (nor by polling). Broken on purpose: `calmed()` left out of `ReadsInFlight.reading` →
    the write sleeps its whole pause → this test fails."""
    monkeypatch.setattr(priority, "PAUSE_SECONDS", 60.0)
    done = threading.Event()

    def write() -> None:
        with yielding(JobAnswers(behind=lambda: reads.count > 0, lowered=lambda: True)):
            step_aside()
        done.set()

    writer = threading.Thread(target=write)
    with reads.reading():
        writer.start()
        assert not done.wait(0.2)  # paused while the read runs
    assert done.wait(10)
    writer.join(10)


class _Waits(threading.Condition):
    """The paused write's condition: records each wait's timeout and lets that much time pass at once on a clock
    that moves only then."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__()
        self.clock = clock
        self.timeouts: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.timeouts.append(timeout)
        if len(self.timeouts) > 10:
            raise AssertionError(f"the paused write waits again and again: {self.timeouts}")
        self.clock.sleep(timeout or 0)
        return False


def test_a_flooding_write_pauses_at_a_step_until_its_bound_and_no_longer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that gives way and is never calmed waits at one step for what is left of PAUSE_SECONDS, then
    goes on. Broken on purpose: the time left computed as `deadline + now`, or the loop going on while `left
    > -1` (or `>= 0`), or never (`left > 1`, PAUSE_SECONDS negative) -> this test fails."""
    clock = FakeClock()
    waits = _Waits(clock)
    monkeypatch.setattr(priority, "time", clock)
    monkeypatch.setattr(priority, "_calm", waits)
    with yielding(JobAnswers(behind=lambda: True, lowered=lambda: True)):
        step_aside()
    assert waits.timeouts == [pytest.approx(priority.PAUSE_SECONDS)]


def test_a_long_loop_steps_aside_before_every_steps_worth_of_items(monkeypatch: pytest.MonkeyPatch) -> None:
    """Broken on purpose: the step taken at another remainder than 0 (`!=`, `== 1`, `== -1`) or by a floor
    division -> this test fails."""
    seen: list[object] = []
    monkeypatch.setattr(priority, "time", SimpleNamespace(sleep=lambda _: seen.append("aside")))
    with reads.reading():
        for item in priority.stepping(range(10), every=4):
            seen.append(item)
    assert seen == ["aside", 0, 1, 2, 3, "aside", 4, 5, 6, 7, "aside", 8, 9]


async def _count_seen(request: Request) -> JSONResponse:
    if request.url.path == "/boom":
        raise RuntimeError("handler failed")
    return JSONResponse({"reads": reads.count})


def _app() -> ReadsFirstMiddleware:
    routes = [Route(path, _count_seen, methods=["GET", "HEAD", "POST"]) for path in ("/seen", "/boom")]
    return ReadsFirstMiddleware(Starlette(routes=routes))


def test_reads_are_counted_while_they_run_and_writes_are_not() -> None:
    async def scenario() -> None:
        transport = httpx.ASGITransport(app=_app(), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            assert (await client.get("/seen")).json() == {"reads": 1}
            assert reads.count == 0
            assert (await client.post("/seen")).json() == {"reads": 0}
            assert (await client.head("/seen")).status_code == 200
            assert (await client.get("/boom")).status_code == 500

    asyncio.run(scenario())
    assert reads.count == 0


def test_the_service_counts_its_reads(tmp_path: Path) -> None:
    app = create_app(Settings(data_dir=tmp_path))
    assert ReadsFirstMiddleware in [middleware.cls for middleware in app.user_middleware]


def test_the_service_serves_with_its_switch_interval(embedded_store: Store, tmp_path: Path) -> None:
    """While the app serves, a thread holding the interpreter's lock hands it over to a waiting one after
    REPUTE_SWITCH_INTERVAL_MS; the interval before is restored when it stops."""
    before = sys.getswitchinterval()
    app = create_app(Settings(data_dir=tmp_path, switch_interval_ms=0.25), store=embedded_store)
    serving: list[float] = []

    async def serve_and_stop() -> None:
        async with app.router.lifespan_context(app):
            serving.append(sys.getswitchinterval())

    asyncio.run(serve_and_stop())
    assert serving == [pytest.approx(0.00025)]
    assert sys.getswitchinterval() == before


def _inserted_priorities(store: Store, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The os_thread_priority each insert of this thread's client asks for (None: the default), recorded on
    the way to the real engine."""
    seen: list[object] = []
    client = store.client
    create = client.create_insert_context

    def recorded(*args: Any, **kwargs: Any) -> Any:
        seen.append((kwargs.get("settings") or {}).get("os_thread_priority"))
        return create(*args, **kwargs)

    monkeypatch.setattr(client, "create_insert_context", recorded)
    return seen


def test_only_the_inserts_of_a_job_that_gives_way_run_at_the_lowest_priority(
    fresh_database: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A background job's or a flooding tenant's insert runs at nice 19 on the embedded engine; another
    tenant's write, and a write no pool schedules, at the engine's own priority, so that the flood's inserts
    do not hold it up (SPEC §13). Broken on purpose: `lowered()` ignored in Store.insert (every insert at 19,
    or none) → this test fails."""
    store = fresh_database
    store.client.command("CREATE TABLE given_way (a UInt64) ENGINE = MergeTree ORDER BY a")
    seen = _inserted_priorities(store, monkeypatch)
    store.insert("given_way", [[1]], ["a"])
    with yielding(JobAnswers(behind=lambda: False, lowered=lambda: True)):
        store.insert("given_way", [[2]], ["a"])
    with yielding(JobAnswers(behind=lambda: False, lowered=lambda: False)):
        store.insert("given_way", [[3]], ["a"])
    assert seen == [None, 19, None]
    assert store.client.query("SELECT count() FROM given_way").result_rows == [(3,)]


def test_the_statements_run_beside_a_job_carry_its_answers(embedded_store: Store) -> None:
    """Store.together runs a job's statements on threads of their own: each gives way as the job does.
    Broken on purpose: `carried(call)` → `call` in Store.together → this test fails."""
    seen: list[bool] = []
    with yielding(JobAnswers(behind=lambda: False, lowered=lambda: True)):
        embedded_store.together(lambda: seen.append(lowered()), lambda: seen.append(lowered()))
    embedded_store.together(lambda: seen.append(lowered()), lambda: seen.append(lowered()))
    assert seen == [True, True, False, False]
