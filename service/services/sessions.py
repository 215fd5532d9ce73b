"""OTLP log sessions (SPEC §3.2, §5). Records received over /v1/logs are stored per `session.id`; each
session is a run (run_id = session id, kind "session") that is finalized explicitly or, once it has
been idle long enough, by the sweeper; finalizing diagnoses the mapped events and scores the session
(see service.services.runs.finalize_run)."""

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from service.errors import FieldError
from service.ids import ID_RULE, check_id
from service.judge import DecodedBatch, IdentityRule, LogRecord, SessionAccumulator, group_by_session
from service.judge.records import encode_record, record_id
from service.services import runs
from service.services.inputs import Received, RunSpec, safe_identity
from service.services.locks import holding
from service.store import runs as run_store
from service.store import sessions as session_store
from service.store.client import Store
from service.store.rows import to_millis
from service.vocab import RunKind


def _identity(records: Iterable[LogRecord], rule: IdentityRule) -> str | None:
    accumulator = SessionAccumulator("", rule)
    for record in records:
        accumulator.add(record)
    return accumulator.identity


def _record_rows(tenant: str, session_id: str, records: Sequence[LogRecord], now: datetime) -> list[list]:
    seen: Counter[str] = Counter()
    rows = []
    for record in records:
        first = record_id(record)
        seen[first] += 1
        rows.append(
            [tenant, session_id, record_id(record, seen[first]), record.time_unix_nano, encode_record(record), now]
        )
    return rows


def receive(store: Store, tenant: str, batch: DecodedBatch, now: datetime, identity_names: Sequence[str]) -> Received:
    """Stores the records of a decoded request; opens a run for each new session."""
    now = to_millis(now)
    received = Received()
    received.reject(batch.rejected, f"{batch.rejected} records do not fit the OTLP schema")
    groups = group_by_session(batch.records)
    received.reject(len(batch.records) - sum(map(len, groups.values())), "records without session.id")
    valid = {}
    for session_id, records in groups.items():
        try:
            valid[check_id(session_id, "session.id")] = records
        except FieldError:
            received.reject(len(records), f"session.id must be {ID_RULE}")
    rule = IdentityRule(identity_names)
    with holding(tenant, list(valid)):
        existing = run_store.get_runs(store, tenant, list(valid))
        opened, rows = [], []
        for session_id, records in valid.items():
            run = existing.get(session_id)
            if run is not None and (run.finalized or run.kind != RunKind.SESSION):
                state = "finalized" if run.finalized else "a run that is not a session"
                received.reject(len(records), f"session {session_id} is {state}; its records were not stored")
                continue
            if run is None:
                identity = safe_identity(_identity(records, rule))
                spec = RunSpec(identity=identity, run_id=session_id, kind=RunKind.SESSION)
                opened.append(runs.new_record(tenant, spec, session_id, now))
            rows.extend(_record_rows(tenant, session_id, records, now))
            received.accepted += len(records)
        session_store.insert_records(store, rows)
        run_store.insert_runs(store, opened)
    return received


def finalize_idle(store: Store, now: datetime, idle: timedelta, pass_threshold: float) -> int:
    """Finalizes every open session that has been idle for `idle`; returns how many."""
    idle_sessions = session_store.idle_sessions(store, now - idle)
    for tenant, session_id in idle_sessions:
        runs.finalize_run(store, tenant, session_id, None, now, pass_threshold)
    return len(idle_sessions)
