"""Run lifecycle: open, append events, finalize (diagnose, classify, store, emit reputation).

Batch-first: finalizing N runs costs one INSERT per table, so harnesses can send many runs per request.
Re-finalizing returns the stored result and writes nothing. Within a finalize, the run's own row is
written last: a crash before it leaves the run open, and the retry converges (failures collapse by
key, reputation events are skipped by id).
"""

import base64
import threading
import uuid
import zlib
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from service.diagnosis import Event, diagnose, normalize_events
from service.ids import FieldError, check_id, check_optional_id
from service.judge import SessionAccumulator, to_run_events
from service.judge.records import decode_record
from service.outcome import ExecutionOutcome, classify_execution
from service.reputation.emit import FinalizedRun, events_for_run
from service.store import reputation as reputation_store
from service.store import runs as run_store
from service.store import sessions as session_store
from service.store.client import Store
from service.store.rows import EARLIEST, LATEST, from_epoch_ms, to_millis

DIMENSIONS = (
    "loop_control", "memory_integrity", "tool_output_utilization", "context_health", "cost_efficiency",
    "skill_adherence",
)  # fmt: skip


class RunNotFound(LookupError):
    pass


class RunConflict(ValueError):
    """The request contradicts the stored run (e.g. events for a finalized run)."""


class RunTooLarge(ValueError):
    pass


@dataclass(frozen=True)
class RunSpec:
    identity: str
    run_id: str | None = None
    suite: str = ""
    task_id: str = ""
    trial: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    kind: str = "run"


class _NormalizedOnce:
    """For frozen dataclasses with `events` and `normalized`: fills `normalized` when the caller did not
    hand over the events parsing already normalized."""

    events: list[dict[str, Any]]
    normalized: list[Event] | None

    def __post_init__(self) -> None:
        if self.normalized is None:
            object.__setattr__(self, "normalized", normalize_events(self.events))

    @property
    def normalized_events(self) -> list[Event]:
        assert self.normalized is not None  # filled on construction
        return self.normalized


@dataclass(frozen=True)
class FinalizeRequest(_NormalizedOnce):
    """One run to finalize with the events to diagnose and the caller's execution object."""

    base: dict[str, Any]
    events: list[dict[str, Any]]
    execution: dict[str, Any] | None = None
    session_performance: dict[str, Any] | None = None
    normalized: list[Event] | None = field(default=None, compare=False, repr=False)


# Striped locks serialise appends and finalizes of one run inside this process.
_LOCKS = [threading.Lock() for _ in range(256)]


def run_lock(tenant: str, run_id: str) -> threading.Lock:
    return _LOCKS[zlib.crc32(f"{tenant}/{run_id}".encode()) % len(_LOCKS)]


def new_run_id() -> str:
    return f"run_{uuid.uuid4().hex}"


def _base_row(tenant: str, spec: RunSpec, run_id: str, now: datetime) -> dict[str, Any]:
    return {
        "tenant": tenant,
        "run_id": run_id,
        "identity": spec.identity,
        "kind": spec.kind,
        "suite": spec.suite,
        "task_id": spec.task_id,
        "trial": spec.trial,
        "metadata": orjson.dumps(spec.metadata, option=orjson.OPT_SORT_KEYS).decode(),
        "created_at": now,
    }


def _open_row(base: dict[str, Any], now: datetime) -> dict[str, Any]:
    return {
        **base,
        "version": time_version(now),
        "started_at": None,
        "ended_at": None,
        "run_at": base["created_at"],
        "finalized_at": None,
        "status": "open",
        "execution_status": "",
        "failure_stage": "",
        "failure_reason_code": "",
        "failure_message": "",
        "score": 0.0,
        "trust_score": None,
        "readiness": "",
        "primary_failure": "",
        **dict.fromkeys(DIMENSIONS, 0),
        "session_composite": None,
        "session_performance": "",
        "event_count": 0,
        "tool_calls": 0,
        "errors": 0,
        "total_tokens": 0,
        "diagnosis": "",
        "diagnosis_hash": "",
    }


_version_lock = threading.Lock()
_last_version = 0


def time_version(now: datetime) -> int:
    """Strictly increasing row versions within the process (microseconds, bumped on ties)."""
    global _last_version
    with _version_lock:
        _last_version = max(_last_version + 1, int(now.timestamp() * 1_000_000))
        return _last_version


def base_of(row: dict[str, Any]) -> dict[str, Any]:
    keys = ("tenant", "run_id", "identity", "kind", "suite", "task_id", "trial", "metadata", "created_at")
    return {k: row[k] for k in keys}


def new_open_row(tenant: str, spec: RunSpec, run_id: str, now: datetime) -> dict[str, Any]:
    return _open_row(_base_row(tenant, spec, run_id, to_millis(now)), to_millis(now))


