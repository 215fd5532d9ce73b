"""Striped locks that serialise the appends and finalizes of one run inside this process.

Scoped by tenant: two tenants using the same run id contend at most for a stripe, never for data.
Across processes (several servers on one ClickHouse) the store's insert-time idempotency converges.
"""

import threading
import zlib
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager

_LOCKS = [threading.Lock() for _ in range(256)]


def _stripe(tenant: str, run_id: str) -> int:
    return zlib.crc32(f"{tenant}/{run_id}".encode()) % len(_LOCKS)


def run_lock(tenant: str, run_id: str) -> threading.Lock:
    return _LOCKS[_stripe(tenant, run_id)]


@contextmanager
def holding(tenant: str, run_ids: Sequence[str]) -> Iterator[None]:
    """Holds the locks of several runs: distinct stripes taken in a fixed order, so two batches never
    wait on each other in a cycle."""
    with ExitStack() as stack:
        for index in sorted({_stripe(tenant, run_id) for run_id in run_ids}):
            stack.enter_context(_LOCKS[index])
        yield
