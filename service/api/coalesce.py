"""Group commit for small writes: requests that arrive while the store is busy are written together.

Every INSERT costs the engine a part (about 10 ms of CPU each on the embedded engine, plus its merges
later), whatever its size. So while one group is being written, the requests that arrive queue here, and
the next write takes all of them at once: one INSERT per table for the whole group. A request alone is
written at once; a request is answered only once its group is stored.
"""

import asyncio
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from anyio import CapacityLimiter, to_thread

Item = TypeVar("Item")
Result = TypeVar("Result")


class Coalescer(Generic[Item, Result]):
    def __init__(
        self,
        work: Callable[[Sequence[Item]], Sequence[Result | Exception]],  # per item: its result or its own error
        limiter: CapacityLimiter,
        max_group: int,
    ) -> None:
        self._work = work
        self._limiter = limiter
        self._max_group = max_group
        self._queue: list[tuple[Item, asyncio.Future[Result]]] = []
        self._writer: asyncio.Task[None] | None = None

    async def submit(self, item: Item) -> Result:
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self._queue.append((item, future))
        if self._writer is None:
            self._writer = asyncio.create_task(self._write_all())
        return await future

    async def _write_all(self) -> None:
        try:
            while self._queue:
                group, self._queue = self._queue[: self._max_group], self._queue[self._max_group :]
                await self._write(group)
        finally:
            self._writer = None

    async def _write(self, group: list[tuple[Item, asyncio.Future[Result]]]) -> None:
        try:
            outcomes = await to_thread.run_sync(self._work, [item for item, _ in group], limiter=self._limiter)
        except Exception as exc:  # the store failed the whole group: nothing of it is acknowledged
            outcomes = [exc] * len(group)
        for (_, future), outcome in zip(group, outcomes, strict=True):
            if future.done():  # the client went away
                continue
            if isinstance(outcome, Exception):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)
