"""SQL for the spans of trace-born runs (SPEC §3.4), kept by trace. Every value is bound."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from service.store.client import Store
from service.store.queries import load

# The order spans are ranked in when they name a conversation: roots first, then start, end, span id.
ConversationRank = tuple[bool, int, int, str]


@dataclass(frozen=True)
class StoredTrace:
    """What is stored of one trace (sql/trace_runs.sql)."""

    tenant: str
    trace_id: str
    conversation: str | None  # the conversation its best-ranked span names, if any
    conversation_rank: ConversationRank | None
    rooted: bool
    last_seen: datetime
    span_count: int

    @property
    def run_id(self) -> str:
        return self.conversation or self.trace_id


def stored_traces(store: Store, tenant: str = "", trace_ids: Sequence[str] = ()) -> list[StoredTrace]:
    """The stored state of these traces of `tenant`; with neither, of every trace of every tenant."""
    result = store.client.query(load("trace_runs"), parameters={"tenant": tenant, "traces": list(trace_ids)})
    return [_stored_trace(*row) for row in result.result_rows]


def _stored_trace(
    tenant: str, trace_id: str, conversation: str, rank: tuple, rooted: bool, last_seen: datetime, spans: int
) -> StoredTrace:
    named = bool(conversation)
    return StoredTrace(
        tenant, trace_id, conversation if named else None, tuple(rank) if named else None, rooted,
        last_seen.replace(tzinfo=UTC), spans,
    )  # fmt: skip


def traces_naming(store: Store, tenant: str, conversations: Sequence[str]) -> list[str]:
    """The traces with a span naming one of these conversations."""
    result = store.client.query(
        "SELECT DISTINCT trace_id FROM spans"
        " WHERE tenant = {tenant:String} AND conversation_id IN {conversations:Array(String)} ORDER BY trace_id",
        parameters={"tenant": tenant, "conversations": list(conversations)},
    )
    return [trace_id for (trace_id,) in result.result_rows]


def traces_of_runs(store: Store, tenant: str, run_ids: Sequence[str], also: Sequence[str] = ()) -> list[StoredTrace]:
    """The stored traces that belong to these runs: of the traces naming them as conversations, the traces
    whose ids they are, and `also`, those that resolve to one of the runs."""
    wanted = set(run_ids)
    candidates = {*traces_naming(store, tenant, run_ids), *run_ids, *also}
    return [trace for trace in stored_traces(store, tenant, sorted(candidates)) if trace.run_id in wanted]


def trace_held(store: Store, tenant: str, run_ids: Sequence[str]) -> set[str]:
    """Which of these run ids trace-born runs hold: spans stored under them (as their trace or conversation).
    One query when none does (the common case), then the traces resolved as `traces_of_runs` does."""
    if not run_ids:
        return set()
    result = store.client.query(
        "SELECT DISTINCT trace_id FROM spans WHERE tenant = {tenant:String}"
        " AND (trace_id IN {ids:Array(String)} OR conversation_id IN {ids:Array(String)})",
        parameters={"tenant": tenant, "ids": list(run_ids)},
    )
    found = [trace_id for (trace_id,) in result.result_rows]
    if not found:
        return set()
    wanted = set(run_ids)
    return {trace.run_id for trace in stored_traces(store, tenant, found) if trace.run_id in wanted}


def load_payloads(store: Store, tenant: str, trace_ids: Sequence[str]) -> list[str]:
    """The spans of these traces, one per content id."""
    result = store.client.query(
        "SELECT payload FROM spans WHERE tenant = {tenant:String} AND trace_id IN {traces:Array(String)}"
        " ORDER BY trace_id, span_key LIMIT 1 BY trace_id, span_key",
        parameters={"tenant": tenant, "traces": list(trace_ids)},
    )
    return [payload for (payload,) in result.result_rows]


@dataclass(frozen=True)
class OpenRunBounds:
    """Bounds on the run times (unix nanoseconds) of the open trace-born runs a list may show: NULL = none.
    `before_ns` is exclusive, the others inclusive."""

    since_ns: int | None = None
    until_ns: int | None = None
    before_ns: int | None = None
    floor_ns: int | None = None


@dataclass(frozen=True)
class OpenRun:
    """An open trace-born run as sql/open_trace_runs.sql finds it: its id so far and its spans' latest start."""

    run_id: str
    last_start_ns: int


def open_trace_runs(
    store: Store, tenant: str, active_since: datetime, bounds: OpenRunBounds, limit: int
) -> list[OpenRun]:
    """The tenant's trace-born runs without a `runs` row whose traces received a span since `active_since`,
    within `bounds`, the most recently started first, at most `limit` (sql/open_trace_runs.sql). A tenant
    whose traces received no span since then has none: one narrow look first, as the read costs the engine's
    planning of its statement (about 11 ms) whatever it finds (bench/README.md)."""
    if not _spans_since(store, tenant, active_since):
        return []
    parameters = {"tenant": tenant, "active_since": active_since, "limit": limit, **vars(bounds)}
    result = store.client.query(load("open_trace_runs"), parameters=parameters)
    return [OpenRun(run_id, last_start) for run_id, _, last_start in result.result_rows]


def _spans_since(store: Store, tenant: str, since: datetime) -> bool:
    """Whether a span of the tenant was stored since `since`."""
    result = store.client.query(
        "SELECT 1 FROM spans WHERE tenant = {tenant:String} AND ingested_at >= {since:DateTime64(3, 'UTC')} LIMIT 1",
        parameters={"tenant": tenant, "since": since},
    )
    return bool(result.result_rows)