def open_run(store: Store, tenant: str, spec: RunSpec, now: datetime) -> dict[str, Any]:
    """Opens a run; opening an existing run again returns it unchanged (same identity required)."""
    now = to_millis(now)
    run_id = spec.run_id or new_run_id()
    with run_lock(tenant, run_id):
        existing = run_store.get_run(store, tenant, run_id)
        if existing is not None:
            if existing["identity"] != spec.identity:
                raise RunConflict(f"run {run_id} already exists for another identity")
            return existing
        row = new_open_row(tenant, spec, run_id, now)
        run_store.insert_runs(store, [row])
        return row


_EARLIEST_MS, _LATEST_MS = int(EARLIEST.timestamp() * 1000), int(LATEST.timestamp() * 1000)


def check_event_times(events: Sequence[Any], prefix: str = "") -> None:
    """Every timestamp must be storable; the error names the first event that is not."""
    for index, event in enumerate(events):
        ms = event.timestamp_ms
        if ms is not None and not _EARLIEST_MS <= ms < _LATEST_MS:
            raise FieldError(
                f"{prefix}events[{index}].timestamp",
                f"timestamp must lie between {EARLIEST:%Y-%m-%d} and {LATEST:%Y-%m-%d}",
            )


def event_rows(tenant: str, run_id: str, normalized: Sequence[Event], first_seq: int, now: datetime) -> list[list[Any]]:
    """Rows of run_events for normalized events that start at position `first_seq` of the run."""
    check_event_times(normalized)
    rows = []
    for offset, event in enumerate(normalized):
        seq = first_seq + offset
        event_id = event.event_id if "event_id" in event.data else f"event_{seq}"
        payload = orjson.dumps(event.data).decode()
        rows.append([tenant, run_id, seq, event_id, event.type, from_epoch_ms(event.timestamp_ms), payload, now])
    return rows


def _stored_run(store: Store, tenant: str, run_id: str) -> dict[str, Any]:
    run = run_store.get_run(store, tenant, run_id)
    if run is None:
        raise RunNotFound(run_id)
    return run


def append_events(
    store: Store, tenant: str, run_id: str, events: Sequence[dict[str, Any]], now: datetime, max_events: int
) -> int:
    """Appends a batch (all or nothing); returns the run's event count afterwards."""
    now = to_millis(now)
    with run_lock(tenant, run_id):
        run = _stored_run(store, tenant, run_id)
        if run["status"] == "finalized":
            raise RunConflict(f"run {run_id} is finalized; it takes no more events")
        first_seq = run_store.next_event_seq(store, tenant, run_id)
        if first_seq + len(events) > max_events:
            raise RunTooLarge(f"a run holds at most {max_events} events ({first_seq} stored, {len(events)} sent)")
        run_store.insert_events(store, event_rows(tenant, run_id, normalize_events(list(events)), first_seq, now))
        return first_seq + len(events)


def _timestamps(diagnosis_events: Sequence[Any]) -> tuple[datetime | None, datetime | None]:
    stamps = [e.timestamp_ms for e in diagnosis_events if e.timestamp_ms is not None]
    if not stamps:
        return None, None
    return from_epoch_ms(min(stamps)), from_epoch_ms(max(stamps))


@dataclass
class _Finalized:
    row: dict[str, Any]
    failures: list[list[Any]]
    reputation: list[Any]


def _finalize_one(request: FinalizeRequest, now: datetime, pass_threshold: float) -> _Finalized:
    base = request.base
    normalized = request.normalized_events
    diagnosis = diagnose(request.events)
    view = diagnosis.to_dict()
    outcome = classify_execution(
        request.execution, request.events, view["trust_score"], pass_threshold, readiness=view["readiness_level"]
    )
    started_at, ended_at = _timestamps(normalized)
    run_at = ended_at or now
    causes = view["failure_causes"]
    primary = primary_failure_of(view)
    performance = request.session_performance
    row = {
        **base,
        "version": time_version(now),
        "started_at": started_at,
        "ended_at": ended_at,
        "run_at": run_at,
        "finalized_at": now,
        "status": "finalized",
        "execution_status": outcome.status,
        "failure_stage": outcome.stage or "",
        "failure_reason_code": outcome.reason_code or "",
        "failure_message": outcome.message or "",
        "score": outcome.score,
        "trust_score": view["trust_score"],
        "readiness": view["readiness_level"],
        "primary_failure": primary or "",
        **{name: view["scores"][name] for name in DIMENSIONS},
        "session_composite": performance["composite"] if performance else None,
        "session_performance": orjson.dumps(performance, option=orjson.OPT_SORT_KEYS).decode() if performance else "",
        "event_count": view["evidence_summary"]["event_count"],
        "tool_calls": view["evidence_summary"]["tool_calls"],
        "errors": view["evidence_summary"]["errors"],
        "total_tokens": view["cost_analysis"]["total_tokens"],
        "diagnosis": diagnosis.canonical_json().decode(),
        "diagnosis_hash": view["diagnosis_hash"],
    }
    failures = [] if outcome.status == "execution_error" else _failure_rows(row, causes, primary)
    emitted = events_for_run(_emission_view(row, outcome, causes))
    return _Finalized(row, failures, emitted)


