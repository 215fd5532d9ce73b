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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import Any

import orjson

from service.diagnosis import Diagnosis, Event, diagnose, normalize_events, parse_run, parse_runs
from service.errors import ClientError, Conflict, FieldError, NotFound, StoreUnavailable
from service.judge import SessionAccumulator, to_run_events
from service.judge.records import decode_record
from service.outcome import ExecutionOutcome, classify_execution
from service.priority import stepping_aside
from service.profiles import TenantProfiles
from service.reputation.emit import FinalizedRun, events_for_run
from service.services import profiles as profile_service
from service.services.inputs import (
    UNKNOWN_IDENTITY,
    FinalizeRequest,
    RunSpec,
    SessionInput,
    check_request_size,
    check_run_outcome,
    check_run_size,
    new_run_id,
    session_inputs,
    trace_spec,
)
from service.services.locks import holding, run_lock
from service.settings import Settings
from service.store import reputation as reputation_store
from service.store import runs as run_store
from service.store import sessions as session_store
from service.store import traces as trace_store
from service.store.client import Store
from service.store.records import RunRecord, next_version
from service.store.rows import from_epoch_ms, to_millis
from service.traces import decode_span
from service.traces.agents import map_runs
from service.vocab import INPUT_OF_KIND, MESSAGE_CHARS, ExecutionStatus, RunKind, RunStatus

log = logging.getLogger("repute.runs")
# How a run whose evidence cannot be diagnosed is closed (see finalize_undiagnosable).
UNDIAGNOSABLE_STAGE = "evaluator"
UNDIAGNOSABLE_REASON = "evaluator_error"
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


@dataclass(frozen=True)
class Appended:
    accepted: int
    event_count: int  # the run's, afterwards


def append_posted(store: Store, tenant: str, run_id: str, body: bytes, settings: Settings, now: datetime) -> Appended:
    """POST /v1/runs/{run_id}/events: the body's events parsed, within the request's cap, appended."""
    events = parse_run(body).events
    check_request_size(len(events), settings.max_events_per_request, field="events")
    return Appended(len(events), append_events(store, tenant, run_id, events, now, settings.max_events_per_run))


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


