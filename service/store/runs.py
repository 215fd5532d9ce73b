"""SQL for runs, their raw events and their failures. Callers pass plain values; every value is bound."""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import orjson

from service.store.client import Store
from service.store.queries import load
from service.store.rows import as_utc, dicts

RUN_COLUMNS = (
    "tenant", "run_id", "version", "identity", "kind", "suite", "task_id", "trial", "metadata",
    "created_at", "started_at", "ended_at", "run_at", "finalized_at", "status", "execution_status",
    "failure_stage", "failure_reason_code", "failure_message", "score", "trust_score", "readiness",
    "primary_failure", "loop_control", "memory_integrity", "tool_output_utilization", "context_health",
    "cost_efficiency", "skill_adherence", "session_composite", "session_performance", "event_count",
    "tool_calls", "errors", "total_tokens", "diagnosis", "diagnosis_hash",
)  # fmt: skip
RUN_DATETIME_COLUMNS = ("created_at", "started_at", "ended_at", "run_at", "finalized_at")
EVENT_COLUMNS = ("tenant", "run_id", "seq", "event_id", "event_type", "timestamp", "payload", "ingested_at")
FAILURE_COLUMNS = (
    "tenant", "run_id", "position", "identity", "run_at", "failure_type", "severity", "impact_score",
    "is_primary", "description", "causal_chain", "evidence", "remediation",
)  # fmt: skip


def insert_runs(store: Store, rows: Sequence[dict[str, Any]]) -> None:
    if rows:
        store.client.insert("runs", [[row[c] for c in RUN_COLUMNS] for row in rows], column_names=RUN_COLUMNS)


def _run_from_row(row: dict[str, Any]) -> dict[str, Any]:
    for column in RUN_DATETIME_COLUMNS:
        if column in row:
            row[column] = as_utc(row[column])
    return row


def get_runs(store: Store, tenant: str, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The latest version of each run that exists, by run id."""
    result = store.client.query(
        "SELECT * FROM runs WHERE tenant = {tenant:String} AND run_id IN {run_ids:Array(String)}"
        " ORDER BY version DESC LIMIT 1 BY run_id",
        parameters={"tenant": tenant, "run_ids": list(run_ids)},
    )
    return {row["run_id"]: _run_from_row(row) for row in dicts(result)}


def run_states(store: Store, tenant: str, run_ids: Sequence[str]) -> dict[str, str]:
    """The status (open or finalized) of each run that exists: a narrow read for the hot path."""
    result = store.client.query(
        "SELECT run_id, status FROM runs WHERE tenant = {tenant:String} AND run_id IN {run_ids:Array(String)}"
        " ORDER BY version DESC LIMIT 1 BY run_id",
        parameters={"tenant": tenant, "run_ids": list(run_ids)},
    )
    return {run_id: status for run_id, status in result.result_rows}


def get_run(store: Store, tenant: str, run_id: str) -> dict[str, Any] | None:
    return get_runs(store, tenant, [run_id]).get(run_id)


def next_event_seq(store: Store, tenant: str, run_id: str) -> int:
    return int(
        store.client.query(
            "SELECT if(count() = 0, 0, max(seq) + 1) FROM run_events"
            " WHERE tenant = {tenant:String} AND run_id = {run_id:String}",
            parameters={"tenant": tenant, "run_id": run_id},
        ).result_rows[0][0]
    )


def insert_events(store: Store, rows: Sequence[Sequence[Any]]) -> None:
    """One INSERT, one block: a batch of events is written whole or not at all."""
    if rows:
        store.client.insert("run_events", list(rows), column_names=EVENT_COLUMNS)


def load_event_payloads(store: Store, tenant: str, run_id: str) -> list[dict[str, Any]]:
    result = store.client.query(
        "SELECT payload FROM run_events WHERE tenant = {tenant:String} AND run_id = {run_id:String}"
        " ORDER BY seq LIMIT 1 BY seq",
        parameters={"tenant": tenant, "run_id": run_id},
    )
    return [orjson.loads(row[0]) for row in result.result_rows]


def list_events(store: Store, tenant: str, run_id: str, offset: int, limit: int) -> list[dict[str, Any]]:
    result = store.client.query(
        "SELECT seq, event_id, event_type, timestamp, payload FROM run_events"
        " WHERE tenant = {tenant:String} AND run_id = {run_id:String}"
        " ORDER BY seq LIMIT 1 BY seq LIMIT {limit:UInt32} OFFSET {offset:UInt32}",
        parameters={"tenant": tenant, "run_id": run_id, "limit": limit, "offset": offset},
    )
    return [
        {"seq": seq, "event_id": event_id, "type": event_type, "timestamp": as_utc(ts), "data": orjson.loads(payload)}
        for seq, event_id, event_type, ts, payload in result.result_rows
    ]


def insert_failures(store: Store, rows: Sequence[Sequence[Any]]) -> None:
    if rows:
        store.client.insert("run_failures", list(rows), column_names=FAILURE_COLUMNS)


def list_runs(
    store: Store,
    tenant: str,
    *,
    identity: str = "",
    suite: str = "",
    readiness: str = "",
    execution_status: str = "",
    primary_failure: str = "",
    status: str = "",
    since: datetime | None = None,
    until: datetime | None = None,
    after: tuple[datetime, str] | None = None,
    limit: int = 50,
) -> list[dict[str, Any]]:
    """Runs newest first (by run time, then id); `after` is the (run_at, run_id) of the last row seen."""
    parameters = {
        "tenant": tenant,
        "identity": identity,
        "suite": suite,
        "readiness": readiness,
        "execution_status": execution_status,
        "primary_failure": primary_failure,
        "status": status,
        "since": since,
        "until": until,
        "after_at": after[0] if after else None,
        "after_id": after[1] if after else "",
        "limit": limit,
    }
    return [_run_from_row(row) for row in dicts(store.client.query(load("runs_list"), parameters=parameters))]


def suite_runs(store: Store, tenant: str, suite: str) -> list[dict[str, Any]]:
    return dicts(store.client.query(load("suite_runs"), parameters={"tenant": tenant, "suite": suite}))
