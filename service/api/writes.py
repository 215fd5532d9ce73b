"""The one owner of writes (SPEC §13 fairness): every write of the process, from a route (sessions,
batches, events, finalize, logs, traces, signals, rebuild) or from a background job (the sweeper, the
settle timer), runs here, in a bounded pool of worker threads of its own.

- Per tenant, one queue; the workers serve the tenants round robin. A tenant runs up to `per_tenant`
  jobs at once while it is the only one with work, one while another tenant has some, or had some less
  than `grace` seconds ago (a client sending one request at a time has none queued between two). So one
  tenant's flood (retried or conflicting batches, large bodies) waits in its own queue, and another
  tenant's write waits at most for the jobs already running, then shares the cores and the interpreter
  half and half.
- A job does all of a write's work: it parses the request's body, checks it, and writes, so no waiting
  write holds a thread that the reads need (the reads keep the event loop and the default threadpool).
- Jobs of one kind queued by one tenant may run as one group (`run_group`): single runs posted one by one
  are written together, one INSERT per table, while the store is busy. The group's function answers each
  job on its own (a run refused fails alone, never the group).
- Between the steps of a job the writer steps aside for the reads in flight (service.priority): it gives
  up the interpreter's lock for an instant, so a read waiting for it goes first; and a job of a tenant
  that floods (more of its jobs queued), and a background job, pause there while a read, or another
  tenant's job that a client waits on, runs (`_behind`), and their inserts run at the lowest OS priority
  (`_lowered`): a flood, or what it leaves to finalize, costs the others neither a core nor the
  interpreter's lock.
- While any job runs, the cyclic garbage collector is held off (service.collector): its passes would walk
  the objects of the jobs in flight, every thread held meanwhile, and reference counting frees them all.
"""

import asyncio
import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, TypeVar

from service.collector import hold
from service.priority import JobAnswers, calmed, reads, yielding

log = logging.getLogger("repute.writes")
Result = TypeVar("Result")
Item = TypeVar("Item")
MAX_GROUP = 200  # jobs of one kind written together at most
SHARE_GRACE_SECONDS = 0.25  # a tenant whose last job ended this recently still keeps the others to one job


@dataclass(frozen=True)
class GroupKind(Generic[Item, Result]):
    """Jobs that may run together: `run` takes their items and answers each, a result or its own error."""

    name: str
    run: Callable[[Sequence[Item]], Sequence[Result | Exception]]


@dataclass
class _Job:
    tenant: str
    future: Future[Any]
    call: Callable[[], Any] | None = None  # a job of its own
    kind: GroupKind[Any, Any] | None = None  # or an item of a group
    item: Any = None
    background: bool = False  # the sweeper's or the settle timer's: no client waits on it


@dataclass
class _Tenant:
    queue: deque[_Job] = field(default_factory=deque)
    running: int = 0
    answering: int = 0  # of the running jobs, those a client waits on (not background)


