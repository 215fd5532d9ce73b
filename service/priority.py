"""Reads first on the interpreter's lock.

One process serves the reads and the writes, and its threads share one interpreter lock. A thread that
runs Python for long (a batch being parsed, normalized, diagnosed and turned into rows) keeps the lock
until the switch interval forces it out, and a read coming back from the engine waits that long after
each call. So between the runs of a write, while a read is in flight (the API counts them, `reads`), the
writer gives the lock up for an instant (`time.sleep(0)`), and a thread waiting for it takes it then.
With no read in flight it costs nothing; with no thread waiting, a system call. How many writes run at
once is the write pool's to say (service.api.writes).

A write of a tenant that floods (jobs queued behind the one running) does more: it pauses while a read is
in flight or another tenant's write that is no flood runs, up to PAUSE_SECONDS at each of its steps, so
that work has the interpreter to itself (SPEC §13: one tenant's flood never slows another tenant's writes
beyond its share, nor any read). The pool says, for the job a thread runs, whether it should
(`yielding`); the long loops of a write (decoding OTLP, building rows) step aside every STEP items
(`stepping`). A paused write sleeps until what it gave way to ends (`calmed`: the last read in flight, a
job of the pool), not polling: a waking thread asks for the interpreter's lock, and at the switch interval
below each ask would take the lock from the work it pauses for. Such a job's inserts also run at the
lowest OS priority on the embedded engine (`lowered`, service.store.client), and any other write's at the
engine's own: the kernel then gives another tenant's write the cores before a flood's, where every write
at the lowest priority shared them evenly.

Some steps of a write hold the lock with no loop to step aside in: parsing a large body, diagnosing a run
of 10,000 events, the driver encoding its rows. The interpreter makes such a thread hand the lock over
once a waiting thread has waited its switch interval, 5 ms by default, and a read waits that long at each
of its returns from the engine. While the service serves, the interval is REPUTE_SWITCH_INTERVAL_MS
(`switching_every`): bench/README.md, "The interpreter's switch interval", measures what it buys.
"""

import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


_calm = threading.Condition()  # notified when what a paused write gives way to may have ended


def calmed() -> None:
    """Wakes the paused writes (`step_aside`): a read, or a job they gave way to, has ended."""
    with _calm:
        _calm.notify_all()


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
                last = self.count == 0
            if last:
                calmed()


reads = ReadsInFlight()


PAUSE_SECONDS = 0.05  # the longest a flooding write waits at one step
STEP = 64  # items of a long loop between two steps aside
_job = threading.local()  # `answers`: the pool's JobAnswers for the job this thread runs


@dataclass(frozen=True)
class JobAnswers:
    """The write pool's answers for one job: whether it should pause now (`behind`), and whether its engine
    work runs at the lowest OS priority (`lowered`: a background job, or a tenant's that floods)."""

    behind: Callable[[], bool]
    lowered: Callable[[], bool]


@contextmanager
def yielding(answers: JobAnswers | None) -> Iterator[None]:
    """Within it, this thread's steps aside and engine work follow the pool's `answers` for its job."""
    before = _current()
    _job.answers = answers
    try:
        yield
    finally:
        _job.answers = before


def carried(call: Callable[[], Result]) -> Callable[[], Result]:
    """`call` to run on another thread (a statement beside the job's) under this thread's job answers."""
    answers = _current()

    def run() -> Result:
        with yielding(answers):
            return call()

    return run


def behind_others() -> bool:
    """Whether the job this thread runs should pause now (its pool's answer; False outside a job)."""
    answers = _current()
    return answers is not None and answers.behind()


def lowered() -> bool:
    """Whether the engine work of the job this thread runs goes at the lowest OS priority (False outside a
    job: a write no pool schedules, as the CLI's in-process ones are)."""
    answers = _current()
    return answers is not None and answers.lowered()


def _current() -> JobAnswers | None:
    """The pool's answers for the job this thread runs (None outside a job)."""
    answers: JobAnswers | None = getattr(_job, "answers", None)
    return answers


def step_aside() -> None:
    """Between two steps of a write: a flooding write pauses for the work it should not hold up (at most
    PAUSE_SECONDS); any write lets a read that waits for the interpreter's lock go first."""
    if behind_others():
        deadline = time.monotonic() + PAUSE_SECONDS
        with _calm:
            while behind_others() and (left := deadline - time.monotonic()) > 0:
                _calm.wait(left)
    elif reads.count:
        time.sleep(0)


def stepping(items: Iterable[Item], every: int = STEP) -> Iterator[Item]:
    """The items, stepping aside before every `every`-th (the long loops of a write)."""
    for number, item in enumerate(items):
        if number % every == 0:
            step_aside()
        yield item


def stepping_aside(work: Callable[[Item], Result], items: Iterable[Item]) -> list[Result]:
    """`work` of each item, stepping aside for the reads before each."""
    results = []
    for item in items:
        step_aside()
        results.append(work(item))
    return results


@contextmanager
def switching_every(seconds: float) -> Iterator[None]:
    """Within it, a thread holding the interpreter's lock hands it over to one waiting for it after
    `seconds` (sys.setswitchinterval); the interval before is restored after."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(seconds)
    try:
        yield
    finally:
        sys.setswitchinterval(before)