def primary_failure_of(view: dict[str, Any]) -> str | None:
    primary = view.get("primary_diagnosis") or {}
    return primary.get("root_cause_failure_type", view.get("root_cause_failure_type"))


def _failure_rows(row: dict[str, Any], causes: list[dict[str, Any]], primary: str | None) -> list[list[Any]]:
    rows = []
    primary_seen = False
    for position, cause in enumerate(causes):
        is_primary = not primary_seen and cause["type"] == primary
        primary_seen = primary_seen or is_primary
        rows.append([
            row["tenant"], row["run_id"], position, row["identity"], row["run_at"], cause["type"],
            cause["severity"], cause["impact_score"], is_primary, cause["description"],
            cause["causal_chain"], list(cause["evidence"]), cause["remediation"],
        ])  # fmt: skip
    return rows


def _emission_view(row: dict[str, Any], outcome: ExecutionOutcome, causes: list[dict[str, Any]]) -> FinalizedRun:
    return FinalizedRun(
        tenant=row["tenant"],
        run_id=row["run_id"],
        identity=row["identity"],
        kind=row["kind"],
        timestamp=row["run_at"],
        execution_status=outcome.status,
        trust_score=row["trust_score"],
        causes=[(c["type"], c["severity"], c["impact_score"]) for c in causes],
        failure_stage=row["failure_stage"],
        failure_reason_code=row["failure_reason_code"],
        session_composite=row["session_composite"],
        readiness=row["readiness"],
        event_count=row["event_count"],
    )


def finalize_batch(
    store: Store, tenant: str, requests: Sequence[FinalizeRequest], now: datetime, pass_threshold: float
) -> list[dict[str, Any]]:
    """Diagnoses and stores runs that are not finalized yet: one INSERT per table for the batch."""
    now = to_millis(now)
    done = [_finalize_one(request, now, pass_threshold) for request in requests]
    run_store.insert_failures(store, [row for item in done for row in item.failures])
    reputation_store.insert_events(store, tenant, [event for item in done for event in item.reputation])
    run_store.insert_runs(store, [item.row for item in done])
    return [item.row for item in done]


def finalize_run(
    store: Store,
    tenant: str,
    run_id: str,
    execution: dict[str, Any] | None,
    now: datetime,
    pass_threshold: float,
    session_performance: dict[str, Any] | None = None,
) -> dict[str, Any]:
    now = to_millis(now)
    with run_lock(tenant, run_id):
        run = _stored_run(store, tenant, run_id)
        if run["status"] == "finalized":
            return run
        if run["kind"] == "session":
            events, session_performance = _session_material(store, tenant, run, now)
        else:
            events = run_store.load_event_payloads(store, tenant, run_id)
        request = FinalizeRequest(base_of(run), events, execution, session_performance)
        return finalize_batch(store, tenant, [request], now, pass_threshold)[0]


