"""Reading runs: one run, a page of runs, a run's child runs (SPEC §3.5) and its stored events. Runs are
written by the receivers (service/services/receivers/) and the finalize (service/services/finalize.py).

A trace-born run has no row until it is finalized; until then it is read from its spans as they stand
(SPEC §3.4 "A running agent is visible"): `status: "open"`, its events so far and its agent tree, under
the run id it has so far, each read mapping the spans afresh (the assembly the finalize uses)."""

from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from service.errors import NotFound
from service.model import RunRecord, RunSummary
from service.services.assembly import Finalizing, material_of
from service.store import runs as run_store
from service.store.client import Store
from service.store.rows import from_epoch_ms


def stored_run(store: Store, tenant: str, run_id: str) -> RunRecord:
    """The run's stored row (a trace-born run has one once finalized)."""
    run = run_store.get_run(store, tenant, run_id)
    if run is None:
        raise NotFound(f"run {run_id!r}")
    return run


def run_with_children(store: Store, tenant: str, run_id: str) -> tuple[RunRecord, list[Any]]:
    """The run and its child runs: as stored, else (a trace-born run not finalized yet) as its spans show
    them so far, all open."""
    run = run_store.get_run(store, tenant, run_id)
    if run is not None:
        return run, list(child_runs(store, tenant, run_id))
    tree = _open_trace(store, tenant, run_id)
    wanted = next((item for item in tree if item.base.run_id == run_id), None)
    if wanted is None:
        raise NotFound(f"run {run_id!r}")
    children = [_open_record(item) for item in tree if item.base.parent_run_id == run_id]
    return _open_record(wanted), children


def _open_trace(store: Store, tenant: str, run_id: str) -> list[Finalizing]:
    """The runs of the open trace-born run `run_id` names, or is a child of (`<run id>:<identity>`), the
    run first; [] when there is none."""
    for candidate in _run_and_parents(run_id):
        try:
            return material_of(store, tenant, candidate, None, None, datetime.now(UTC))
        except NotFound:
            continue
    return []


def _run_and_parents(run_id: str) -> Iterator[str]:
    """`run_id`, then each prefix of it before a `:` (longest first): a child run's id is its parent's
    and its identity, and either may hold a `:`."""
    yield run_id
    cut = len(run_id)
    while (cut := run_id.rfind(":", 0, cut)) > 0:
        yield run_id[:cut]


def _open_record(item: Finalizing) -> RunRecord:
    """An open trace-born run as its spans show it so far: their times, counts and tokens."""
    material, events = item.material, item.material.events
    return replace(
        item.base,
        started_at=material.started_at,
        ended_at=material.ended_at,
        run_at=material.started_at or item.base.run_at,
        event_count=len(events),
        tool_calls=sum(event.type == "tool_call" for event in events),
        errors=sum(event.type == "error_event" for event in events),
        total_tokens=sum(event.tokens for event in events),
    )


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
    """A page of a run's events from position `first_seq` on, and how many the run holds (an open
    trace-born run's: as its spans show them so far)."""
    if run_store.get_run(store, tenant, run_id) is None:
        item = next((item for item in _open_trace(store, tenant, run_id) if item.base.run_id == run_id), None)
        if item is None:
            raise NotFound(f"run {run_id!r}")
        events = item.material.events
        page = [
            {"seq": event.position, "event_id": event.event_id, "type": event.type,
             "timestamp": None if event.timestamp_ms is None else from_epoch_ms(event.timestamp_ms),
             "data": dict(event.data)}
            for event in events[first_seq : first_seq + limit]
        ]  # fmt: skip
        return EventPage(page, len(events))
    run = stored_run(store, tenant, run_id)
    total = run.event_count if run.finalized else run_store.next_event_seq(store, tenant, run_id)
    return EventPage(run_store.list_events(store, tenant, run_id, first_seq, limit), total)
