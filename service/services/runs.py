"""Run lifecycle: open, append events, finalize (diagnose, classify, store, emit reputation), read.

Batch-first: finalizing N runs costs one INSERT per table, so harnesses can send many runs per request.
Re-finalizing returns the stored result and writes nothing. Within a finalize, the run's own row is
written last: a crash before it leaves the run open, and the retry converges (failures collapse by
key, reputation events are skipped by id).

A whole run posted again under a run_id already finalized (a retry, `repute ingest` run twice) answers
the stored result when it is the same run, and is a conflict naming what differs when it is not: a
run_id names one run, and silently keeping the first of two different runs would hide a harness bug.
Identity, suite, task id, trial, metadata and the profile the run names are compared with the stored
record. The events are compared by `content_hash`, a sha256 of the events as canonical JSON (keys sorted)
that the finalize stores on the run: one serialization of the events when a run is written, no read of its
events back when it is posted again, and it still holds after the events' TTL has dropped them. Runs
finalized before the column existed (migration 0008) have no hash, and their events are not compared. The
`execution` object is not compared: the stored outcome stands.

Each run is diagnosed under the diagnosis profile that applies to it (SPEC §4.1, service.profiles): the one
it names itself, else the tenant's rules for its identity and input kind, else its input kind's default.
"""

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import Any

import orjson

from service.diagnosis import Diagnosis, Event, diagnose, normalize_events
from service.errors import ClientError, Conflict, FieldError, NotFound, StoreUnavailable
from service.judge import SessionAccumulator, to_run_events
from service.judge.records import decode_record
from service.outcome import ExecutionOutcome, classify_execution
from service.priority import in_turn
from service.profiles import TenantProfiles
from service.reputation.emit import FinalizedRun, events_for_run
from service.services import profiles as profile_service
from service.services.inputs import (
    FinalizeRequest,
    RunSpec,
    SessionInput,
    check_run_outcome,
    check_run_size,
    new_run_id,
    trace_spec,
)
from service.services.locks import holding, run_lock
from service.store import reputation as reputation_store
from service.store import runs as run_store
from service.store import sessions as session_store
from service.store import traces as trace_store
from service.store.client import Store
from service.store.records import RunRecord, next_version
from service.store.rows import from_epoch_ms, to_millis
from service.traces import decode_span
from service.traces.agents import map_runs
from service.vocab import INPUT_OF_KIND, ExecutionStatus, RunKind, RunStatus

log = logging.getLogger("repute.runs")
# How a run whose evidence cannot be diagnosed is closed (see finalize_undiagnosable).
UNDIAGNOSABLE_STAGE = "evaluator"
UNDIAGNOSABLE_REASON = "evaluator_error"
MESSAGE_CHARS = 1000
# Runs whose events come from OTLP telemetry, and where it is received.
FED_BY_OTLP: dict[str, str] = {RunKind.SESSION: "/v1/logs", RunKind.TRACE: "/v1/traces"}


