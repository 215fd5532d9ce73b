"""The one owner of inserts (as Langfuse's ClickHouse writer is): every row the service stores goes through
a function here, with its table's column list, so what is written, in which order and with which
guarantees reads in one place. The reads and the checks that decide what to write (the reputation events'
insert-time idempotency) stay with their tables' modules; the order of a finalize's writes is the
finalize's (service/services/finalize.py).
"""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from service.model import RUN_COLUMNS, RunRecord
from service.store.client import Store
from service.store.records import run_row

RUN_EVENT_COLUMNS = ("tenant", "run_id", "seq", "event_id", "event_type", "timestamp", "payload", "ingested_at")
FAILURE_COLUMNS = (
    "tenant", "run_id", "position", "identity", "run_at", "failure_type", "severity", "impact_score",
    "is_primary", "description", "causal_chain", "evidence", "remediation",
)  # fmt: skip
RUN_DAY_COLUMNS = (
    "tenant", "identity", "day", "run_id", "version", "run_at", "execution_status", "readiness", "trust_score",
    "primary_failure", "primary_impact",
)  # fmt: skip
REPUTATION_COLUMNS = (
    "tenant", "event_id", "timestamp", "identity", "category", "event_type", "score_delta",
    "confidence", "weight", "reference_type", "reference_id", "attributes", "source", "capped", "sign",
)  # fmt: skip
SPAN_COLUMNS = (
    "tenant", "trace_id", "span_key", "span_id", "conversation_id", "start_unix_nano", "end_unix_nano", "is_root",
    "payload", "ingested_at",
)  # fmt: skip
SESSION_RECORD_COLUMNS = (
    "tenant", "session_id", "record_id", "time_unix_nano", "payload", "ingested_at", "event_count",
)  # fmt: skip
KEY_COLUMNS = ("tenant", "key_id", "version", "name", "scopes", "key_hash", "created_at", "revoked_at")
PROFILE_COLUMNS = (
    "tenant", "name", "tokens_high", "tokens_critical", "tokens_per_point", "duplicates", "detectors", "identities",
    "inputs", "version",
)  # fmt: skip
TRANSITION_COLUMNS = (
    "tenant", "alert_key", "seq", "status", "alert", "severity", "subject", "value", "baseline", "message",
    "changed_at", "notified",
)  # fmt: skip


def _insert(store: Store, table: str, rows: Sequence[Sequence[Any]], columns: Sequence[str], **settings: Any) -> None:
    """One INSERT, one block: the rows are stored whole or not at all."""
    if rows:
        store.insert(table, list(rows), column_names=columns, settings=settings or None)


def runs(store: Store, records: Sequence[RunRecord]) -> None:
    _insert(store, "runs", [run_row(record) for record in records], RUN_COLUMNS)


def run_events(store: Store, rows: Sequence[Sequence[Any]]) -> None:
    _insert(store, "run_events", rows, RUN_EVENT_COLUMNS)


def failures(store: Store, rows: Sequence[Sequence[Any]]) -> None:
    _insert(store, "run_failures", rows, FAILURE_COLUMNS)


def run_days(store: Store, rows: Sequence[Sequence[Any]]) -> None:
    """Finalized runs' figures by identity and day (RUN_DAY_COLUMNS order, service.store.runs.day_row): a
    run's latest version replaces its others, so writing one again (a retried finalize) changes nothing."""
    _insert(store, "identity_run_days", rows, RUN_DAY_COLUMNS)


def reputation_events(
    store: Store, rows: Sequence[Sequence[Any]], token: str, arrived_at: datetime | None = None
) -> None:
    """Reputation rows (REPUTATION_COLUMNS order) with the block's deduplication token, which the table and
    its daily view honour; with `arrived_at`, stored as every row's inserted_at (signals capped by arrival)."""
    columns: Sequence[str] = REPUTATION_COLUMNS
    if arrived_at is not None:
        rows, columns = [[*row, arrived_at] for row in rows], (*REPUTATION_COLUMNS, "inserted_at")
    _insert(
        store,
        "reputation_events",
        rows,
        columns,
        insert_deduplication_token=token,
        deduplicate_blocks_in_dependent_materialized_views=1,
    )


def spans(store: Store, rows: Sequence[Sequence[Any]]) -> None:
    """A request's spans: stored whole or not at all."""
    _insert(store, "spans", rows, SPAN_COLUMNS)


def session_records(store: Store, rows: Sequence[Sequence[Any]]) -> None:
    _insert(store, "session_records", rows, SESSION_RECORD_COLUMNS)


def key(store: Store, row: Mapping[str, Any]) -> None:
    _insert(store, "api_keys", [[row[column] for column in KEY_COLUMNS]], KEY_COLUMNS)


def profile(store: Store, row: Sequence[Any]) -> None:
    _insert(store, "diagnosis_profiles", [row], PROFILE_COLUMNS)


def alert_transitions(store: Store, rows: Sequence[Mapping[str, Any]]) -> None:
    _insert(store, "alert_state", [[row[column] for column in TRANSITION_COLUMNS] for row in rows], TRANSITION_COLUMNS)


def credibility(store: Store, tenant: str, source: str, value: float, now: datetime) -> None:
    columns = ("tenant", "source", "credibility", "updated_at")
    _insert(store, "source_credibility", [[tenant, source, value, now]], columns)


def full_refresh_request(store: Store, now: datetime) -> None:
    """Asks the next refresh of the fleet's table to recompute every identity (migrations/0023)."""
    _insert(store, "fleet_refresh_requests", [[now]], ("requested_at",))


def half_life(store: Store, days: float, now: datetime) -> None:
    _insert(store, "reputation_model", [[days, now]], ("half_life_days", "updated_at"))


def schema_record(store: Store, table: str, row: Sequence[Any], columns: Sequence[str]) -> None:
    """A migration or a repeatable definition applied (schema_migrations, schema_definitions)."""
    _insert(store, table, [row], columns)
