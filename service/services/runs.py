"""Reading runs: one run, a page of runs, a run's child runs (SPEC §3.5) and its stored events. Runs are
written by the receivers (service/services/receivers/) and the finalize (service/services/finalize.py).

A trace-born run has no row until it is finalized; until then it is read from its spans as they stand
(SPEC §3.4 "A running agent is visible"): `status: "open"`, its events so far and its agent tree, under
the run id it has so far, each read mapping the spans afresh (the assembly the finalize uses)."""

from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from service.errors import NotFound
from service.model import RunRecord, RunSummary
from service.model.record import summary_of
from service.services.assembly import Finalizing, material_of
from service.store import runs as run_store
from service.store import traces as trace_store
from service.store.client import Store
from service.store.rows import epoch_ms, from_epoch_ms
from service.store.traces import OpenRun, OpenRunBounds
from service.vocab import RunStatus


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
    for candidate in run_and_parents(run_id):
        try:
            return material_of(store, tenant, candidate, None, None, datetime.now(UTC))
        except NotFound:
            continue
    return []


def run_and_parents(run_id: str) -> Iterator[str]:
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
        cost_usd=material.cost_usd,
    )


# How far back a list looks for the traces of open trace-born runs: a running server finalizes a run once it
# settles, or goes idle for REPUTE_SESSION_IDLE_MINUTES. A run left open longer (no server sweeping) is still
# readable by its id; it is listed once finalized.
OPEN_RUNS_ACTIVE = timedelta(days=1)
# A list merges at most this many open trace-born runs (the most recently started), each mapped from its spans.
OPEN_RUNS_AT_MOST = 50
# The filters an open run never passes: it has no verdict yet.
VERDICT_FILTERS = ("readiness", "execution_status", "primary_failure")
NANOS_PER_MS = 1_000_000


def list_runs(store: Store, tenant: str, now: datetime, **filters: Any) -> list[RunSummary]:
    """A page of the runs list (service.store.runs.list_runs's filters and cursor), newest first, with the
    open trace-born runs (no `runs` row until their finalize) that belong on it merged in by run time, each
    as its spans show it so far (SPEC §3.4 "A running agent is visible")."""
    if filters.get("status") not in ("", None, RunStatus.OPEN) or any(filters.get(name) for name in VERDICT_FILTERS):
        return run_store.list_runs(store, tenant, **filters)
    bounds = OpenRunBounds(
        since_ns=_nanos(filters.get("since")),
        until_ns=_nanos(filters.get("until")),
        before_ns=None if filters.get("after") is None else (epoch_ms(filters["after"][0]) + 1) * NANOS_PER_MS,
    )
    active_since = now - OPEN_RUNS_ACTIVE
    # Both reads side by side (each costs about as much to plan as to run); the page's floor comes after.
    opening = store.beside(lambda: trace_store.open_trace_runs(store, tenant, active_since, bounds, OPEN_RUNS_AT_MOST))
    stored = run_store.list_runs(store, tenant, **filters)
    limit = filters["limit"]
    floor_ns = _nanos(stored[-1].run_at) if len(stored) == limit else None  # a full page: older open runs come later
    candidates = _over_the_floor(store, tenant, opening.result(), floor_ns, active_since, bounds)
    if candidates:  # a run finalized since its spans were read has a row now, which the page shows or will
        with_row = run_store.run_states(store, tenant, [run.run_id for run in candidates])
        candidates = [run for run in candidates if run.run_id not in with_row]
    opened = [summary_of(_open_record(item)) for run in candidates for item in _open_trace(store, tenant, run.run_id)]
    shown = [run for run in opened if _listed(run, filters)]
    return sorted([*stored, *shown], key=lambda run: (run.run_at, run.run_id), reverse=True)[:limit]


def _over_the_floor(
    store: Store, tenant: str, found: list[OpenRun], floor_ns: int | None, active_since: datetime, bounds: OpenRunBounds
) -> list[OpenRun]:
    """The open runs `found` (read without the page's floor) whose spans reach the floor; read again with it
    when runs under it took places the read's limit may have denied to runs over it."""
    if floor_ns is None:
        return found
    above = [run for run in found if run.last_start_ns >= floor_ns]
    if len(found) < OPEN_RUNS_AT_MOST or len(above) == len(found):
        return above
    return trace_store.open_trace_runs(
        store, tenant, active_since, replace(bounds, floor_ns=floor_ns), OPEN_RUNS_AT_MOST
    )


def _listed(run: RunSummary, filters: dict[str, Any]) -> bool:
    """Whether an open run passes the list's filters (those of sql/runs_filters/, as the store applies them)."""
    found = filters.get("q", "").lower()
    after = filters.get("after")
    return (
        all(not filters.get(name) or filters[name] == value for name, value in (
            ("identity", run.identity), ("suite", run.suite), ("parent", run.parent_run_id),
        ))
        and (not found or found in run.identity.lower() or found in run.run_id.lower())
        and (filters.get("since") is None or run.run_at >= filters["since"])
        and (filters.get("until") is None or run.run_at < filters["until"])
        and (after is None or (run.run_at, run.run_id) < after)
    )  # fmt: skip


def _nanos(moment: datetime | None) -> int | None:
    return None if moment is None else epoch_ms(moment) * NANOS_PER_MS


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
