"""Locks that serialise the appends and finalizes of one run inside this process.

One lock per run id in flight: a run waits only behind its own run id, never behind a batch of other
runs. Scoped by tenant. Across processes (several servers on one ClickHouse) the store's insert-time
idempotency converges.
"""

from collections.abc import Sequence
from contextlib import AbstractContextManager

from service.store.keyed_locks import KeyedLocks

_RUNS = KeyedLocks()


def run_lock(tenant: str, run_id: str) -> AbstractContextManager[None]:
    return _RUNS.holding([(tenant, run_id)])


def holding(tenant: str, run_ids: Sequence[str]) -> AbstractContextManager[None]:
    """Holds the locks of several runs (two batches never wait on each other in a cycle)."""
    return _RUNS.holding((tenant, run_id) for run_id in run_ids)
