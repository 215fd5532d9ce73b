"""The process's cyclic collector (service.collector): held off while any write job runs, on once the last one
ends, its state before the hold given back, a hold that lasts past its bound collecting once at a job's end;
and its tuning for serving."""

import gc
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from service.api.writes import Writes
from service.collector import YOUNG_THRESHOLD, CollectorHold, tune_for_serving
from service.testing.clock import FakeClock
from service.testing.live import wait_until


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generation of each collection that starts while the test runs, in any thread."""
    started: list[int] = []

    def seen(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(seen)
    yield started
    gc.callbacks.remove(seen)


class Recording:
    """A collector (service.collector.Collector) that records what a hold asks of it, so the hold's own
    tests do not depend on, nor change, the process's collector (another test's write pool may hold it)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.collections = 0

    def isenabled(self) -> bool:
        return self.enabled

    def enable(self) -> None:
        self.enabled = True

    def disable(self) -> None:
        self.enabled = False

    def collect(self) -> int:
        self.collections += 1
        return 0


def test_the_collector_is_off_while_any_holder_is_inside_and_on_once_the_last_leaves() -> None:
    collector = Recording()
    hold = CollectorHold(collector=collector)
    first = hold.held()
    first.__enter__()
    with hold.held():
        assert not collector.enabled
    assert not collector.enabled  # the first holder is still inside
    first.__exit__(None, None, None)
    assert collector.enabled


def test_a_hold_leaves_a_collector_turned_off_before_it_off_and_uncollected() -> None:
    """A process that turned its collector off keeps it so: no hold turns it on, nor collects past its bound."""
    clock, collector = FakeClock(), Recording(enabled=False)
    hold = CollectorHold(limit=10.0, clock=clock.monotonic, collector=collector)
    with hold.held(), hold.held():
        clock.now = 20.0
    assert not collector.enabled
    assert collector.collections == 0


def test_a_hold_past_its_bound_collects_once_at_a_holders_end_and_starts_again() -> None:
    clock, collector = FakeClock(), Recording()
    hold = CollectorHold(limit=10.0, clock=clock.monotonic, collector=collector)
    with hold.held():
        with hold.held():
            clock.now = 9.9
        assert collector.collections == 0  # within the bound: nothing collected
        with hold.held():
            clock.now = 10.0
        assert collector.collections == 1  # past it: one collection, automatic collection still off
        assert not collector.enabled
        with hold.held():
            clock.now = 15.0
        assert collector.collections == 1  # the bound counts again from that collection
    assert collector.enabled


def test_no_collection_runs_while_a_write_job_makes_objects_and_the_collector_is_back_after(
    collections: list[int],
) -> None:
    """Broken on purpose: the pool's jobs run outside `hold()` -> the job sees the collector on, and the
    objects it makes (far past the young generation's threshold) set off collections."""
    pool = Writes(workers=1, per_tenant=1)
    seen: dict[str, Any] = {}

    def job() -> None:
        seen["enabled"] = gc.isenabled()
        before = len(collections)
        kept = [[number] for number in range(200_000)]  # tracked containers, freed when the job ends
        seen["collections"] = len(collections) - before
        del kept

    try:
        pool.submit("a", job).result(10)
        assert seen == {"enabled": False, "collections": 0}
        assert wait_until(gc.isenabled, attempts=1000, interval=0.01)
    finally:
        pool.stop()


def test_jobs_of_two_tenants_at_once_keep_the_collector_off_until_both_end() -> None:
    pool = Writes(workers=2, per_tenant=1)
    first_started, release_first, release_second = threading.Event(), threading.Event(), threading.Event()

    def held(started: threading.Event | None, release: threading.Event) -> None:
        if started:
            started.set()
        release.wait(10)

    try:
        first = pool.submit("a", lambda: held(first_started, release_first))
        assert first_started.wait(10)
        second = pool.submit("b", lambda: held(None, release_second))
        assert wait_until(second.running, attempts=1000, interval=0.01)
        release_first.set()
        first.result(10)
        assert not gc.isenabled()  # b's job still runs
        release_second.set()
        second.result(10)
        assert wait_until(gc.isenabled, attempts=1000, interval=0.01)
    finally:
        release_first.set()
        release_second.set()
        pool.stop()


def test_serving_freezes_the_startup_objects_and_collects_the_young_generation_less_often() -> None:
    before = gc.get_threshold()
    try:
        tune_for_serving()
        assert gc.get_threshold() == (YOUNG_THRESHOLD, *before[1:])
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
