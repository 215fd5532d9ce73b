"""The write pool (service.api.writes, SPEC §13 fairness): tenants served round robin, each within its own
share of the workers, jobs of one kind grouped, each job answered on its own, and a failing job failing
alone. Orderings are asserted, never durations: a gate holds the first jobs while the rest queue."""

import asyncio
import logging
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from service import priority
from service.api.writes import MAX_GROUP, GroupKind, Writes
from service.priority import behind_others, lowered, reads, step_aside
from service.testing.live import wait_until


@pytest.fixture
def writes() -> Iterator[Writes]:
    pool = Writes(workers=1, per_tenant=1)
    yield pool
    pool.stop()


def test_a_tenant_waits_for_at_most_the_job_running_not_for_another_tenants_queue(writes: Writes) -> None:
    gate, order = threading.Event(), []

    def job(name: str) -> str:
        if name == "a0":
            gate.wait(10)
        order.append(name)
        return name

    futures = [writes.submit("a", lambda n=f"a{i}": job(n)) for i in range(5)]
    assert wait_until(lambda: futures[0].running(), interval=0.01)
    futures.append(writes.submit("b", lambda: job("b0")))
    gate.set()
    assert [future.result(10) for future in futures] == ["a0", "a1", "a2", "a3", "a4", "b0"]
    assert order[:2] == ["a0", "b0"]  # b's turn comes right after the job running, not after a's queue


def test_a_tenant_runs_at_most_its_share_at_once() -> None:
    pool = Writes(workers=3, per_tenant=2)
    gate, running, most, guard = threading.Event(), [0], [0], threading.Lock()

    def job() -> None:
        with guard:
            running[0] += 1
            most[0] = max(most[0], running[0])
        gate.wait(10)
        with guard:
            running[0] -= 1

    try:
        futures = [pool.submit("a", job) for _ in range(6)]
        assert wait_until(lambda: running[0] == 2, interval=0.01)  # its share, alone
        other = pool.submit("b", lambda: "b ran")
        assert other.result(10) == "b ran"  # a third worker was left for another tenant
        gate.set()
        for future in futures:
            future.result(10)
        assert most[0] == 2
    finally:
        pool.stop()


def test_a_tenant_whose_write_just_ended_keeps_another_to_one_job_until_its_grace_passes() -> None:
    """A client that sends one request at a time has no job queued between two of them: for `grace`
    seconds after tenant B's job ends, tenant A, now alone, still runs one job at a time; once the grace
    has passed, its whole share again. Broken on purpose: `_share`'s `and not self._left` removed (A runs
    two at once at once), or `_end_graces` offering no turn (A's second job waits for its first) → this
    test fails."""
    for grace, together in ((30.0, False), (0.2, True)):
        pool = Writes(workers=3, per_tenant=2, grace=grace)
        gate = threading.Event()
        try:
            assert pool.submit("b", lambda: "b ran").result(10) == "b ran"
            first, second = (pool.submit("a", partial(gate.wait, 30)) for _ in range(2))
            assert wait_until(first.running, interval=0.01)
            assert wait_until(second.running, attempts=50, interval=0.01) is together
        finally:
            gate.set()
            pool.stop()


def test_a_worker_waits_out_a_grace_instead_of_looking_again_and_again() -> None:
    """While a grace holds tenant A's second job back, the idle workers sleep until it ends: a few looks at
    the turns, not thousands. Broken on purpose: `_until_grace_ends`'s `+ self._grace` → `- self._grace`
    (the wait ends at once, and the workers spin through the grace) → this test fails."""
    pool = Writes(workers=3, per_tenant=2, grace=0.5)
    gate, looks = threading.Event(), [0]
    take = pool._take

    def counted() -> tuple[str, list[Any]] | None:
        looks[0] += 1
        return take()

    pool._take = counted  # type: ignore[method-assign]
    try:
        assert pool.submit("b", lambda: "b ran").result(10) == "b ran"
        first, second = (pool.submit("a", partial(gate.wait, 30)) for _ in range(2))
        assert wait_until(lambda: first.running() and second.running(), interval=0.01)
        assert looks[0] < 100
    finally:
        gate.set()
        pool.stop()