class Writes:
    def __init__(self, workers: int, per_tenant: int, grace: float = SHARE_GRACE_SECONDS) -> None:
        self._workers = workers
        self._per_tenant = per_tenant
        self._grace = grace
        self._tenants: dict[str, _Tenant] = {}  # tenants with jobs queued or running
        self._left: OrderedDict[str, float] = OrderedDict()  # tenants whose last job ended within the grace,
        # and when, oldest first
        self._turns: deque[str] = deque()  # tenants that may start a job, in turn order
        self._in_turns: set[str] = set()  # the same, for membership in O(1)
        self._keyed: set[tuple[str, Hashable]] = set()  # background jobs queued or running, by key
        self._changed = threading.Condition()
        self._threads: list[threading.Thread] = []
        self._stopping = False

    # --- submitting --------------------------------------------------------------------------------

    async def run(self, tenant: str, call: Callable[[], Result]) -> Result:
        """`call()` in the pool, in the tenant's turn."""
        return await asyncio.wrap_future(self.submit(tenant, call))

    async def run_in_group(self, tenant: str, kind: GroupKind[Item, Result], item: Item) -> Result:
        """`item` handled by `kind`, together with the tenant's other items of that kind queued meanwhile."""
        return await asyncio.wrap_future(self._enqueue(_Job(tenant, Future(), kind=kind, item=item)))

    def submit(self, tenant: str, call: Callable[[], Result]) -> "Future[Result]":
        """`call()` in the pool (from any thread: a background job waits on the future it answers)."""
        return self._enqueue(_Job(tenant, Future(), call=call))

    def submit_once(
        self, tenant: str, key: Hashable, call: Callable[[], Result], on_done: Callable[["Future[Result]"], None]
    ) -> bool:
        """A background job (the sweeper's, the settle timer's): `call()` in the tenant's turn, then
        `on_done(future)`, unless a job of the tenant under the same `key` is still queued or running (a
        sweep finding a run due again while its finalize waits submits nothing). Never waits: a tenant's
        slow job holds up no other tenant's background work. Whether it was submitted."""
        keyed = (tenant, key)
        with self._changed:
            if keyed in self._keyed:
                return False
            self._keyed.add(keyed)
        future = self._enqueue(_Job(tenant, Future(), call=call, background=True))
        future.add_done_callback(lambda _: self._release(keyed))
        future.add_done_callback(on_done)
        return True

    def _release(self, keyed: tuple[str, Hashable]) -> None:
        with self._changed:
            self._keyed.discard(keyed)

    def _enqueue(self, job: _Job) -> Future[Any]:
        with self._changed:
            if not self._threads:
                self._start()
            self._left.pop(job.tenant, None)
            self._tenants.setdefault(job.tenant, _Tenant()).queue.append(job)
            self._offer_turn(job.tenant)  # else its turn comes when one of its jobs ends
            self._changed.notify()
        return job.future

    def _offer_turn(self, tenant: str) -> None:
        """Puts the tenant at the end of the turns when it has a job queued and room in its share."""
        state = self._tenants.get(tenant)
        if state and state.queue and tenant not in self._in_turns and state.running < self._share(tenant):
            self._turns.append(tenant)
            self._in_turns.add(tenant)

    # --- the workers ---------------------------------------------------------------------------------

    def _start(self) -> None:
        """The workers, started with the first job (an app served without its lifespan, as the CLI's
        in-process client is, still writes)."""
        self._threads = [self._worker(number) for number in range(self._workers)]
        for thread in self._threads:
            thread.start()

    def _worker(self, number: int) -> threading.Thread:
        return threading.Thread(target=self._work, name=f"repute-write-{number}", daemon=True)

    def stop(self, timeout: float = 10.0) -> None:
        with self._changed:
            self._stopping = True
            self._changed.notify_all()
        for thread in self._threads:
            thread.join(timeout)

    def _work(self) -> None:
        """A worker's loop. Should the scheduling itself ever raise, the worker is replaced by a new one
        (and the error logged), so the pool never loses a thread."""
        try:
            while self._serve_one():
                pass
        except Exception:
            log.exception("a write worker failed; replaced")
            with self._changed:
                if not self._stopping:
                    replacement = self._worker(len(self._threads))
                    self._threads.append(replacement)
                    replacement.start()

    def _serve_one(self) -> bool:
        """Waits for a job, runs it and answers it; False once the pool stops."""
        with self._changed:
            while not self._stopping and (taken := self._take()) is None:
                self._changed.wait(self._until_grace_ends())
            if self._stopping or taken is None:
                return False
        tenant, jobs = taken
        background = jobs[0].background
        try:
            answers = JobAnswers(partial(self._behind, tenant, background), partial(self._lowered, tenant, background))
            with yielding(answers), hold():
                _answer(jobs)
        finally:
            with self._changed:
                self._finished(tenant, background)
            calmed()  # a job that paused for this one goes on
        return True

    def _lowered(self, tenant: str, background: bool) -> bool:
        """Whether a job of `tenant` gives way to the others (service.priority): it is a background job, or
        the tenant floods (it has jobs queued behind the running ones). Read without the lock, at each step
        and statement of a job: a stale answer costs one of them at most."""
        state = self._tenants.get(tenant)
        return state is not None and (background or bool(state.queue))

    def _behind(self, tenant: str, background: bool) -> bool:
        """Whether a job of `tenant` should pause now: it gives way (`_lowered`), and a read is in flight or
        another tenant that does not flood runs a job a client waits on."""
        if not self._lowered(tenant, background):
            return False
        if reads.count:
            return True
        return any(
            other != tenant and other_state.answering and not other_state.queue
            for other, other_state in list(self._tenants.items())
        )

    def _take(self) -> tuple[str, list[_Job]] | None:
        """The next job of the first tenant in turn that may start one (with the items of its kind queued
        behind it). None when no tenant may start a job now."""
        self._end_graces()
        while self._turns:
            tenant = self._turns.popleft()
            self._in_turns.discard(tenant)
            state = self._tenants.get(tenant)
            if state is None or not state.queue or state.running >= self._share(tenant):
                continue  # its turn comes back when it has a job and room for it
            jobs = [state.queue.popleft()]
            if jobs[0].kind is not None:
                while state.queue and len(jobs) < MAX_GROUP and state.queue[0].kind is jobs[0].kind:
                    jobs.append(state.queue.popleft())
            state.running += 1
            state.answering += not jobs[0].background
            self._offer_turn(tenant)  # it may start another beside this one
            return tenant, jobs
        return None

    def _share(self, tenant: str) -> int:
        """How many jobs the tenant may run at once: `per_tenant` while it is the only tenant with work,
        one while another has some or had some within the grace (so the cores and the interpreter are split
        between them)."""
        alone = len(self._tenants) == 1 and tenant in self._tenants and not self._left
        return self._per_tenant if alone else 1

    def _end_graces(self) -> None:
        """Forgets the tenants whose grace has passed (the oldest first, each once); the one tenant with work
        left may then run its share."""
        now, ended = time.monotonic(), False
        while self._left and now - next(iter(self._left.values())) >= self._grace:
            self._left.popitem(last=False)
            ended = True
        if ended and len(self._tenants) == 1:
            self._offer_turn(next(iter(self._tenants)))

    def _until_grace_ends(self) -> float | None:
        """Seconds until the oldest grace passes (a worker waits no longer for a turn it may bring)."""
        if not self._left:
            return None
        return max(0.0, next(iter(self._left.values())) + self._grace - time.monotonic())

    def _finished(self, tenant: str, background: bool) -> None:
        """The tenant's next job waits its turn behind the tenants that came meanwhile."""
        state = self._tenants[tenant]
        state.running -= 1
        state.answering -= not background
        if not state.queue and not state.running:
            del self._tenants[tenant]
            self._left[tenant] = time.monotonic()  # the one left alone runs its whole share after the grace
        self._offer_turn(tenant)
        self._changed.notify_all()


def _answer(jobs: list[_Job]) -> None:
    """Runs a job (or a group of them) and answers each job's future; an exception answers every job it
    reaches, and never ends the worker."""
    live = [job for job in jobs if job.future.set_running_or_notify_cancel()]
    if not live:
        return
    try:
        if live[0].call is not None:
            outcomes: Sequence[Any] = [live[0].call()]
        else:
            kind = live[0].kind
            assert kind is not None
            outcomes = kind.run([job.item for job in live])
    except Exception as error:  # the job failed whole: every one of its callers hears why
        outcomes = [error] * len(live)
    for job, outcome in zip(live, outcomes, strict=True):
        if isinstance(outcome, Exception):
            job.future.set_exception(outcome)
        else:
            job.future.set_result(outcome)
