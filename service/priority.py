"""Reads first on the interpreter's lock.

One process serves the reads and the writes, and its threads share one interpreter lock. A thread that
runs Python for long (a batch being parsed, normalized, diagnosed and turned into rows) keeps the lock
until the switch interval forces it out, and a read coming back from the engine waits that long after
each call. So between the runs of a write, while a read is in flight (the API counts them, `reads`), the
writer gives the lock up for an instant (`time.sleep(0)`), and a thread waiting for it takes it then.
With no read in flight it costs nothing; with no thread waiting, a system call. How many writes run at
once is the write pool's to say (service.api.writes).
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


def step_aside() -> None:
    """Between two runs of a write: lets a read that waits for the interpreter's lock go first."""
    if reads.count:
        time.sleep(0)


def stepping_aside(work: Callable[[Item], Result], items: Iterable[Item]) -> list[Result]:
    """`work` of each item, stepping aside for the reads before each."""
    results = []
    for item in items:
        step_aside()
        results.append(work(item))
    return results