def _finalize_one(
    request: FinalizeRequest, now: datetime, pass_threshold: float, profiles: TenantProfiles
) -> _Finalized:
    base = request.base
    profile = profiles.resolve(base.identity, INPUT_OF_KIND[base.kind], base.profile)
    diagnosis = diagnose(request.events, profile)
    outcome = classify_execution(
        request.execution, request.events, diagnosis.trust_score, pass_threshold, readiness=diagnosis.readiness_level
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
    failures = failure_rows(record, diagnosis)
    emitted = events_for_run(emission_view(record, cause_triples(diagnosis)))
    return _Finalized(record, failures, emitted)


def verdict_fields(diagnosis: Diagnosis) -> dict[str, Any]:
    """The run columns its diagnosis gives (a finalize, and a re-diagnosis by the rebuild)."""
    evidence = diagnosis.evidence_summary
    return {
        "trust_score": diagnosis.trust_score,
        "readiness": str(diagnosis.readiness_level),
        "primary_failure": diagnosis.primary_failure_type or "",
        "dimension_scores": dict(diagnosis.scores),
        "event_count": diagnosis.event_count,
        "tool_calls": evidence["tool_calls"],
        "errors": evidence["errors"],
        "total_tokens": diagnosis.total_tokens,
        "diagnosis": diagnosis.canonical_json().decode(),
        "diagnosis_hash": diagnosis.diagnosis_hash,
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


def cause_triples(diagnosis: Diagnosis) -> list[tuple[str, str, int]]:
    """A diagnosis's causes as (failure type, severity, impact score), in cause order."""
    return [(cause.type, cause.severity, cause.impact_score) for cause in diagnosis.causes]


def failure_rows(record: RunRecord, diagnosis: Diagnosis) -> list[list[Any]]:
    """The run_failures rows of a run's quality verdict (an execution error has none)."""
    if record.execution_status == ExecutionStatus.EXECUTION_ERROR:
        return []
    return run_store.failure_rows(record, diagnosis.causes)


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
    raw events (when given) and failures are written side by side, then their reputation events, then the
    run rows: a write that fails leaves the runs unfinalized (a retry converges) and, when it fails before
    the reputation, no reputation of runs that were never stored."""
    now = to_millis(now)
    profiles = profile_service.in_force(store, tenant)
    done = stepping_aside(partial(_finalize_one, now=now, pass_threshold=pass_threshold, profiles=profiles), requests)
    failures = [row for item in done for row in item.failures]
    reputation = [event for item in done for event in item.reputation]
    store.together(
        partial(run_store.insert_events, store, event_rows),
        partial(run_store.insert_failures, store, failures),
    )
    reputation_store.insert_events(store, tenant, reputation)
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


def finalize_or_close(store: Store, tenant: str, run_id: str, now: datetime, pass_threshold: float) -> bool:
    """A background finalize (the sweeper's): True when the run was finalized. A run that cannot be is
    closed as an execution error naming why (`finalize_undiagnosable`), and False answered, so it never
    comes back: a retry would fail the same way. The store being down is raised (the next pass retries)."""
    try:
        finalize_run(store, tenant, run_id, None, now, pass_threshold)
        return True
    except StoreUnavailable:
        raise
    except Exception as error:
        log.warning("run %s of tenant %s cannot be diagnosed: %s", run_id, tenant, _fault(error), exc_info=True)
        finalize_undiagnosable(store, tenant, run_id, error, now, pass_threshold)
        return False


def _fault(error: Exception) -> str:
    return error.located() if isinstance(error, ClientError) else f"{type(error).__name__}: {error}"


def finalize_undiagnosable(
    store: Store, tenant: str, run_id: str, error: Exception, now: datetime, pass_threshold: float
) -> RunRecord:
    """Finalizes a run whose stored evidence cannot be diagnosed as an execution error of the evaluator
    stage whose message names the fault, so it stops coming back; its raw evidence stays stored. A
    trace-born run, which has no row before its finalize, gets one under the identity `unknown`."""
    execution = {
        "status": ExecutionStatus.EXECUTION_ERROR,
        "stage": UNDIAGNOSABLE_STAGE,
        "reason": UNDIAGNOSABLE_REASON,
        "message": f"the stored evidence cannot be diagnosed: {_fault(error)}"[:MESSAGE_CHARS],
    }
    with run_lock(tenant, run_id):
        run = run_store.get_run(store, tenant, run_id)
        if run is not None and run.finalized:
            return run
        if run is None:
            run = new_record(tenant, RunSpec(UNKNOWN_IDENTITY, run_id, kind=RunKind.TRACE), run_id, to_millis(now))
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


def ingest_batch(store: Store, tenant: str, body: bytes, settings: Settings, now: datetime) -> list[Ingested]:
    """POST /v1/sessions/batch: the body's runs parsed, checked and ingested, all or nothing."""
    sessions = session_inputs(parse_runs(body), settings)
    return ingest_sessions(store, tenant, sessions, now, settings.quality_pass_threshold)


def ingest_posted(
    store: Store, tenant: str, bodies: Sequence[bytes], settings: Settings, now: datetime
) -> list[Ingested | ClientError]:
    """POST /v1/sessions requests of one tenant written together: each body parsed and checked on its own
    (one that is refused fails alone), the others ingested as one batch (`ingest_each`)."""
    parsed: list[SessionInput | ClientError] = []
    for body in bodies:
        try:
            parsed.append(session_inputs([parse_run(body)], settings)[0])
        except ClientError as refused:
            parsed.append(refused)
    valid = [item for item in parsed if isinstance(item, SessionInput)]
    stored = iter(ingest_each(store, tenant, valid, now, settings.quality_pass_threshold) if valid else ())
    return [item if isinstance(item, ClientError) else next(stored) for item in parsed]


def ingest_sessions(
    store: Store, tenant: str, sessions: Sequence[SessionInput], now: datetime, pass_threshold: float
) -> list[Ingested]:
    """Stores and finalizes a batch of whole runs, all or nothing: a run refused refuses the batch (its
    error names the run: `sessions[2].profile`). A run id already finalized returns the stored run untouched
    when the run sent is the same, and is a conflict when it differs; one that is open (being streamed
    through /v1/runs) is a conflict; a batch naming one run id twice is a conflict."""
    run_ids = [s.spec.run_id or new_run_id() for s in sessions]
    if len(set(run_ids)) != len(run_ids):
        raise Conflict("a batch names the same run_id twice")
    outcomes = _ingest(store, tenant, run_ids, sessions, now, pass_threshold, lambda i: _prefix(i, sessions), True)
    return [outcome for outcome in outcomes if isinstance(outcome, Ingested)]  # whole: none is refused


def ingest_each(
    store: Store, tenant: str, sessions: Sequence[SessionInput], now: datetime, pass_threshold: float
) -> list[Ingested | ClientError]:
    """Whole runs of separate requests of one tenant, written together (the write pool groups the single
    runs queued meanwhile): each is answered as if it had come alone, in the order they came, and a run
    refused fails alone. A run id sent twice is the first's run, as a repeat of a stored run is."""
    run_ids = [s.spec.run_id or new_run_id() for s in sessions]
    return _ingest(store, tenant, run_ids, sessions, now, pass_threshold, lambda _: "", False)


def _ingest(
    store: Store,
    tenant: str,
    run_ids: list[str],
    sessions: Sequence[SessionInput],
    now: datetime,
    pass_threshold: float,
    prefix: Callable[[int], str],
    whole: bool,
) -> list[Ingested | ClientError]:
    """Decides each run before anything is written: refused, a repeat of a stored run or of an earlier one
    of the same request (its answer is that run's; a different run under the same id is a conflict), or
    new. Then finalizes the new ones in one batch. With `whole`, a run refused refuses them all (its error
    is raised) and nothing is written."""
    now = to_millis(now)
    with holding(tenant, sorted(set(run_ids))):
        refused = _refusals(store, tenant, run_ids, sessions, prefix)
        stored = run_store.get_runs(store, tenant, sorted(set(run_ids)))
        first: dict[str, int] = {}
        for index, run_id in enumerate(run_ids):
            if index in refused:
                continue
            repeated = stored.get(run_id) or _unwritten(tenant, run_id, sessions, first, now)
            if repeated is None:
                first[run_id] = index
            elif conflict := _difference(repeated, sessions[index], prefix(index)):
                refused[index] = conflict
        if whole and refused:
            raise refused[min(refused)]
        requests = [_request(tenant, run_id, sessions[index], now) for run_id, index in first.items()]
        rows = [row for run_id, index in first.items() for row in _event_rows(tenant, run_id, sessions[index], now)]
        stored.update((r.run_id, r) for r in finalize_batch(store, tenant, requests, now, pass_threshold, rows))
        return [
            refused.get(index) or Ingested(stored[run_id], first.get(run_id) == index)
            for index, run_id in enumerate(run_ids)
        ]


def _unwritten(
    tenant: str, run_id: str, sessions: Sequence[SessionInput], first: dict[str, int], now: datetime
) -> RunRecord | None:
    """The run an earlier run of the request will be under this id, as far as a repeat is compared."""
    if run_id not in first:
        return None
    session = sessions[first[run_id]]
    return replace(new_record(tenant, session.spec, run_id, now), content_hash=content_hash(session.events))


def _request(tenant: str, run_id: str, session: SessionInput, now: datetime) -> FinalizeRequest:
    base = new_record(tenant, session.spec, run_id, now)
    return FinalizeRequest(base, session.events, session.execution, session.session_performance, session.normalized)


def _event_rows(tenant: str, run_id: str, session: SessionInput, now: datetime) -> list[list[Any]]:
    return run_store.event_rows(tenant, run_id, session.normalized_events, 0, now)


def _refusals(
    store: Store, tenant: str, run_ids: list[str], sessions: Sequence[SessionInput], prefix: Callable[[int], str]
) -> dict[int, ClientError]:
    """The runs refused before anything is written, by index: a profile or a parent that names nothing of
    the tenant's, or a run that is open (being streamed through /v1/runs)."""
    refused: dict[int, ClientError] = {}
    for index, session in enumerate(sessions):
        if session.spec.profile:
            try:
                profile_service.require_known(store, tenant, [(session.spec.profile, f"{prefix(index)}profile")])
            except ClientError as error:
                refused[index] = error
    missing = _unknown_parents(store, tenant, [s.spec.parent_run_id for s in sessions], set(run_ids))
    states = run_store.run_states(store, tenant, sorted(set(run_ids)))
    for index, (run_id, session) in enumerate(zip(run_ids, sessions, strict=True)):
        if index in refused:
            continue
        if session.spec.parent_run_id in missing:
            refused[index] = FieldError(
                f"{prefix(index)}parent_run_id",
                f"parent_run_id {session.spec.parent_run_id!r} names no run of this tenant",
            )
        elif states.get(run_id, RunStatus.FINALIZED) != RunStatus.FINALIZED:
            refused[index] = Conflict(f"run {run_id} is open; append its events and finalize it instead")
    return refused


def _unknown_parents(store: Store, tenant: str, parents: Sequence[str], sent: set[str]) -> set[str]:
    """The parent run ids that name no run of this tenant: neither stored nor sent in the same request
    (SPEC §3.5). Another tenant's run is as unknown as a run that does not exist."""
    wanted = sorted({parent for parent in parents if parent and parent not in sent})
    stored = run_store.run_states(store, tenant, wanted) if wanted else {}
    return {parent for parent in wanted if parent not in stored}


def require_parents(store: Store, tenant: str, named: Sequence[tuple[str, str]], sent: set[str]) -> None:
    """Each (parent run id, field) names a run of this tenant; else a 422 naming the field."""
    missing = _unknown_parents(store, tenant, [parent for parent, _ in named], sent)
    for parent, field in named:
        if parent in missing:
            raise FieldError(field, f"parent_run_id {parent!r} names no run of this tenant")


def _prefix(index: int, sessions: Sequence[SessionInput]) -> str:
    """Where a run's fields are named in a batch's errors: `sessions[2].` when there are several."""
    return f"sessions[{index}]." if len(sessions) > 1 else ""


def _difference(stored: RunRecord, session: SessionInput, prefix: str) -> Conflict | None:
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
    if not differ:
        return None
    return Conflict(
        f"run {stored.run_id} already exists with a different {', '.join(differ)}: a run_id names one run",
        field=prefix + differ[0],
    )


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
