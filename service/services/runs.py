"""Reading runs: one run, a page of runs, a run's child runs (SPEC §3.5) and its stored events. Runs are
written by the receivers (service/services/receivers/) and the finalize (service/services/finalize.py)."""

from dataclasses import dataclass
from typing import Any

from service.errors import NotFound
from service.model import RunRecord, RunSummary
from service.store import runs as run_store
from service.store.client import Store


def stored_run(store: Store, tenant: str, run_id: str) -> RunRecord:
    run = run_store.get_run(store, tenant, run_id)
    if run is None:
        raise NotFound(f"run {run_id!r}")
    return run


def list_runs(store: Store, tenant: str, **filters: Any) -> list[RunSummary]:
    return run_store.list_runs(store, tenant, **filters)


MAX_CHILD_RUNS = 1000  # a run's agents are a handful; a detail lists this many at most


def child_runs(store: Store, tenant: str, run_id: str) -> list[RunSummary]:
    """The runs that name `run_id` as their parent (SPEC §3.5), newest first."""
    return run_store.list_runs(store, tenant, parent=run_id, limit=MAX_CHILD_RUNS)


@dataclass(frozen=True)
class EventPage:
    events: list[dict[str, Any]]
    total: int  # the run's events, all pages


def list_events(store: Store, tenant: str, run_id: str, first_seq: int, limit: int) -> EventPage:
    """A page of a run's events from position `first_seq` on, and how many the run holds."""
    run = stored_run(store, tenant, run_id)
    total = run.event_count if run.finalized else run_store.next_event_seq(store, tenant, run_id)
    return EventPage(run_store.list_events(store, tenant, run_id, first_seq, limit), total)