def canonical_text(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def content_hash(events: Sequence[Any]) -> str:
    """What a run was finalized from, for telling a repeated post from a different run."""
    return hashlib.sha256(orjson.dumps(list(events), option=orjson.OPT_SORT_KEYS)).hexdigest()


def new_record(tenant: str, spec: RunSpec, run_id: str, now: datetime) -> RunRecord:
    """The open version of a new run."""
    now = to_millis(now)
    return RunRecord(
        tenant=tenant,
        run_id=run_id,
        identity=spec.identity,
        kind=spec.kind,
        suite=spec.suite,
        task_id=spec.task_id,
        trial=spec.trial,
        metadata=canonical_text(spec.metadata),
        profile=spec.profile,
        parent_run_id=spec.parent_run_id,
        created_at=now,
        run_at=now,
        version=next_version(now),
    )


def stored_run(store: Store, tenant: str, run_id: str) -> RunRecord:
    run = run_store.get_run(store, tenant, run_id)
    if run is None:
        raise NotFound(f"run {run_id!r}")
    return run


def open_run(store: Store, tenant: str, spec: RunSpec, now: datetime) -> RunRecord:
    """Opens a run; opening an existing run again returns it unchanged (same identity required)."""
    run_id = spec.run_id or new_run_id()
    if spec.profile:
        profile_service.require_known(store, tenant, [(spec.profile, "profile")])
    if spec.parent_run_id:
        require_parents(store, tenant, [(spec.parent_run_id, "parent_run_id")], {run_id})
    with run_lock(tenant, run_id):
        existing = run_store.get_run(store, tenant, run_id)
        if existing is not None:
            if existing.identity != spec.identity:
                raise Conflict(f"run {run_id} already exists for another identity")
            return existing
        record = new_record(tenant, spec, run_id, now)
        run_store.insert_runs(store, [record])
        return record


def append_events(
    store: Store, tenant: str, run_id: str, events: Sequence[dict[str, Any]], now: datetime, max_events: int
) -> int:
    """Appends a batch (all or nothing); returns the run's event count afterwards."""
    now = to_millis(now)
    normalized = normalize_events(list(events))
    check_run_outcome(None, events)
    with run_lock(tenant, run_id):
        run = stored_run(store, tenant, run_id)
        if run.finalized:
            raise Conflict(f"run {run_id} is finalized; it takes no more events")
        if run.kind in FED_BY_OTLP:  # its events are mapped from its telemetry when it is finalized
            raise Conflict(f"run {run_id} is an OTLP {run.kind}; send its telemetry to {FED_BY_OTLP[run.kind]}")
        first_seq = run_store.next_event_seq(store, tenant, run_id)
        check_run_size(len(events), max_events, "events", stored=first_seq)
        run_store.insert_events(store, run_store.event_rows(tenant, run_id, normalized, first_seq, now))
        return first_seq + len(events)


def _timestamps(events: Sequence[Event]) -> tuple[datetime | None, datetime | None]:
    stamps = [e.timestamp_ms for e in events if e.timestamp_ms is not None]
    if not stamps:
        return None, None
    return from_epoch_ms(min(stamps)), from_epoch_ms(max(stamps))


@dataclass
class _Finalized:
    record: RunRecord
    failures: list[list[Any]]
    reputation: list[Any]


def primary_failure_of(view: dict[str, Any]) -> str | None:
    primary = view.get("primary_diagnosis") or {}
    return primary.get("root_cause_failure_type", view.get("root_cause_failure_type"))


def _finalize_one(
    request: FinalizeRequest, now: datetime, pass_threshold: float, profiles: TenantProfiles
) -> _Finalized:
    base = request.base
    diagnosis = diagnose(request.events, profiles.resolve(base.identity, INPUT_OF_KIND[base.kind], base.profile))
    view = diagnosis.to_dict()
    outcome = classify_execution(
        request.execution, request.events, view["trust_score"], pass_threshold, readiness=view["readiness_level"]
    )
    started_at, ended_at = _timestamps(request.normalized_events)
    started_at, ended_at = request.started_at or started_at, request.ended_at or ended_at
    performance = request.session_performance
    record = base.with_version(
        next_version(now),
        started_at=started_at,
        ended_at=ended_at,
        run_at=ended_at or now,
        finalized_at=now,
        status=RunStatus.FINALIZED,
        **outcome_fields(request.execution, outcome),
        **verdict_fields(diagnosis),
        session_composite=performance["composite"] if performance else None,
        session_performance=canonical_text(performance) if performance else "",
        content_hash=content_hash(request.events),
    )
    failures = failure_rows(record, view)
    emitted = events_for_run(emission_view(record, cause_triples(view)))
    return _Finalized(record, failures, emitted)


def verdict_fields(diagnosis: Diagnosis) -> dict[str, Any]:
    """The run columns its diagnosis gives (a finalize, and a re-diagnosis by the rebuild)."""
    view = diagnosis.to_dict()
    evidence = view["evidence_summary"]
    return {
        "trust_score": view["trust_score"],
        "readiness": view["readiness_level"],
        "primary_failure": primary_failure_of(view) or "",
        "dimension_scores": dict(view["scores"]),
        "event_count": evidence["event_count"],
        "tool_calls": evidence["tool_calls"],
        "errors": evidence["errors"],
        "total_tokens": view["cost_analysis"]["total_tokens"],
        "diagnosis": diagnosis.canonical_json().decode(),
        "diagnosis_hash": view["diagnosis_hash"],
    }


def outcome_fields(execution: dict[str, Any] | None, outcome: ExecutionOutcome) -> dict[str, Any]:
    """The run columns its execution outcome gives (SPEC §6). `caller_score` is the caller's score when it
    decided a quality outcome, else None (the score is the trust's): a re-diagnosis classifies again by it."""
    from_caller = outcome.status != ExecutionStatus.EXECUTION_ERROR and (execution or {}).get("score") is not None
    return {
        "execution_status": outcome.status,
        "failure_stage": outcome.stage or "",
        "failure_reason_code": outcome.reason_code or "",
        "failure_message": outcome.message or "",
        "score": outcome.score,
        "caller_score": outcome.score if from_caller else None,
    }


def cause_triples(view: dict[str, Any]) -> list[tuple[str, str, int]]:
    """A diagnosis's causes as (failure type, severity, impact score), in cause order."""
    return [(c["type"], c["severity"], c["impact_score"]) for c in view["failure_causes"]]


def failure_rows(record: RunRecord, view: dict[str, Any]) -> list[list[Any]]:
    """The run_failures rows of a run's quality verdict (an execution error has none)."""
    if record.execution_status == ExecutionStatus.EXECUTION_ERROR:
        return []
    return run_store.failure_rows(record, view["failure_causes"])


def emission_view(record: RunRecord, causes: Sequence[tuple[str, str, int]]) -> FinalizedRun:
    """What reputation emission needs of a finalized run: its record and its causes (failure type,
    severity, impact score); the finalize, and the rebuild from the stored record and run_failures."""
    assert record.trust_score is not None  # every finalized run has one
    return FinalizedRun(
        tenant=record.tenant,
        run_id=record.run_id,
        identity=record.identity,
        kind=record.kind,
        timestamp=record.run_at,
        execution_status=record.execution_status,
        trust_score=record.trust_score,
        causes=causes,
        failure_stage=record.failure_stage,
        failure_reason_code=record.failure_reason_code,
        session_composite=record.session_composite,
        readiness=record.readiness,
        event_count=record.event_count,
    )


def finalize_batch(
    store: Store,
    tenant: str,
    requests: Sequence[FinalizeRequest],
    now: datetime,
    pass_threshold: float,
    event_rows: Sequence[Sequence[Any]] = (),
) -> list[RunRecord]:
    """Diagnoses and stores runs that are not finalized yet: one INSERT per table for the batch. The runs'
    raw events (when given), failures and reputation events are independent and written side by side;
    the run rows only once all of them are stored."""
    now = to_millis(now)
    profiles = profile_service.in_force(store, tenant)
    done = in_turn(partial(_finalize_one, now=now, pass_threshold=pass_threshold, profiles=profiles), requests)
    failures = [row for item in done for row in item.failures]
    reputation = [event for item in done for event in item.reputation]
    store.together(
        partial(reputation_store.insert_events, store, tenant, reputation),
        partial(run_store.insert_events, store, event_rows),
        partial(run_store.insert_failures, store, failures),
    )
    run_store.insert_runs(store, [item.record for item in done])
    return [item.record for item in done]


def finalize_run(
    store: Store, tenant: str, run_id: str, execution: dict[str, Any] | None, now: datetime, pass_threshold: float
) -> RunRecord:
    """Finalizes a run (idempotent: a finalized run is returned as stored). A trace-born run has no row
    before its finalize: its spans make it, and its child runs (SPEC §3.5), whose rows are written in the
    same insert as its own, so no reader sees it finalized with a child still to come."""
    now = to_millis(now)
    check_run_outcome(execution, [])
    with run_lock(tenant, run_id):
        run = run_store.get_run(store, tenant, run_id)
        if run is not None and run.finalized:
            return run
        event_rows: list[list[Any]] = []
        if run is None or run.kind == RunKind.TRACE:
            requests, event_rows = trace_requests(store, tenant, run_id, run, execution, now)
        elif run.kind == RunKind.SESSION:
            events, performance = session_material(store, run, now)
            requests = [FinalizeRequest(run, events, execution, performance)]
        else:
            requests = [FinalizeRequest(run, run_store.load_event_payloads(store, tenant, run_id), execution)]
        return finalize_batch(store, tenant, requests, now, pass_threshold, event_rows)[0]


@dataclass
class Sweep:
    """What one pass of a background finalizer did."""

    finalized: int = 0
    undiagnosable: int = 0  # finalized as execution errors naming why
    retried: int = 0  # an unexpected failure: left open for the next pass


def finalize_each(store: Store, due: Sequence[tuple[str, str]], now: datetime, pass_threshold: float) -> Sweep:
    """Finalizes each (tenant, run id) in turn. A run that cannot be finalized never holds up the
    others (of any tenant); only the store being down ends the pass."""
    sweep = Sweep()
    for tenant, run_id in due:
        try:
            finalize_run(store, tenant, run_id, None, now, pass_threshold)
            sweep.finalized += 1
        except StoreUnavailable:
            raise
        except ClientError as error:
            # Its stored evidence cannot be diagnosed, and never will be: close it, saying why.
            log.warning("run %s of tenant %s cannot be diagnosed: %s", run_id, tenant, error.located())
            finalize_undiagnosable(store, tenant, run_id, error, now, pass_threshold)
            sweep.undiagnosable += 1
        except Exception:
            log.exception("run %s of tenant %s could not be finalized; retried next pass", run_id, tenant)
            sweep.retried += 1
    return sweep


def finalize_undiagnosable(
    store: Store, tenant: str, run_id: str, error: ClientError, now: datetime, pass_threshold: float
) -> RunRecord:
    """Finalizes a run whose stored evidence cannot be diagnosed as an execution error of the evaluator
    stage whose message names the fault, so it stops coming back; its raw evidence stays stored."""
    execution = {
        "status": ExecutionStatus.EXECUTION_ERROR,
        "stage": UNDIAGNOSABLE_STAGE,
        "reason": UNDIAGNOSABLE_REASON,
        "message": f"the stored evidence cannot be diagnosed: {error.located()}"[:MESSAGE_CHARS],
    }
    with run_lock(tenant, run_id):
        run = stored_run(store, tenant, run_id)
        if run.finalized:
            return run
        return finalize_batch(store, tenant, [FinalizeRequest(run, [], execution)], now, pass_threshold)[0]


def session_material(store: Store, run: RunRecord, now: datetime) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """An OTLP session's run events (SPEC §3.2 mapping, stored so /events shows them) and its score."""
    records = [decode_record(payload) for payload in session_store.load_payloads(store, run.tenant, run.run_id)]
    events = to_run_events(records)
    run_store.insert_events(store, run_store.event_rows(run.tenant, run.run_id, normalize_events(events), 0, now))
    accumulator = SessionAccumulator(run.run_id)
    for record in records:
        accumulator.add(record)
    return events, accumulator.score(masque=run.identity).to_dict()


def trace_requests(
    store: Store, tenant: str, run_id: str, run: RunRecord | None, execution: dict[str, Any] | None, now: datetime
) -> tuple[list[FinalizeRequest], list[list[Any]]]:
    """A trace-born run from all of its stored spans (SPEC §3.4), and a child run for each other agent in
    it (SPEC §3.5), the run first: their names, their events (stored with their span ids, so /events shows
    them) and the times their spans cover, and the execution error they show (the caller's `execution`
    is the run's). Raises NotFound when no stored trace belongs to `run_id`."""
    traces = trace_store.traces_of_runs(store, tenant, [run_id])
    if not traces:
        raise NotFound(f"run {run_id!r}")
    payloads = trace_store.load_payloads(store, tenant, [trace.trace_id for trace in traces])
    parent, *children = map_runs(run_id, [decode_span(payload) for payload in payloads])
    taken = run_store.run_states(store, tenant, [child.run_id for child in children]) if children else {}
    requests, rows = [], []
    for mapped in [parent, *(child for child in children if child.run_id not in taken)]:
        spec = trace_spec(mapped)
        base = run if mapped is parent and run is not None else new_record(tenant, spec, mapped.run_id, now)
        named = replace(
            base,
            identity=spec.identity if mapped.identity else base.identity,
            suite=spec.suite or base.suite,
            task_id=spec.task_id or base.task_id,
            trial=base.trial if spec.trial is None else spec.trial,
        )
        normalized = normalize_events(mapped.events)
        requests.append(
            FinalizeRequest(
                named,
                mapped.events,
                (execution if mapped is parent else None) or mapped.execution,
                normalized=normalized,
                started_at=_from_nanos(mapped.started_unix_nano),
                ended_at=_from_nanos(mapped.ended_unix_nano),
            )
        )
        rows += run_store.event_rows(tenant, mapped.run_id, normalized, 0, now)
    return requests, rows


def _from_nanos(unix_nano: int | None) -> datetime | None:
    return None if unix_nano is None else from_epoch_ms(unix_nano // 1_000_000)


@dataclass(frozen=True)
class Ingested:
    record: RunRecord
    created: bool


def ingest_sessions(
    store: Store, tenant: str, sessions: Sequence[SessionInput], now: datetime, pass_threshold: float
) -> list[Ingested]:
    """Stores and finalizes whole runs. A run id already finalized returns the stored run untouched when
    the run sent is the same, and is a conflict when it differs; one that is open (being streamed through
    /v1/runs) is a conflict."""
    now = to_millis(now)
    run_ids = [s.spec.run_id or new_run_id() for s in sessions]
    if len(set(run_ids)) != len(run_ids):
        raise Conflict("a batch names the same run_id twice")
    named = [(s.spec.profile, f"{_prefix(i, sessions)}profile") for i, s in enumerate(sessions) if s.spec.profile]
    if named:
        profile_service.require_known(store, tenant, named)
    parents = [
        (s.spec.parent_run_id, f"{_prefix(i, sessions)}parent_run_id")
        for i, s in enumerate(sessions)
        if s.spec.parent_run_id
    ]
    require_parents(store, tenant, parents, set(run_ids))
    with holding(tenant, run_ids):
        states = run_store.run_states(store, tenant, run_ids)
        for run_id, status in states.items():
            if status != RunStatus.FINALIZED:
                raise Conflict(f"run {run_id} is open; append its events and finalize it instead")
        existing = run_store.get_runs(store, tenant, list(states)) if states else {}
        requests, rows = [], []
        for index, (run_id, session) in enumerate(zip(run_ids, sessions, strict=True)):
            if run_id in existing:
                _require_same(existing[run_id], session, _prefix(index, sessions))
                continue
            rows.extend(run_store.event_rows(tenant, run_id, session.normalized_events, 0, now))
            base = new_record(tenant, session.spec, run_id, now)
            requests.append(
                FinalizeRequest(
                    base, session.events, session.execution, session.session_performance, session.normalized
                )
            )
        finalized = iter(finalize_batch(store, tenant, requests, now, pass_threshold, rows))
        return [
            Ingested(existing[run_id], False) if run_id in existing else Ingested(next(finalized), True)
            for run_id in run_ids
        ]


def require_parents(store: Store, tenant: str, named: Sequence[tuple[str, str]], sent: set[str]) -> None:
    """Each (parent run id, field) names a run of this tenant: stored, or sent in the same request (SPEC
    §3.5); else a 422 naming the field. Another tenant's run is as unknown as a run that does not exist."""
    wanted = [(parent, field) for parent, field in named if parent not in sent]
    stored = run_store.run_states(store, tenant, [parent for parent, _ in wanted]) if wanted else {}
    for parent, field in wanted:
        if parent not in stored:
            raise FieldError(field, f"parent_run_id {parent!r} names no run of this tenant")


def _prefix(index: int, sessions: Sequence[SessionInput]) -> str:
    """Where a run's fields are named in a batch's errors: `sessions[2].` when there are several."""
    return f"sessions[{index}]." if len(sessions) > 1 else ""


def _require_same(stored: RunRecord, session: SessionInput, prefix: str) -> None:
    """A run posted again must be the stored one; a conflict names each field that differs."""
    spec = session.spec
    sent = {
        "identity": spec.identity,
        "suite": spec.suite,
        "task_id": spec.task_id,
        "trial": spec.trial,
        "metadata": canonical_text(spec.metadata),
        "profile": spec.profile,
        "parent_run_id": spec.parent_run_id,
    }
    differ = [name for name, value in sent.items() if getattr(stored, name) != value]
    if stored.content_hash and stored.content_hash != content_hash(session.events):
        differ.append("events")
    if differ:
        raise Conflict(
            f"run {stored.run_id} already exists with a different {', '.join(differ)}: a run_id names one run",
            field=prefix + differ[0],
        )


def ingest_each(
    store: Store, sessions: Sequence[tuple[str, SessionInput]], now: datetime, pass_threshold: float
) -> list[Ingested | ClientError]:
    """Runs of separate requests (tenant, run), stored as one batch per tenant: one INSERT per table. A
    batch that is refused (a run id sent twice, a run still open) is retried run by run, so each run gets
    the answer it would have had alone."""
    by_tenant: dict[str, list[int]] = {}
    for index, (tenant, _) in enumerate(sessions):
        by_tenant.setdefault(tenant, []).append(index)
    outcomes: dict[int, Ingested | ClientError] = {}
    for tenant, indexes in by_tenant.items():
        runs = [sessions[i][1] for i in indexes]
        try:
            outcomes.update(zip(indexes, ingest_sessions(store, tenant, runs, now, pass_threshold), strict=True))
        except ClientError:
            outcomes.update((i, _ingest_alone(store, tenant, sessions[i][1], now, pass_threshold)) for i in indexes)
    return [outcomes[index] for index in range(len(sessions))]


def _ingest_alone(
    store: Store, tenant: str, session: SessionInput, now: datetime, pass_threshold: float
) -> Ingested | ClientError:
    try:
        return ingest_sessions(store, tenant, [session], now, pass_threshold)[0]
    except ClientError as exc:
        return exc


def list_runs(store: Store, tenant: str, **filters: Any) -> list[RunRecord]:
    return run_store.list_runs(store, tenant, **filters)


MAX_CHILD_RUNS = 1000  # a run's agents are a handful; a detail lists this many at most


def child_runs(store: Store, tenant: str, run_id: str) -> list[RunRecord]:
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
