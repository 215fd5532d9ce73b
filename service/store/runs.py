"""SQL for runs, their raw events and their failures. Callers pass plain values; every value is bound."""

from collections.abc import Sequence
from datetime import UTC, datetime
from functools import cache
from typing import Any

import orjson

from service.diagnosis import Cause, Event
from service.priority import stepping
from service.store import writer
from service.store.client import Store
from service.store.queries import load
from service.store.records import RUN_COLUMNS, SUMMARY_COLUMNS, RunRecord, RunSummary, run_record, summary_row
from service.store.rows import as_utc, dicts, epoch_ms
from service.store.templates import render
from service.vocab import RunStatus


def event_rows(
    tenant: str, run_id: str, events: Sequence[Event], payloads: Sequence[bytes], first_seq: int, now: datetime
) -> list[tuple[Any, ...]]:
    """Rows of run_events for normalized events (and their payloads, serialized once by the run's material)
    that start at position `first_seq` of the run. Times are epoch milliseconds, the columns' own encoding:
    the driver writes them as they are instead of converting 10,000s of datetimes per batch. Tuples: the
    cyclic collector stops tracking a tuple of strings and numbers at its first pass, where it walks a list
    at every pass while the run is written."""
    ingested_at = epoch_ms(now)
    return [
        (
            tenant, run_id, seq, event.event_id if "event_id" in event.data else f"event_{seq}", event.type,
            event.timestamp_ms, payload.decode(), ingested_at,
        )
        for seq, (event, payload) in enumerate(zip(stepping(events), payloads, strict=True), first_seq)
    ]  # fmt: skip


def stored_events(store: Store, tenant: str, run_id: str) -> tuple[list[Event], list[bytes]]:
    """A run's events as they were stored (normalized when they came: their type, id and time are read back,
    not read again from the payload), and each one's payload as stored."""
    result = store.client.query(
        "SELECT seq, event_id, event_type, toUnixTimestamp64Milli(timestamp), payload FROM run_events"
        " WHERE tenant = {tenant:String} AND run_id = {run_id:String} ORDER BY seq LIMIT 1 BY seq",
        parameters={"tenant": tenant, "run_id": run_id},
    )
    events, payloads = [], []
    for seq, event_id, event_type, timestamp_ms, payload in result.result_rows:
        encoded = payload.encode()
        events.append(Event(seq, event_id, event_type, timestamp_ms, 0, orjson.loads(encoded)))
        payloads.append(encoded)
    return events, payloads


def failure_rows(record: RunRecord, causes: Sequence[Cause]) -> list[list[Any]]:
    """Rows of run_failures for a finalized run's causes (its diagnosis's, in cause order)."""
    rows = []
    primary_seen = False
    for position, cause in enumerate(causes):
        is_primary = not primary_seen and cause.type == record.primary_failure
        primary_seen = primary_seen or is_primary
        rows.append([
            record.tenant, record.run_id, position, record.identity, record.run_at, cause.type, cause.severity,
            cause.impact_score, is_primary, cause.description, cause.causal_chain, list(cause.evidence),
            cause.remediation,
        ])  # fmt: skip
    return rows


_IMPACT, _IS_PRIMARY = writer.FAILURE_COLUMNS.index("impact_score"), writer.FAILURE_COLUMNS.index("is_primary")


def day_row(record: RunRecord, failures: Sequence[Sequence[Any]]) -> list[Any]:
    """The identity_run_days row of a finalized run (writer.RUN_DAY_COLUMNS), its primary cause's impact
    taken from its run_failures rows (`failure_rows`; 0 without a primary cause)."""
    impact = next((row[_IMPACT] for row in failures if row[_IS_PRIMARY]), 0)
    return [
        record.tenant, record.identity, record.run_at.astimezone(UTC).date(), record.run_id, record.version,
        record.run_at, record.execution_status, record.readiness, record.trust_score, record.primary_failure, impact,
    ]  # fmt: skip


_SELECT_RUN = f"SELECT {', '.join(RUN_COLUMNS)} FROM runs"
# A read of some runs by id leaves the projections out: for a condition on the tenant the engine weighs each
# newest-first projection's index (sorted by tenant, then time), which at millions of runs costs several times
# the read itself (bench/README.md, "The runs list at 100,000,000 events").
BY_RUN_ID = " SETTINGS optimize_use_projections = 0"
# The latest version of each run named (parameters tenant and run_ids), after a SELECT ... FROM runs.
_LATEST_OF_RUNS = (
    " WHERE tenant = {tenant:String} AND run_id IN {run_ids:Array(String)} ORDER BY version DESC LIMIT 1 BY run_id"
    + BY_RUN_ID
)


def get_runs(store: Store, tenant: str, run_ids: Sequence[str]) -> dict[str, RunRecord]:
    """The latest version of each run that exists, by run id."""
    result = store.client.query(_SELECT_RUN + _LATEST_OF_RUNS, parameters={"tenant": tenant, "run_ids": list(run_ids)})
    return {row["run_id"]: run_record(row) for row in dicts(result)}


