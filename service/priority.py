"""Reads first on the interpreter's lock (issue #14).

One process serves the reads and the writes, and its threads share one interpreter lock. A thread that
runs Python for long (a batch being parsed, normalized, diagnosed and turned into rows) keeps the lock
until the switch interval (5 ms) forces it out, and a read coming back from the engine waits that long
after each call, longer when several writers want the lock as well. Two rules keep the reads ahead:

- `writers_turn`: the write path's Python runs in one thread at a time (the engine's part of the
  writes, where the lock is free, still runs side by side), so a read competes with one writer at most.
  A turn is one request's parsing, or one group of runs' checks or diagnoses: at the request cap of
  100,000 events about 0.2 s, which other writers wait for (the interpreter's lock made them take as
  long, interleaved).
- `step_aside()`: between runs, while a read is in flight (the API counts them, `reads`), the writer
  gives the lock up for an instant (`time.sleep(0)`), and a thread waiting for it takes it then. With no
  thread waiting it costs a system call.

`in_turn` applies both to a write's loop over its runs.

16 clients on 2 cores (`python -m bench load`, 40 s, three rounds alternating with the commit before):
run lists p50 / p99 61 / 157, 60 / 155, 57 / 161 ms against 77 / 191, 74 / 213, 71 / 170; reputation
reads 42 / 133, 40 / 146, 39 / 168 against 57 / 187, 53 / 177, 53 / 169; the writes wait for them: single
runs p50 271-278 against 243-251 ms, batches at most 691-828 against 746-946 ms, 3% fewer requests a
second. Stepping aside without the turns helped the reads less and pushed batches over 1 s; the turns
without stepping aside did little (bench/README.md).
"""

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


class ReadsInFlight:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._lock:
            self.count += 1
        try:
            yield
        finally:
            with self._lock:
                self.count -= 1


reads = ReadsInFlight()
writers_turn = threading.RLock()  # a turn taken inside another one is the same turn


def step_aside() -> None:
    """Between two runs of a write: lets a read that waits for the interpreter's lock go first."""
    if reads.count:
        time.sleep(0)


def in_turn(work: Callable[[Item], Result], items: Iterable[Item]) -> list[Result]:
    """`work` of each item, in the writers' turn, stepping aside for reads before each."""
    with writers_turn:
        results = []
        for item in items:
            step_aside()
            results.append(work(item))
        return results