def test_a_tenants_own_last_job_does_not_hold_it_back() -> None:
    """The grace is another tenant's: a tenant alone whose job just ended runs its whole share at once.
    Broken on purpose: `_enqueue`'s `self._left.pop(job.tenant, None)` removed (the tenant waits out its
    own grace) → this test fails."""
    pool = Writes(workers=3, per_tenant=2, grace=30.0)
    gate = threading.Event()
    try:
        assert pool.submit("a", lambda: "a ran").result(10) == "a ran"
        first, second = (pool.submit("a", partial(gate.wait, 30)) for _ in range(2))
        assert wait_until(lambda: first.running() and second.running(), interval=0.01)
    finally:
        gate.set()
        pool.stop()


def test_items_of_a_kind_queued_meanwhile_run_as_one_group_and_are_answered_each(writes: Writes) -> None:
    gate, groups = threading.Event(), []

    def handle(items: Sequence[int]) -> list[int | Exception]:
        groups.append(list(items))
        return [ValueError(f"item {item} refused") if item == 3 else item * 10 for item in items]

    kind = GroupKind("numbers", handle)

    async def scenario() -> list[object]:
        blocker = asyncio.ensure_future(writes.run("a", lambda: gate.wait(10)))
        await asyncio.sleep(0)
        items = [asyncio.ensure_future(writes.run_in_group("a", kind, n)) for n in range(1, 5)]
        await asyncio.to_thread(wait_until, lambda: writes_queued(writes, "a") == 4, 300, 0.01)
        gate.set()
        await asyncio.wait_for(blocker, 10)
        return await asyncio.wait_for(asyncio.gather(*items, return_exceptions=True), 10)  # a lost job fails

    answers = asyncio.run(scenario())
    assert groups == [[1, 2, 3, 4]]
    assert answers[:2] == [10, 20] and answers[3] == 40
    assert isinstance(answers[2], ValueError) and str(answers[2]) == "item 3 refused"


def test_a_group_holds_at_most_max_group_items(writes: Writes) -> None:
    """One INSERT per table holds a bounded number of runs. Broken on purpose: `len(jobs) < MAX_GROUP` →
    `<=` in `_take` (a group of MAX_GROUP + 1) → this test fails."""
    gate, groups = threading.Event(), []

    def handle(items: Sequence[int]) -> list[int]:
        groups.append(len(items))
        return list(items)

    kind = GroupKind("numbers", handle)

    async def scenario() -> list[int]:
        blocker = asyncio.ensure_future(writes.run("a", lambda: gate.wait(10)))
        await asyncio.sleep(0)
        items = [asyncio.ensure_future(writes.run_in_group("a", kind, n)) for n in range(MAX_GROUP + 1)]
        await asyncio.to_thread(wait_until, lambda: writes_queued(writes, "a") == MAX_GROUP + 1, 300, 0.01)
        gate.set()
        await asyncio.wait_for(blocker, 10)
        return await asyncio.wait_for(asyncio.gather(*items), 10)

    assert asyncio.run(scenario()) == list(range(MAX_GROUP + 1))
    assert groups == [MAX_GROUP, 1]


def writes_queued(writes: Writes, tenant: str) -> int:
    with writes._changed:  # a test's peek at the queue
        state = writes._tenants.get(tenant)
        return len(state.queue) if state else 0


def test_a_failing_job_fails_alone_and_the_workers_go_on(writes: Writes) -> None:
    def fail() -> None:
        raise RuntimeError("store down")

    failed = writes.submit("a", fail)
    with pytest.raises(RuntimeError, match="store down"):
        failed.result(10)
    assert writes.submit("a", lambda: "next").result(10) == "next"


def test_while_another_tenant_has_work_a_tenant_runs_one_job_at_a_time() -> None:
    pool = Writes(workers=3, per_tenant=2)
    gates = {name: threading.Event() for name in ("b1", "a1", "a2")}

    def job(name: str) -> str:
        gates[name].wait(10)
        return name

    try:
        b1 = pool.submit("b", lambda: job("b1"))
        assert wait_until(b1.running, interval=0.01)
        a1, a2 = pool.submit("a", lambda: job("a1")), pool.submit("a", lambda: job("a2"))
        assert wait_until(a1.running, interval=0.01)
        assert not a2.running()  # a worker is free, but b has work: a runs one job
        gates["b1"].set()
        assert b1.result(10) == "b1"
        assert wait_until(a2.running, interval=0.01)  # a alone now: its second job starts beside the first
        gates["a1"].set(), gates["a2"].set()
        assert (a1.result(10), a2.result(10)) == ("a1", "a2")
    finally:
        pool.stop()


class _CountedScans(dict):
    """The pool's tenants, counting every walk over all of them."""

    scans = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        type(self).scans += 1
        return super().__iter__()

    def items(self):  # type: ignore[no-untyped-def]
        type(self).scans += 1
        return super().items()

    def values(self):  # type: ignore[no-untyped-def]
        type(self).scans += 1
        return super().values()


