"""SQL for the spans of trace-born runs (SPEC §3.4). Every value is bound."""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from service.store.client import Store
from service.store.queries import load

SPAN_COLUMNS = ("tenant", "run_id", "span_key", "trace_id", "start_unix_nano", "is_root", "payload", "ingested_at")


def insert_spans(store: Store, rows: Sequence[Sequence[Any]]) -> None:
    """One INSERT, one block: a request's spans are stored whole or not at all."""
    if rows:
        store.client.insert("trace_spans", list(rows), column_names=SPAN_COLUMNS)


def runs_of_traces(store: Store, tenant: str, trace_ids: Sequence[str]) -> dict[str, str]:
    """The run each of these traces was first stored under, for those already stored."""
    result = store.client.query(
        "SELECT trace_id, argMin(run_id, ingested_at) FROM trace_spans"
        " WHERE tenant = {tenant:String} AND trace_id IN {trace_ids:Array(String)} GROUP BY trace_id",
        parameters={"tenant": tenant, "trace_ids": list(trace_ids)},
    )
    return {trace_id: run_id for trace_id, run_id in result.result_rows}


def load_payloads(store: Store, tenant: str, run_id: str) -> list[str]:
    """The run's spans, one per content id."""
    result = store.client.query(
        "SELECT payload FROM trace_spans WHERE tenant = {tenant:String} AND run_id = {run_id:String}"
        " ORDER BY span_key LIMIT 1 BY span_key",
        parameters={"tenant": tenant, "run_id": run_id},
    )
    return [payload for (payload,) in result.result_rows]


def span_counts(store: Store, tenant: str, run_ids: Sequence[str]) -> dict[str, int]:
    """How many distinct spans each run holds (for the per-run event limit)."""
    result = store.client.query(
        "SELECT run_id, uniqExact(span_key) FROM trace_spans"
        " WHERE tenant = {tenant:String} AND run_id IN {run_ids:Array(String)} GROUP BY run_id",
        parameters={"tenant": tenant, "run_ids": list(run_ids)},
    )
    return {run_id: count for run_id, count in result.result_rows}


def runs_to_finalize(store: Store, settled_before: datetime, idle_before: datetime) -> list[tuple[str, str]]:
    parameters = {"settled_before": settled_before, "idle_before": idle_before}
    result = store.client.query(load("trace_runs_to_finalize"), parameters=parameters)
    return [(tenant, run_id) for tenant, run_id in result.result_rows]
