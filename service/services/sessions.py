"""OTLP log sessions (SPEC §3.2, §5). Records received over /v1/logs are stored per `session.id`; each
session is a run (run_id = session id, kind "session") that is finalized explicitly or, once it has
been idle long enough, by the sweeper; finalizing diagnoses the mapped events and scores the session
(see service.services.runs.finalize_run). Files go the one-shot way: `repute ingest` scores whole sessions."""

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from service.diagnosis import InputError
from service.diagnosis.events import timestamp_ms_of
from service.errors import ClientError, FieldError, StoreUnavailable
from service.ids import RUN_ID_RULE, check_id, check_run_id, is_run_id
from service.judge import DecodedBatch, IdentityRule, LogRecord, SessionAccumulator, group_by_session, to_run_events
from service.judge.otlp_json import decode_json_body
from service.judge.records import encode_record, record_id
from service.services import runs
from service.services.inputs import RunSpec, SessionInput, storable_ms
from service.services.locks import holding
from service.store import runs as run_store
from service.store import sessions as session_store
from service.store.client import Store
from service.store.records import RunRecord
from service.store.rows import to_millis
from service.vocab import TIME_RULE, RunKind

UNKNOWN_IDENTITY = "unknown"
log = logging.getLogger("repute.sessions")


@dataclass
class Received:
    """What a /v1/logs request did: OTLP reports the rejected records and why (partial success)."""

    accepted: int = 0
    rejected: int = 0
    reasons: list[str] = field(default_factory=list)

    def reject(self, count: int, reason: str) -> None:
        if count:
            self.rejected += count
            self.reasons.append(reason)


def _identity(records: Iterable[LogRecord], rule: IdentityRule, fallback: str | None) -> str:
    accumulator = SessionAccumulator("", rule)
    for record in records:
        accumulator.add(record)
    return accumulator.identity or fallback or UNKNOWN_IDENTITY


def _record_rows(
    tenant: str, session_id: str, records: Sequence[LogRecord], event_counts: Sequence[int], now: datetime
) -> list[list]:
    seen: Counter[str] = Counter()
    rows = []
    for record, event_count in zip(records, event_counts, strict=True):
        first = record_id(record)
        seen[first] += 1
        content = encode_record(record)
        rows.append(
            [tenant, session_id, record_id(record, seen[first]), record.time_unix_nano, content, now, event_count]
        )
    return rows


def receive(
    store: Store, tenant: str, batch: DecodedBatch, now: datetime, identity_names: Sequence[str], max_events: int
) -> Received:
    """Stores the records of a decoded request; opens a run for each new session. A session's records
    are refused whole when it is closed, or when they would take it past `max_events` run events."""
    now = to_millis(now)
    received = Received()
    received.reject(batch.rejected, f"{batch.rejected} records do not fit the OTLP schema")
    groups = group_by_session(batch.records)
    received.reject(len(batch.records) - sum(map(len, groups.values())), "records without session.id")
    valid = _storable_sessions(groups, received)
    rule = IdentityRule(identity_names)
    with holding(tenant, list(valid)):
        existing = run_store.get_runs(store, tenant, list(valid))
        stored_events = session_store.event_counts(store, tenant, list(existing))
        opened, rows = [], []
        for session_id, records in valid.items():
            run = existing.get(session_id)
            event_counts = [len(to_run_events([record])) for record in records]
            refusal = _refusal(run, stored_events.get(session_id, 0) + sum(event_counts), max_events)
            if refusal:
                received.reject(len(records), f"session {session_id} {refusal}; its records were not stored")
                continue
            if run is None:
                identity = _safe_identity(_identity(records, rule, None))
                spec = RunSpec(identity=identity, run_id=session_id, kind=RunKind.SESSION)
                opened.append(runs.new_record(tenant, spec, session_id, now))
            rows.extend(_record_rows(tenant, session_id, records, event_counts, now))
            received.accepted += len(records)
        session_store.insert_records(store, rows)
        run_store.insert_runs(store, opened)
    return received


def _refusal(run: RunRecord | None, events: int, max_events: int) -> str | None:
    """Why a session takes no more records, if it does not."""
    if run is not None and run.finalized:
        return "is finalized"
    if run is not None and run.kind != RunKind.SESSION:
        return "is a run that is not a session"
    if events > max_events:
        return f"would hold {events} run events, over the {max_events} of a run (REPUTE_MAX_EVENTS_PER_RUN)"
    return None


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
    millis = nanos // 1_000_000
    try:
        return storable_ms(millis) and timestamp_ms_of({"timestamp": nanos}, 0) == millis
    except InputError:
        return False


def _safe_identity(identity: str) -> str:
    try:
        return check_id(identity, "identity")
    except FieldError:
        return UNKNOWN_IDENTITY


@dataclass
class Sweep:
    """What one pass of the idle-session sweeper did."""

    finalized: int = 0
    undiagnosable: int = 0  # finalized as execution errors naming why
    retried: int = 0  # an unexpected failure: left open for the next pass


def finalize_idle(store: Store, now: datetime, idle: timedelta, pass_threshold: float) -> Sweep:
    """Finalizes every open session that has been idle for `idle`. One session that cannot be
    finalized never holds up the others (of any tenant); only the store being down ends the pass."""
    sweep = Sweep()
    for tenant, session_id in session_store.idle_sessions(store, now - idle):
        try:
            runs.finalize_run(store, tenant, session_id, None, now, pass_threshold)
            sweep.finalized += 1
        except StoreUnavailable:
            raise
        except ClientError as error:
            # Its stored evidence cannot be diagnosed, and never will be: close it, saying why.
            log.warning("session %s of tenant %s cannot be diagnosed: %s", session_id, tenant, error.located())
            runs.finalize_undiagnosable(store, tenant, session_id, error, now, pass_threshold)
            sweep.undiagnosable += 1
        except Exception:
            log.exception("session %s of tenant %s could not be finalized; retried next pass", session_id, tenant)
            sweep.retried += 1
    return sweep


def sessions_from_file(path: Path, identity: str | None, identity_names: Sequence[str]) -> list[SessionInput]:
    """Every session of a Collector file-exporter log, whole, for one-shot ingest (scored and mapped)."""
    records: list[LogRecord] = []
    with path.open("rb") as lines:
        for line in lines:
            if line.strip():
                records.extend(decode_json_body(line).records)
    rule = IdentityRule(identity_names)
    sessions = []
    for session_id, group in group_by_session(records).items():
        accumulator = SessionAccumulator(session_id, rule)
        for record in group:
            accumulator.add(record)
        who = check_id(accumulator.identity or identity or UNKNOWN_IDENTITY, f"session {session_id} identity")
        spec = RunSpec(identity=who, run_id=check_run_id(session_id, "session.id"), kind=RunKind.SESSION)
        performance = accumulator.score(masque=who).to_dict()
        sessions.append(SessionInput(spec, to_run_events(group), None, performance))
    return sessions
