"""OTLP log sessions (SPEC §3.2, §5). Records received over /v1/logs are stored per `session.id`; each
session is a run (run_id = session id, kind "session") that is finalized explicitly or, once it has
been idle long enough, by the sweeper; finalizing maps the records to run events once, diagnoses them and
scores the session (service/services/assembly.py, finalize.py)."""

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

import msgspec

from service.diagnosis import InputError
from service.diagnosis.events import timestamp_ms_of
from service.ids import RUN_ID_RULE, is_run_id
from service.judge import DecodedBatch, IdentityRule, LogRecord, SessionAccumulator, group_by_session, to_run_events
from service.judge.records import encode_record, record_id
from service.model import RunHeader
from service.otlp.redaction import redacted_attributes
from service.priority import stepping
from service.services.assembly import new_record
from service.services.inputs import Received, safe_identity, telemetry_refusal
from service.services.locks import holding
from service.settings import Settings
from service.store import runs as run_store
from service.store import sessions as session_store
from service.store import writer
from service.store.client import Store
from service.store.rows import to_millis
from service.vocab import TIME_RULE, RunKind


def _identity(records: Iterable[LogRecord], rule: IdentityRule) -> str | None:
    accumulator = SessionAccumulator("", rule)
    for record in records:
        accumulator.add(record)
    return accumulator.identity


def _record_rows(
    tenant: str, session_id: str, records: Sequence[LogRecord], event_counts: Sequence[int], now: datetime
) -> list[list]:
    seen: Counter[str] = Counter()
    rows = []
    for record, event_count in zip(stepping(records), event_counts, strict=True):
        first = record_id(record)
        seen[first] += 1
        content = encode_record(record)
        rows.append(
            [tenant, session_id, record_id(record, seen[first]), record.time_unix_nano, content, now, event_count]
        )
    return rows


def receive(store: Store, tenant: str, batch: DecodedBatch, now: datetime, settings: Settings) -> Received:
    """Stores the records of a decoded request (personal attributes redacted: settings.redact_attributes);
    opens a run for each new session. A session's records are refused whole when it is closed, or when
    they would take it past `settings.max_events_per_run` run events."""
    now = to_millis(now)
    identity_names, max_events = settings.otlp_identity_attributes, settings.max_events_per_run
    received = Received()
    received.reject(batch.rejected, f"{batch.rejected} records do not fit the OTLP schema")
    groups = group_by_session(
        [_redacted(record, settings.redact_attributes, tenant) for record in stepping(batch.records)]
    )
    received.reject(len(batch.records) - sum(map(len, groups.values())), "records without session.id")
    valid = _storable_sessions(groups, received)
    rule = IdentityRule(identity_names)
    with holding(tenant, list(valid)):
        existing = run_store.get_runs(store, tenant, list(valid))
        stored_events = session_store.event_counts(store, tenant, list(existing))
        opened, rows = [], []
        for session_id, records in valid.items():
            run = existing.get(session_id)
            event_counts = [len(to_run_events([record])) for record in stepping(records)]
            events = stored_events.get(session_id, 0) + sum(event_counts)
            refusal = telemetry_refusal(run, RunKind.SESSION, events, "run events", max_events)
            if refusal:
                received.reject(len(records), f"session {session_id} {refusal}; its records were not stored")
                continue
            if run is None:
                identity = safe_identity(_identity(records, rule))
                header = RunHeader(identity=identity, run_id=session_id, kind=RunKind.SESSION)
                opened.append(new_record(tenant, header, session_id, now))
            rows.extend(_record_rows(tenant, session_id, records, event_counts, now))
            received.accepted += len(records)
        writer.session_records(store, rows)
        writer.runs(store, opened)
    return received


def _redacted(record: LogRecord, names: Sequence[str], tenant: str) -> LogRecord:
    redacted = redacted_attributes(record.attributes, record.resource_attributes, names, tenant)
    return msgspec.structs.replace(record, **redacted)


def _storable_sessions(groups: dict[str, list[LogRecord]], received: Received) -> dict[str, list[LogRecord]]:
    """The sessions with a valid id, each with its records whose time is storable; the rest rejected."""
    valid = {}
    bad_ids = bad_times = 0
    for session_id, records in groups.items():
        if not is_run_id(session_id):
            bad_ids += len(records)
            continue
        timed = [record for record in records if _storable_time(record)]
        bad_times += len(records) - len(timed)
        if timed:
            valid[session_id] = timed
    received.reject(bad_ids, f"session.id must be {RUN_ID_RULE}")
    received.reject(bad_times, f"timeUnixNano must lie {TIME_RULE}")
    return valid


def _storable_time(record: LogRecord) -> bool:
    """A record's time must be storable, and read back as the same instant once the record is a run
    event (whose epoch numbers are told apart by magnitude): else finalizing the session would fail."""
    nanos = record.time_unix_nano
    if nanos is None:
        return True
    try:
        return timestamp_ms_of({"timestamp": nanos}, 0) == nanos // 1_000_000
    except InputError:
        return False


def idle(store: Store, now: datetime, idle_for: timedelta) -> list[tuple[str, str]]:
    """The open sessions (tenant, run id) of every tenant that received nothing for `idle_for`: due for the
    sweeper's finalize."""
    return session_store.idle_sessions(store, now - idle_for)