def _session_material(
    store: Store, tenant: str, run: dict[str, Any], now: datetime
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """An OTLP session's run events (SPEC §3.2 mapping, stored so /events shows them) and its score."""
    records = [decode_record(payload) for payload in session_store.load_payloads(store, tenant, run["run_id"])]
    events = to_run_events(records)
    run_store.insert_events(store, event_rows(tenant, run["run_id"], normalize_events(events), 0, now))
    accumulator = SessionAccumulator(run["run_id"])
    for record in records:
        accumulator.add(record)
    return events, accumulator.score(masque=run["identity"]).to_dict()


@dataclass(frozen=True)
class SessionInput(_NormalizedOnce):
    """A whole run sent at once (POST /v1/sessions, `repute ingest`)."""

    spec: RunSpec
    events: list[dict[str, Any]]
    execution: dict[str, Any] | None = None
    session_performance: dict[str, Any] | None = None
    normalized: list[Event] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class SessionResult:
    row: dict[str, Any]
    created: bool


@contextmanager
def holding(tenant: str, run_ids: Sequence[str]) -> Iterator[None]:
    """Holds the locks of several runs: distinct stripes taken in a fixed order, so two batches never
    wait on each other in a cycle."""
    indexes = sorted({zlib.crc32(f"{tenant}/{run_id}".encode()) % len(_LOCKS) for run_id in run_ids})
    with ExitStack() as stack:
        for index in indexes:
            stack.enter_context(_LOCKS[index])
        yield


def ingest_sessions(
    store: Store, tenant: str, sessions: Sequence[SessionInput], now: datetime, pass_threshold: float
) -> list[SessionResult]:
    """Stores and finalizes whole runs. A run id already finalized returns the stored run untouched;
    one that is open (being streamed through /v1/runs) is a conflict."""
    now = to_millis(now)
    run_ids = [s.spec.run_id or new_run_id() for s in sessions]
    if len(set(run_ids)) != len(run_ids):
        raise RunConflict("a batch names the same run_id twice")
    with holding(tenant, run_ids):
        states = run_store.run_states(store, tenant, run_ids)
        for run_id, status in states.items():
            if status != "finalized":
                raise RunConflict(f"run {run_id} is open; append its events and finalize it instead")
        existing = run_store.get_runs(store, tenant, list(states)) if states else {}
        todo = [(run_id, s) for run_id, s in zip(run_ids, sessions, strict=True) if run_id not in existing]
        requests, rows = [], []
        for run_id, session in todo:
            base = _base_row(tenant, session.spec, run_id, now)
            rows.extend(event_rows(tenant, run_id, session.normalized_events, 0, now))
            requests.append(
                FinalizeRequest(
                    base, session.events, session.execution, session.session_performance, session.normalized
                )
            )
        run_store.insert_events(store, rows)
        finalized = iter(finalize_batch(store, tenant, requests, now, pass_threshold))
        return [
            SessionResult(existing[run_id], False) if run_id in existing else SessionResult(next(finalized), True)
            for run_id in run_ids
        ]


def _loads(text: str) -> dict[str, Any] | None:
    return orjson.loads(text) if text else None


def summary_of(row: dict[str, Any]) -> dict[str, Any]:
    """The public shape of a run (API and `repute runs --json`)."""
    return {
        "run_id": row["run_id"],
        "identity": row["identity"],
        "kind": row["kind"],
        "suite": row["suite"],
        "task_id": row["task_id"],
        "trial": row["trial"],
        "status": row["status"],
        "run_at": row["run_at"],
        "finalized_at": row["finalized_at"],
        "execution_status": row["execution_status"],
        "failure_stage": row["failure_stage"],
        "failure_reason_code": row["failure_reason_code"],
        "score": row["score"],
        "trust_score": row["trust_score"],
        "readiness_level": row["readiness"],
        "primary_failure": row["primary_failure"] or None,
        "session_composite": row["session_composite"],
        "event_count": row["event_count"],
        "tool_calls": row["tool_calls"],
        "total_tokens": row["total_tokens"],
    }


def detail_of(row: dict[str, Any]) -> dict[str, Any]:
    return {
        **summary_of(row),
        "metadata": _loads(row["metadata"]) or {},
        "failure_message": row["failure_message"],
        "started_at": row["started_at"],
        "ended_at": row["ended_at"],
        "diagnosis": _loads(row["diagnosis"]),
        "session_performance": _loads(row["session_performance"]),
    }


def encode_cursor(row: dict[str, Any]) -> str:
    at_ms = int(row["run_at"].timestamp() * 1000)
    return base64.urlsafe_b64encode(orjson.dumps([at_ms, row["run_id"]])).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        at_ms, run_id = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        return from_epoch_ms(int(at_ms)), str(run_id)  # type: ignore[return-value]
    except (ValueError, TypeError, OverflowError, OSError) as exc:
        raise FieldError("query.cursor", "cursor is not one this API returned") from exc


def session_input(run: Any, field: str = "", max_events: int = 100_000) -> SessionInput:
    """Validates a parsed run (service.diagnosis.RunInput) for storage; errors name the field."""
    prefix = f"{field}." if field else ""
    if run.trial is not None and (isinstance(run.trial, bool) or not isinstance(run.trial, int) or run.trial < 0):
        raise FieldError(f"{prefix}trial", "trial must be a non-negative integer")
    if len(run.events) > max_events:
        raise RunTooLarge(f"a run holds at most {max_events} events ({len(run.events)} sent)")
    normalized = run.normalized if run.normalized is not None else normalize_events(run.events)
    check_event_times(normalized, prefix)
    spec = RunSpec(
        identity=check_id(run.identity, f"{prefix}identity"),
        run_id=check_optional_id(run.run_id, f"{prefix}run_id") or None,
        suite=check_optional_id(run.suite, f"{prefix}suite"),
        task_id=check_optional_id(run.task_id, f"{prefix}task_id"),
        trial=run.trial,
        metadata=run.metadata or {},
    )
    return SessionInput(spec, list(run.events), run.execution, normalized=normalized)
