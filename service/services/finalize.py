"""The one finalize of every run (SPEC §4, §6, §7): its material judged under the profile that applies to it,
classified, and written with its causes and reputation events. Every input comes here the same way: the
receivers (service/services/receivers/) hand over whole runs, and `finalize_run` asks the assembly
(service/services/assembly.py) for the material of a run finalized later, whatever its kind.

Batch-first: finalizing N runs costs one INSERT per table. Re-finalizing returns the stored result and
writes nothing. The order of the writes: the runs' raw events, causes and figures by identity and day
(identity_run_days) side by side (while the reputation store reads which of their reputation events it holds
already), then their reputation events, then the run rows. A write that fails leaves the runs unfinalized and
a retry converges (causes and figures collapse by key, reputation events are skipped by id); one that fails
before the reputation leaves no reputation of runs that were never stored.

Each run is diagnosed under the diagnosis profile that applies to it (SPEC §4.1, service.profiles): the one
it names itself, else the tenant's rules for its identity and input kind, else its input kind's default.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from service.diagnosis import Diagnosis, Event, diagnose
from service.errors import ClientError, StoreUnavailable
from service.model import RunHeader, RunMaterial, RunRecord, RunSummary, next_version
from service.outcome import ExecutionOutcome, classify_execution
from service.priority import stepping_aside
from service.profiles import TenantProfiles
from service.reputation.emit import FinalizedRun, events_for_run
from service.services import assembly
from service.services import profiles as profile_service
from service.services.assembly import Finalizing
from service.services.inputs import UNKNOWN_IDENTITY
from service.services.locks import run_lock
from service.store import reputation as reputation_store
from service.store import runs as run_store
from service.store import writer
from service.store.client import Store
from service.store.rows import from_epoch_ms, to_millis
from service.store.traces import StoredTrace
from service.vocab import INPUT_OF_KIND, MESSAGE_CHARS, ExecutionStatus, RunKind, RunStatus

log = logging.getLogger("repute.finalize")
# How a run whose evidence cannot be diagnosed is closed (see finalize_undiagnosable).
UNDIAGNOSABLE_STAGE = "evaluator"
UNDIAGNOSABLE_REASON = "evaluator_error"


@dataclass
class _Judged:
    record: RunRecord
    failures: list[list[Any]]
    reputation: list[Any]


def _judge(item: Finalizing, now: datetime, pass_threshold: float, profiles: TenantProfiles) -> _Judged:
    base, material = item.base, item.material
    profile = profiles.resolve(base.identity, INPUT_OF_KIND[base.kind], base.profile)
    diagnosis = diagnose(material.raw_events, profile)
    outcome = classify_execution(
        material.execution, material.raw_events, diagnosis.trust_score, pass_threshold,
        readiness=diagnosis.readiness_level,
    )  # fmt: skip
    started_at, ended_at = _timestamps(material.events)
    started_at, ended_at = material.started_at or started_at, material.ended_at or ended_at
    performance = material.session_performance
    record = base.with_version(
        next_version(now),
        started_at=started_at,
        ended_at=ended_at,
        run_at=ended_at or now,
        finalized_at=now,
        status=RunStatus.FINALIZED,
        **outcome_fields(material.execution, outcome),
        **verdict_fields(diagnosis),
        cost_usd=material.cost_usd,
        session_composite=performance["composite"] if performance else None,
        session_performance=assembly.canonical_text(performance) if performance else "",
        content_hash=material.content_hash,
    )
    emitted = events_for_run(emission_view(record.tenant, record, cause_triples(diagnosis)))
    return _Judged(record, failure_rows(record, diagnosis), emitted)


def _timestamps(events: Sequence[Event]) -> tuple[datetime | None, datetime | None]:
    stamps = [e.timestamp_ms for e in events if e.timestamp_ms is not None]
    if not stamps:
        return None, None
    return from_epoch_ms(min(stamps)), from_epoch_ms(max(stamps))


def verdict_fields(diagnosis: Diagnosis) -> dict[str, Any]:
    """The run columns its diagnosis gives (a finalize, and a re-diagnosis by the rebuild)."""
    evidence = diagnosis.evidence_summary
    return {
        "trust_score": diagnosis.trust_score,
        "readiness": str(diagnosis.readiness_level),
        "primary_failure": diagnosis.primary_failure_type or "",
        "primary_impact": 0 if diagnosis.primary is None else diagnosis.primary.impact_score,
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


def emission_view(tenant: str, run: RunRecord | RunSummary, causes: Sequence[tuple[str, str, int]]) -> FinalizedRun:
    """What reputation emission needs of a finalized run: its record (or a list's row of it) and its
    causes (failure type, severity, impact score); the finalize, and the rebuild from what is stored."""
    assert run.trust_score is not None  # every finalized run has one
    return FinalizedRun(
        tenant=tenant,
        run_id=run.run_id,
        identity=run.identity,
        kind=run.kind,
        timestamp=run.run_at,
        execution_status=run.execution_status,
        trust_score=run.trust_score,
        causes=causes,
        failure_stage=run.failure_stage,
        failure_reason_code=run.failure_reason_code,
        session_composite=run.session_composite,
        readiness=run.readiness,
        event_count=run.event_count,
    )


def finalize_batch(
    store: Store, tenant: str, items: Sequence[Finalizing], now: datetime, pass_threshold: float
) -> list[RunRecord]:
    """Diagnoses and stores runs that are not finalized yet, in the order of the module's docstring."""
    now = to_millis(now)
    profiles = profile_service.in_force(store, tenant)
    judged = stepping_aside(partial(_judge, now=now, pass_threshold=pass_threshold, profiles=profiles), items)
    event_rows = [
        row
        for item in items
        if item.stores_events
        for row in run_store.event_rows(tenant, item.base.run_id, item.material.events, item.material.payloads, 0, now)
    ]
    failures = [row for done in judged for row in done.failures]
    reputation = [event for done in judged for event in done.reputation]
    beside = (
        partial(writer.run_events, store, event_rows),
        partial(writer.failures, store, failures),
        partial(writer.run_days, store, [run_store.day_row(done.record, done.failures) for done in judged]),
    )
    reputation_store.insert_events(store, tenant, reputation, beside=beside)
    writer.runs(store, [done.record for done in judged])
    return [done.record for done in judged]


def finalize_run(
    store: Store, tenant: str, run_id: str, execution: dict[str, Any] | None, now: datetime, pass_threshold: float
) -> RunRecord:
    """Finalizes a run (idempotent: a finalized run is returned as stored) from the material the assembly
    gathers for it, whatever its kind. A trace-born run has no row before its finalize: its spans make it,
    and its child runs (SPEC §3.5), whose rows are written in the same insert as its own, so no reader sees
    it finalized with a child still to come."""
    with run_lock(tenant, run_id):
        return finalize_locked(store, tenant, run_id, execution, now, pass_threshold)[0]


def finalize_locked(
    store: Store,
    tenant: str,
    run_id: str,
    execution: dict[str, Any] | None,
    now: datetime,
    pass_threshold: float,
    traces: Sequence[StoredTrace] | None = None,
) -> tuple[RunRecord, bool]:
    """`finalize_run` for a caller that holds the run's lock: the run's record, and whether it was finalized
    now (False: it was already). `traces`: a trace-born run's stored traces as the caller read them under
    that lock (the settle check), so no span was stored for it since."""
    now = to_millis(now)
    run = run_store.get_run(store, tenant, run_id)
    if run is not None and run.finalized:
        return run, False
    items = assembly.material_of(store, tenant, run_id, run, execution, now, traces)
    return finalize_batch(store, tenant, items, now, pass_threshold)[0], True


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
            header = RunHeader(UNKNOWN_IDENTITY, run_id, kind=RunKind.TRACE)
            run = assembly.new_record(tenant, header, run_id, to_millis(now))
        material = RunMaterial(assembly.header_of(run), [], execution)
        return finalize_batch(store, tenant, [Finalizing(run, material, False)], now, pass_threshold)[0]
