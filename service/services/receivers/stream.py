"""Runs opened and fed through /v1/runs (SPEC §9): the events of each request normalized and serialized
once, stored in order, all or nothing; the run is judged at its finalize (service/services/finalize.py)."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from service.diagnosis import Event, parse_run
from service.errors import Conflict, FieldError
from service.model import RunHeader, RunMaterial, RunRecord
from service.services import profiles as profile_service
from service.services.assembly import header_of, new_record
from service.services.inputs import check_request_size, check_run_size, check_staged_errors, new_run_id
from service.services.locks import run_lock
from service.services.receivers.whole import require_parents, trace_holds
from service.services.runs import stored_run
from service.settings import Settings
from service.store import runs as run_store
from service.store import traces as trace_store
from service.store import writer
from service.store.client import Store
from service.store.rows import to_millis
from service.vocab import RunKind

# Runs whose events come from OTLP telemetry, and where it is received.
FED_BY_OTLP: dict[str, str] = {RunKind.SESSION: "/v1/logs", RunKind.TRACE: "/v1/traces"}


def open_run(store: Store, tenant: str, header: RunHeader, now: datetime) -> RunRecord:
    """Opens a run; opening an existing run again returns it unchanged (same identity required)."""
    run_id = header.run_id or new_run_id()
    if header.profile:
        profile_service.require_known(store, tenant, [(header.profile, "profile")])
    if header.parent_run_id == run_id:
        raise FieldError("parent_run_id", f"parent_run_id makes a cycle: {run_id} → {run_id}")
    if header.parent_run_id:
        require_parents(store, tenant, [(header.parent_run_id, "parent_run_id")], {run_id})
    with run_lock(tenant, run_id):
        existing = run_store.get_run(store, tenant, run_id)
        if existing is not None:
            if existing.identity != header.identity:
                raise Conflict(f"run {run_id} already exists for another identity")
            return existing
        if trace_store.trace_held(store, tenant, [run_id]):
            raise trace_holds(run_id)
        record = new_record(tenant, header, run_id, now)
        writer.runs(store, [record])
        return record


def append_events(
    store: Store, tenant: str, run_id: str, events: Sequence[Event], now: datetime, max_events: int
) -> int:
    """Appends a batch of normalized events (all or nothing), each serialized once; returns the run's event
    count afterwards."""
    now = to_millis(now)
    check_staged_errors([event.data for event in events])
    with run_lock(tenant, run_id):
        run = stored_run(store, tenant, run_id)
        if run.finalized:
            raise Conflict(f"run {run_id} is finalized; it takes no more events")
        if run.kind in FED_BY_OTLP:  # its events are mapped from its telemetry when it is finalized
            raise Conflict(f"run {run_id} is an OTLP {run.kind}; send its telemetry to {FED_BY_OTLP[run.kind]}")
        first_seq = run_store.next_event_seq(store, tenant, run_id)
        check_run_size(len(events), max_events, "events", stored=first_seq)
        material = RunMaterial(header_of(run), list(events))
        writer.run_events(
            store, run_store.event_rows(tenant, run_id, material.events, material.payloads, first_seq, now)
        )
        return first_seq + len(events)


@dataclass(frozen=True)
class Appended:
    accepted: int
    event_count: int  # the run's, afterwards


def append_posted(store: Store, tenant: str, run_id: str, body: bytes, settings: Settings, now: datetime) -> Appended:
    """POST /v1/runs/{run_id}/events: the body's events parsed, within the request's cap, appended."""
    parsed = parse_run(body)
    events = parsed.normalized
    assert events is not None  # the parser normalizes what it reads
    check_request_size(len(events), settings.max_events_per_request, field="events")
    return Appended(len(events), append_events(store, tenant, run_id, events, now, settings.max_events_per_run))