def test_a_finished_job_walks_no_list_of_tenants() -> None:
    """Issue #39: each finished job scanned every tenant with queued work (14.5 ms a job at 1,000 tenants).
    A job's start and end look up its own tenant only. Broken on purpose: `_finished` offering a turn to
    every tenant (a walk per job)."""
    pool = Writes(workers=1, per_tenant=1)
    gate = threading.Event()
    try:
        held = pool.submit("held", lambda: gate.wait(30))
        assert wait_until(held.running, interval=0.01)
        with pool._changed:
            pool._tenants = _CountedScans(pool._tenants)
        jobs = [pool.submit(f"tenant-{n}", lambda n=n: n) for n in range(1_000)]
        gate.set()
        assert [job.result(60) for job in jobs] == list(range(1_000))
        assert _CountedScans.scans <= 2  # the last tenant left alone: its whole share back
    finally:
        pool.stop()


def test_a_flooding_tenant_and_background_jobs_pause_for_another_tenants_write() -> None:
    """While tenant B's write runs, tenant A's jobs pause at their steps as long as more of A's jobs are
    queued (A floods), and so does a background job of any other tenant; B's own job never does, nor A's
    last job once its queue is empty. The same jobs, and only they, give way in the engine (service.priority.
    lowered: their inserts at the lowest priority). Broken on purpose: `_lowered`'s `background or
    bool(state.queue)` → `bool(state.queue)` (background jobs neither pause nor give way) or → `True` (every
    write gives way), or `not other_state.queue` → `other_state.queue` → this test fails."""
    pool = Writes(workers=4, per_tenant=3)
    b_running, b_release, asked = threading.Event(), threading.Event(), {}

    def b_job() -> None:
        b_running.set()
        asked["b"] = (behind_others(), lowered())
        b_release.wait(10)

    def a_job(name: str) -> None:
        b_running.wait(10)
        asked[name] = (behind_others(), lowered())

    try:
        flood = [pool.submit("a", lambda n=f"a{i}": a_job(n)) for i in range(5)]
        assert wait_until(lambda: sum(future.running() for future in flood) == 3, interval=0.01)
        pool.submit("b", b_job)
        for future in flood:
            future.result(10)
        background: list[tuple[bool, bool]] = []
        done = threading.Event()
        pool.submit_once("c", "sweep", lambda: background.append((behind_others(), lowered())), lambda _: done.set())
        assert done.wait(10)
        b_release.set()
        gives_way, holds = (True, True), (False, False)
        assert asked == {"b": holds, "a0": gives_way, "a1": gives_way, "a2": gives_way, "a3": gives_way, "a4": holds}
        assert background == [gives_way]
        alone = pool.submit("c", lambda: (behind_others(), lowered())).result(10)
        assert alone == holds  # no other tenant's write runs now, and nothing of c's is queued
    finally:
        b_release.set()
        pool.stop()


def test_a_paused_job_goes_on_when_the_job_it_gave_way_to_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tenant A floods (a second job queued) while tenant B's write runs: A's job pauses at its step, and
    goes on as soon as B's job ends, not when its pause runs out. Broken on purpose: the worker's `calmed()`
    after a job ends left out → A's job sleeps its whole pause → this test fails."""
    monkeypatch.setattr(priority, "PAUSE_SECONDS", 60.0)
    pool = Writes(workers=3, per_tenant=2)
    b_running, b_release, a_queued, a_done = threading.Event(), threading.Event(), threading.Event(), threading.Event()

    def a_job() -> None:
        a_queued.wait(10)  # A's second job is queued behind this one: A floods
        step_aside()
        a_done.set()

    try:
        b = pool.submit("b", lambda: b_running.set() or b_release.wait(10))
        assert b_running.wait(10)
        flood = [pool.submit("a", a_job) for _ in range(2)]
        a_queued.set()
        assert not a_done.wait(0.2)  # paused behind B's write
        b_release.set()
        assert a_done.wait(10)
        b.result(10)
        for future in flood:
            future.result(10)
    finally:
        b_release.set()
        pool.stop()