def run_states(store: Store, tenant: str, run_ids: Sequence[str]) -> dict[str, str]:
    """The status (open or finalized) of each run that exists: a narrow read for the hot path."""
    result = store.client.query(
        "SELECT run_id, status FROM runs" + _LATEST_OF_RUNS, parameters={"tenant": tenant, "run_ids": list(run_ids)}
    )
    return {run_id: status for run_id, status in result.result_rows}


def parents_and_failures(store: Store, tenant: str, run_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """The parent run id and primary failure of each run that exists ('' for none), from its latest version:
    a narrow read (an explanation names them for its references; a whole record carries its diagnosis)."""
    result = store.client.query(
        "SELECT run_id, parent_run_id, primary_failure FROM runs" + _LATEST_OF_RUNS,
        parameters={"tenant": tenant, "run_ids": list(run_ids)},
    )
    return {run_id: (parent, failure) for run_id, parent, failure in result.result_rows}


def get_run(store: Store, tenant: str, run_id: str) -> RunRecord | None:
    return get_runs(store, tenant, [run_id]).get(run_id)


def next_event_seq(store: Store, tenant: str, run_id: str) -> int:
    return int(
        store.client.query(
            "SELECT if(count() = 0, 0, max(seq) + 1) FROM run_events"
            " WHERE tenant = {tenant:String} AND run_id = {run_id:String}",
            parameters={"tenant": tenant, "run_id": run_id},
        ).result_rows[0][0]
    )


def event_payloads(store: Store, tenant: str, run_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """The stored events of some runs, each run's in order; a run without any (its events' TTL has passed)
    is left out."""
    result = store.client.query(
        "SELECT run_id, payload FROM run_events WHERE tenant = {tenant:String} AND run_id IN {run_ids:Array(String)}"
        " ORDER BY run_id, seq LIMIT 1 BY run_id, seq",
        parameters={"tenant": tenant, "run_ids": list(run_ids)},
    )
    events: dict[str, list[dict[str, Any]]] = {}
    for run_id, payload in result.result_rows:
        events.setdefault(run_id, []).append(orjson.loads(payload))
    return events


def list_events(store: Store, tenant: str, run_id: str, first_seq: int, limit: int) -> list[dict[str, Any]]:
    """Up to `limit` events of a run from position `first_seq` on, in order."""
    result = store.client.query(
        "SELECT seq, event_id, event_type, timestamp, payload FROM run_events"
        " WHERE tenant = {tenant:String} AND run_id = {run_id:String} AND seq >= {first_seq:UInt32}"
        " ORDER BY seq LIMIT 1 BY seq LIMIT {limit:UInt32}",
        parameters={"tenant": tenant, "run_id": run_id, "limit": limit, "first_seq": first_seq},
    )
    return [
        {"seq": seq, "event_id": event_id, "type": event_type, "timestamp": as_utc(ts), "data": orjson.loads(payload)}
        for seq, event_id, event_type, ts, payload in result.result_rows
    ]


def replace_failures(store: Store, tenant: str, run_ids: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """The causes of some runs re-diagnosed (the rebuild): their rows are deleted, then `rows` inserted. Rows
    are keyed by position, so a run with fewer causes than before would otherwise keep its last old ones."""
    store.client.command(
        f"DELETE FROM {store.mutable('run_failures')} WHERE tenant = {{tenant:String}}"
        " AND run_id IN {run_ids:Array(String)}",
        parameters={"tenant": tenant, "run_ids": list(run_ids)},
    )
    writer.failures(store, rows)


# The runs list's filters (sql/runs_filters/<name>.sql), rendered into both of its queries so that both
# always pick the same runs.
RUNS_FILTERS = ("unchanging", "window", "verdict")


@cache
def summary_query(name: str) -> str:
    """sql/<name>.sql with {{summary_columns}} (a list's row: service.model.RunSummary) and the runs list's
    filters rendered in."""
    filters = {part: f"(\n{load(f'runs_filters/{part}').strip()}\n)" for part in RUNS_FILTERS}
    return render(load(name), {**filters, "summary_columns": ", ".join(SUMMARY_COLUMNS)})


# How many of the newest versions that pass the filters a page of the runs list reads, per run shown, before it
# reads them all (sql/runs_list_newest.sql): a run's earlier versions (an open one before its finalized one)
# may pass and take candidates' places.
CANDIDATES_PER_RUN = (3, 30)


def list_runs(
    store: Store,
    tenant: str,
    *,
    identity: str = "",
    suite: str = "",
    parent: str = "",
    q: str = "",
    readiness: str = "",
    execution_status: str = "",
    primary_failure: str = "",
    status: str = "",
    since: datetime | None = None,
    until: datetime | None = None,
    after: tuple[datetime, str] | None = None,
    limit: int = 50,
) -> list[RunSummary]:
    """Runs newest first (by run time, then id); `after` is the (run_at, run_id) of the last row seen.
    A page comes from the newest versions when they hold it whole (sql/runs_list_newest.sql), else from
    every version (sql/runs_list.sql)."""
    parameters = {
        "tenant": tenant,
        "identity": identity,
        "suite": suite,
        "parent": parent,
        "q": q,
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
    for per_run in CANDIDATES_PER_RUN:
        page = _page_of_newest(store, parameters, per_run * limit, limit)
        if page is not None:
            return page
    return [summary_row(row) for row in dicts(store.client.query(summary_query("runs_list"), parameters=parameters))]


def _page_of_newest(store: Store, parameters: dict[str, Any], candidates: int, limit: int) -> list[RunSummary] | None:
    """The page from the newest `candidates` versions that pass the filters (sql/runs_list_newest.sql); None when
    they are not every such version there is and do not fill the page. A full page is exact: each run shown is at
    least as new as the oldest candidate, and any run newer than that whose latest version passes has that version
    among them. A version stored twice (a retried insert the engine has not merged yet) counts twice among them
    and is shown once. A run given a newer version between the two reads is left out of this one page (the next
    read shows it)."""
    rows = dicts(
        store.client.query(summary_query("runs_list_newest"), parameters={**parameters, "candidates": candidates})
    )
    latest = _newest_among(rows)
    unsure = set(latest) if any(parameters[name] for name in CHANGING_FILTERS) else _unsure_runs(rows, latest)
    latest |= _latest_versions(store, parameters["tenant"], unsure)
    shown: list[RunSummary] = []
    seen: set[tuple[str, int]] = set()
    for row in rows:
        version = row.pop("version")
        key = (row["run_id"], version)
        if latest.get(row["run_id"]) == version and key not in seen:
            shown.append(summary_row(row))
        seen.add(key)
    if len(rows) == candidates and len(shown) < limit:
        return None
    return shown[:limit]


# The filters on what a run's versions change (sql/runs_filters/verdict.sql): a later version may fail one that
# an earlier one passes, and so not be among the candidates.
CHANGING_FILTERS = ("readiness", "execution_status", "primary_failure", "status")


def _newest_among(rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Each candidate run's highest version among the candidates."""
    newest: dict[str, int] = {}
    for row in rows:
        newest[row["run_id"]] = max(row["version"], newest.get(row["run_id"], 0))
    return newest


def _unsure_runs(rows: Sequence[dict[str, Any]], newest: dict[str, int]) -> set[str]:
    """The candidate runs whose latest version may not be among the candidates, when only filters that no
    version changes apply: a run whose newest candidate is open (its finalized version has its events' end for
    its run time, which may be earlier), and the oldest candidate's run (a later version of it in the same
    place of the order may be cut by the LIMIT). A finalized version's later versions are its re-diagnoses
    (service.services.rebuild), at its run time: they come no later in the order and are among the candidates."""
    unsure = {
        row["run_id"] for row in rows if row["version"] == newest[row["run_id"]] and row["status"] == RunStatus.OPEN
    }
    return unsure | {rows[-1]["run_id"]} if rows else unsure


def _latest_versions(store: Store, tenant: str, run_ids: set[str]) -> dict[str, int]:
    """Each run's latest version (sql/run_latest_versions.sql)."""
    if not run_ids:
        return {}
    parameters = {"tenant": tenant, "run_ids": sorted(run_ids)}
    rows = store.client.query(load("run_latest_versions"), parameters=parameters).result_rows
    return {run_id: version for run_id, version in rows}


def tenant_counts(store: Store, tenant: str) -> tuple[int, int, datetime | None]:
    """A tenant's runs, the identities they belong to, and when a run was last finalized."""
    result = store.client.query(
        "SELECT uniqExact(run_id), uniqExact(identity), max(finalized_at) FROM runs WHERE tenant = {tenant:String}",
        parameters={"tenant": tenant},
    )
    runs, identities, last_finalized = result.result_rows[0]
    return int(runs), int(identities), as_utc(last_finalized) if last_finalized else None


def suite_runs(store: Store, tenant: str, suite: str) -> list[RunSummary]:
    result = store.client.query(summary_query("suite_runs"), parameters={"tenant": tenant, "suite": suite})
    return [summary_row(row) for row in dicts(result)]


def runs_after(store: Store, tenant: str, after: str, limit: int) -> list[RunSummary]:
    """The next `limit` runs of the tenant after run id `after` ('' first), in run id order, every status:
    the latest version of each with what reputation emission needs (sql/runs_after.sql)."""
    parameters = {"tenant": tenant, "after": after, "limit": limit}
    return [summary_row(row) for row in dicts(store.client.query(summary_query("runs_after"), parameters=parameters))]


def causes_of(store: Store, tenant: str, run_ids: Sequence[str]) -> dict[str, list[tuple[str, str, int]]]:
    """Each run's causes as (failure type, severity, impact score), in cause order; a run without any is
    left out."""
    result = store.client.query(load("run_causes"), parameters={"tenant": tenant, "run_ids": list(run_ids)})
    causes: dict[str, list[tuple[str, str, int]]] = {}
    for run_id, failure_type, severity, impact in result.result_rows:
        causes.setdefault(run_id, []).append((failure_type, severity, impact))
    return causes
