"""The process's cyclic garbage collector: tuned when the service starts to serve (`tune_for_serving`), and
held off while the service writes.

A write job (service.api.writes) turns its requests' bodies into objects that live until the job ends: the
parsed events, their rows, a group's runs, up to hundreds of thousands at once. They hold no reference
cycles, so reference counting frees them when the job ends; but each pass of the collector meanwhile walks
those alive, holding the interpreter's lock for every thread, the reads in flight included (bench/README.md,
"Groups of large runs and the collector's middle generation"). So automatic collection is off while any
write job runs (`hold`), and back on once the last one ends: what the jobs made is then freed already, and
the collector walks only the little that outlived them.

The service makes cyclic garbage too (exceptions and their tracebacks, the event loop's futures), and under
writes that never stop the collector would never run: a hold that has lasted HOLD_SECONDS runs one whole
collection at the end of a job and starts again, so such garbage lives that long at most. That collection
walks the objects of the jobs then in flight, as any pass would: the bound is long beside a burst of writes
and short beside the time the garbage of a busy server takes to matter.
"""

import gc
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

HOLD_SECONDS = 60.0
# A batch of runs allocates 100,000s of objects that live for the whole request; at the default
# threshold (700) the collector would walk them again and again (about a quarter of a batch's CPU).
YOUNG_THRESHOLD = 50_000


def tune_for_serving() -> None:
    """Startup objects (modules, the app) live as long as the process: frozen out of every collection; the
    young generation collected every YOUNG_THRESHOLD allocations."""
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])


class Collector(Protocol):
    """What a hold turns off and on: the `gc` module."""

    def isenabled(self) -> bool: ...
    def enable(self) -> None: ...
    def disable(self) -> None: ...
    def collect(self) -> int: ...


class CollectorHold:
    """`collector`'s automatic collection off while any holder is inside `held()`; `limit` bounds a hold (see
    above)."""

    def __init__(
        self, limit: float = HOLD_SECONDS, clock: Callable[[], float] = time.monotonic, collector: Collector = gc
    ) -> None:
        self._limit = limit
        self._clock = clock
        self._collector = collector
        self._lock = threading.Lock()
        self._holders = 0
        self._since = 0.0
        self._was_enabled = False  # the collector's state when the hold began, given back when it ends

    @contextmanager
    def held(self) -> Iterator[None]:
        self._enter()
        try:
            yield
        finally:
            self._leave()

    def _enter(self) -> None:
        with self._lock:
            if not self._holders:
                self._was_enabled = self._collector.isenabled()
                self._since = self._clock()
                self._collector.disable()
            self._holders += 1

    def _leave(self) -> None:
        with self._lock:
            self._holders -= 1
            if not self._holders:
                if self._was_enabled:
                    self._collector.enable()
                return
            overdue = self._was_enabled and self._clock() - self._since >= self._limit
            if overdue:
                self._since = self._clock()
        if overdue:
            self._collector.collect()


_hold = CollectorHold()


def hold() -> AbstractContextManager[None]:
    """The process's hold: automatic collection off until every write job inside one has ended."""
    return _hold.held()