def test_a_flooding_tenants_job_pauses_while_a_read_is_in_flight(writes: Writes) -> None:
    """Reads are never held up (SPEC §13): a job of a tenant with more jobs queued pauses while a read is in
    flight, whoever's. Broken on purpose: `_behind`'s `if reads.count: return True` → `False` → this test
    fails."""
    go, asked = threading.Event(), []

    def job() -> None:
        go.wait(10)
        asked.append(behind_others())

    first = writes.submit("d", job)
    second = writes.submit("d", lambda: None)
    assert wait_until(first.running, interval=0.01)
    with reads.reading():
        go.set()
        first.result(10)
    second.result(10)
    assert asked == [True]


def test_stop_ends_every_worker_and_lets_the_running_job_answer(caplog: pytest.LogCaptureFixture) -> None:
    """stop() while a job runs: the job still answers, every worker leaves its loop, and nothing is logged
    as a failure. Broken on purpose: `stop()` setting `_stopping = False`, or a worker's `return False` on
    stopping → `True` (it never leaves its loop), or `if self._stopping or taken is None` → `and` (the worker
    that ran the job fails on its way out: "a write worker failed" logged at every shutdown), or stop()
    joining no worker (`for thread in []`) → this test fails."""
    pool = Writes(workers=2, per_tenant=1)
    gate = threading.Event()
    job = pool.submit("a", lambda: gate.wait(30) and "ran")
    assert wait_until(job.running, interval=0.01)
    stopping = threading.Thread(target=pool.stop, kwargs={"timeout": 5})
    stopping.start()
    assert wait_until(lambda: pool._stopping, interval=0.01)
    stopping.join(0.2)
    assert stopping.is_alive()  # waiting for the worker that runs the job
    gate.set()
    stopping.join(30)
    assert job.result(10) == "ran"
    assert pool._threads and not any(thread.is_alive() for thread in pool._threads)
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR] == []


def test_a_turn_offered_while_alone_is_not_taken_beyond_the_share_once_another_tenant_has_work() -> None:
    """Tenant A, alone, runs one job and is offered a turn for a second (its share is two); B's job comes
    before a free worker looks at the turns: A's turn is passed over (one job while another tenant has
    work) and B's job runs first, then A's second once A is alone again. Broken on purpose: `_take`'s
    `not state.queue or state.running >= ...` → `and` (A runs its second job first), or its `continue` →
    `break` (no job starts until A's first ends) → this test fails."""
    pool = Writes(workers=2, per_tenant=2)
    gate, order = threading.Event(), []
    try:
        first = pool.submit("a", lambda: gate.wait(30))
        assert wait_until(first.running, interval=0.01)
        with pool._changed:  # both queued before the free worker looks at the turns (the lock is reentrant)
            pool.submit("a", lambda: order.append("a2"))
            pool.submit("b", lambda: order.append("b1"))
        assert wait_until(lambda: len(order) == 2, interval=0.01)  # while A's first job still runs
        assert order == ["b1", "a2"]
    finally:
        gate.set()
        pool.stop()


def test_a_tenant_running_only_background_work_makes_no_flood_pause() -> None:
    """Tenant A floods (a job queued behind its running one) while tenant C runs only a background job (no
    client waits on it; C's write beside it has ended) and no read is in flight: A's job does not pause.
    Broken on purpose: `_Tenant`'s `answering` starting at 1, `_finished`'s `answering -= not background` →
    `-= background`, or `_behind`'s `other != tenant and ... and not other_state.queue` with either `and` →
    `or` → this test fails."""
    pool = Writes(workers=3, per_tenant=2)
    c_running, c_release, a_asks, asked = threading.Event(), threading.Event(), threading.Event(), []
    try:
        pool.submit_once("c", "sweep", lambda: c_running.set() or c_release.wait(30), lambda _: None)
        assert c_running.wait(10)
        assert pool.submit("c", lambda: "written").result(10) == "written"
        first = pool.submit("a", lambda: a_asks.wait(10) and asked.append(behind_others()))
        second = pool.submit("a", lambda: None)
        assert wait_until(first.running, interval=0.01) and not second.running()
        a_asks.set()
        first.result(10), second.result(10)
        assert asked == [False]
    finally:
        c_release.set()
        pool.stop()


def test_a_process_that_wrote_through_the_pool_exits_without_stopping_it() -> None:
    """The CLI's in-process client serves the app without its lifespan: nothing stops the pool, and the
    process still ends when its work is done. Broken on purpose: the workers made with `daemon=False` (the
    process waits for them forever) → this test fails."""
    code = "from service.api.writes import Writes; print(Writes(2, 1).submit('a', lambda: 'ran').result(10))"
    root = Path(__file__).resolve().parents[1]
    ended = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60)
    assert (ended.returncode, ended.stdout.strip()) == (0, "ran"), ended.stderr
