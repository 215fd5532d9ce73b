"""The server's background jobs (service/api/background.py) in the write pool: each queued in its tenant's
turn and never waited on, so one tenant's slow finalize holds up no other tenant's sweep or settle (SPEC
§13, issue #37); a run that cannot be finalized is closed, never retried forever; a worker whose scheduling
fails is replaced. Orders are asserted (what was done while a tenant's job was held), never durations."""

import logging
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import orjson
import pytest

from service.api import background
from service.api.metrics import Metrics
from service.api.writes import Writes
from service.services import assembly, finalize
from service.services.receivers import otlp_traces as trace_service
from service.settings import Settings
from service.store import runs as run_store
from service.store.client import Store
from service.testing.live import wait_until
from service.traces import DecodedSpans
from service.vocab import RunKind
from tests.traces_support import make_span

JSON = {"content-type": "application/json"}


@pytest.fixture
def pool() -> Iterator[Writes]:
    """Two workers, one job at a time per tenant while another has work."""
    writes = Writes(workers=2, per_tenant=1)
    yield writes
    writes.stop()


def _held(pool: Writes, tenant: str) -> threading.Event:
    """A job of `tenant` running in the pool until the returned gate opens: its next jobs queue behind it."""
    gate, started = threading.Event(), threading.Event()
    pool.submit(tenant, lambda: started.set() or gate.wait(60))
    assert started.wait(30)
    return gate


def _status(store: Store, tenant: str, run_id: str) -> str | None:
    run = run_store.get_run(store, tenant, run_id)
    return None if run is None else run.status


def _session_posted(client: httpx.Client) -> str:
    session_id = f"s-{uuid.uuid4().hex}"
    attributes = [{"key": "session.id", "value": {"stringValue": session_id}}]
    record = {"timeUnixNano": "1763700000000000000", "eventName": "claude_code.user_prompt", "attributes": attributes}
    body = {"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]}
    assert client.post("/v1/logs", content=orjson.dumps(body), headers=JSON).status_code == 200
    return session_id


def test_a_sweep_queues_each_run_in_its_tenants_turn_and_waits_for_none(
    make_client: Callable[[str], httpx.Client], embedded_store: Store, data_dir: Path, pool: Writes
) -> None:
    """Tenant A's session waits behind A's running job; B's is finalized meanwhile. Broken on purpose: the
    sweep waiting for each job's answer (`.result()`, as it once did) never reaches B while A is held."""
    slow, quick = f"a_{uuid.uuid4().hex[:12]}", f"b_{uuid.uuid4().hex[:12]}"
    slow_run, quick_run = _session_posted(make_client(slow)), _session_posted(make_client(quick))
    gate = _held(pool, slow)
    settings = Settings(data_dir=data_dir, session_idle_minutes=0)
    try:
        background.sweep(lambda: embedded_store, settings, Metrics(), pool, datetime.now(UTC) + timedelta(seconds=1))
        assert wait_until(lambda: _status(embedded_store, quick, quick_run) == "finalized")
        assert _status(embedded_store, slow, slow_run) == "open"  # still queued behind A's held job
    finally:
        gate.set()
    assert wait_until(lambda: _status(embedded_store, slow, slow_run) == "finalized")


def test_a_run_queued_or_running_is_not_queued_again(pool: Writes) -> None:
    gate = _held(pool, "a")
    done: list[object] = []
    try:
        assert pool.submit_once("a", ("finalize", "r1"), lambda: "first", done.append)
        assert not pool.submit_once("a", ("finalize", "r1"), lambda: "again", done.append)  # still queued
        assert pool.submit_once("b", ("finalize", "r1"), lambda: "b's", done.append)  # keys are per tenant
    finally:
        gate.set()
    assert wait_until(lambda: len(done) == 2)
    assert sorted(future.result() for future in done) == ["b's", "first"]  # type: ignore[attr-defined]
    assert pool.submit_once("a", ("finalize", "r1"), lambda: "later", done.append)  # done: may come again


def _rooted_trace(store: Store, tenant: str, data_dir: Path) -> str:
    """A one-span trace stored by the receiver (not through the live server, whose own timer would settle
    it): its run id."""
    trace_id = uuid.uuid4().bytes
    span = make_span(1, trace_id=trace_id, attributes={"gen_ai.operation.name": "invoke_agent"})
    settings = Settings(data_dir=data_dir)
    received = trace_service.receive(store, tenant, DecodedSpans([span]), datetime.now(UTC), settings)
    assert received.rooted_runs == {trace_id.hex()}
    return trace_id.hex()


def test_one_tenants_held_settle_holds_up_no_other_tenants(embedded_store: Store, data_dir: Path, pool: Writes) -> None:
    """A's settle check waits behind A's running job; B's run settles meanwhile. Broken on purpose: the
    timer waiting for each check's answer settles nothing after A's until A's job ends."""
    slow, quick = f"a_{uuid.uuid4().hex[:12]}", f"b_{uuid.uuid4().hex[:12]}"
    slow_run, quick_run = (_rooted_trace(embedded_store, tenant, data_dir) for tenant in (slow, quick))
    settings = Settings(data_dir=data_dir, trace_settle_seconds=0)
    timer = background.settle_timer(lambda: embedded_store, settings, Metrics(), pool).start()
    gate = _held(pool, slow)
    try:
        now = datetime.now(UTC)
        timer.at((slow, slow_run), now)
        timer.at((quick, quick_run), now + timedelta(milliseconds=1))
        assert wait_until(lambda: _status(embedded_store, quick, quick_run) == "finalized")
        assert _status(embedded_store, slow, slow_run) is None  # its check still queued
    finally:
        gate.set()
    assert wait_until(lambda: _status(embedded_store, slow, slow_run) == "finalized")
    timer.stop()


def test_a_span_sent_while_its_run_settles_waits_and_is_refused(
    embedded_store: Store, data_dir: Path, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The settle check and its finalize hold the run's lock, as a request storing spans does: the traces the
    check read are those finalized, and a span of another trace naming the run's conversation, sent while the
    run is finalized, waits and is then refused (the run is finalized), never acknowledged and left out of
    the diagnosis. Broken on purpose: `finalize_if_settled` without `run_lock` → the request stores its span
    meanwhile → this test fails."""
    conversation = f"conv-{uuid.uuid4().hex}"
    named = {"gen_ai.operation.name": "chat", "gen_ai.conversation.id": conversation}
    settings, now = Settings(data_dir=data_dir), datetime.now(UTC)
    root = make_span(1, trace_id=uuid.uuid4().bytes, attributes=named)
    late = make_span(2, trace_id=uuid.uuid4().bytes, attributes=named)
    trace_service.receive(embedded_store, tenant, DecodedSpans([root]), now, settings)
    finalizing, go, entered = threading.Event(), threading.Event(), threading.Event()
    material, locks = assembly._trace, trace_service.holding

    def held(*args: object) -> list[assembly.Finalizing]:
        finalizing.set()
        assert go.wait(30)
        return material(*args)  # type: ignore[arg-type]

    @contextmanager
    def holding_told(tenant: str, run_ids: Sequence[str]) -> Iterator[None]:
        with locks(tenant, run_ids):
            entered.set()
            yield

    monkeypatch.setattr(assembly, "_trace", held)
    monkeypatch.setattr(trace_service, "holding", holding_told)
    settled = now + timedelta(seconds=1)
    args = (embedded_store, tenant, conversation, settled, timedelta(0), 0.5)
    settle = threading.Thread(target=trace_service.finalize_if_settled, args=args)
    settle.start()
    assert finalizing.wait(30)
    received: list[trace_service.TracesReceived] = []
    sender = threading.Thread(
        target=lambda: received.append(
            trace_service.receive(embedded_store, tenant, DecodedSpans([late]), now, settings)
        )
    )
    sender.start()
    assert not entered.wait(1)  # it waits for the run's lock
    go.set()
    settle.join(30)
    sender.join(30)
    assert _status(embedded_store, tenant, conversation) == "finalized"
    assert (received[0].accepted, received[0].rejected) == (0, 1)


def test_a_run_whose_finalize_fails_unexpectedly_is_closed_not_retried(
    embedded_store: Store,
    data_dir: Path,
    tenant: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A trace-born run (no row before its finalize) whose diagnosis raises: closed as an execution error
    of the evaluator naming the fault, under identity `unknown`, and no longer due; the warning carries the
    traceback, since the fault is a defect to find. Broken on purpose: re-raising (left open, due again
    every pass), or `finalize_or_close` logging with exc_info=False → this test fails."""
    caplog.set_level(logging.WARNING, logger="repute.finalize")
    run_id = _rooted_trace(embedded_store, tenant, data_dir)

    def broken(*_: object) -> None:
        raise RuntimeError("a defect in the diagnosis")

    monkeypatch.setattr(assembly, "_trace", broken)
    monkeypatch.setitem(assembly._LOADERS, RunKind.TRACE, broken)
    now = datetime.now(UTC) + timedelta(minutes=1)
    assert finalize.finalize_or_close(embedded_store, tenant, run_id, now, 0.8) is False
    closed = run_store.get_run(embedded_store, tenant, run_id)
    assert closed is not None and closed.status == "finalized" and closed.identity == "unknown"
    assert (closed.execution_status, closed.failure_stage, closed.failure_reason_code) == (
        "execution_error",
        "evaluator",
        "evaluator_error",
    )
    assert "RuntimeError: a defect in the diagnosis" in closed.failure_message
    [warned] = [
        record for record in caplog.records if record.name == "repute.finalize" and run_id in record.getMessage()
    ]
    assert warned.exc_info is not None and warned.exc_info[0] is RuntimeError
    due = trace_service.due(embedded_store, now, timedelta(seconds=0), timedelta(seconds=0))
    assert (tenant, run_id) not in due


def test_a_worker_whose_scheduling_fails_is_replaced_and_the_pool_keeps_serving(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pool = Writes(workers=1, per_tenant=1)
    take, failures = pool._take, [1]

    def take_failing_once() -> object:
        if failures:
            failures.pop()
            raise IndexError("pop from an empty deque")
        return take()

    monkeypatch.setattr(pool, "_take", take_failing_once)
    try:
        answers = [pool.submit("a", lambda n=n: n) for n in range(3)]
        assert [future.result(30) for future in answers] == [0, 1, 2]
        assert sum(thread.is_alive() for thread in pool._threads) == 1  # the failed one replaced
        assert not failures
    finally:
        pool.stop()
