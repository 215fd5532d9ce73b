"""A trace-born run's spans as a timeline (GET /v1/runs/{id}/spans, SPEC §9; service.traces.timeline): read
from the stored spans of the run's traces, finalized or open (SPEC §3.4 "A running agent is visible"). A root
run shows every span of its tree, each naming the run it belongs to; a child run (SPEC §3.5) its agent's own.
A run not made from a trace has no spans (404); a trace-born run whose spans outlived their TTL has none left.
"""

from dataclasses import dataclass
from typing import Any

from service.errors import NotFound
from service.services.runs import run_and_parents
from service.store import runs as run_store
from service.store import traces as trace_store
from service.store.client import Store
from service.traces import decode_span
from service.traces.timeline import timeline
from service.vocab import RunKind


@dataclass(frozen=True)
class SpanPage:
    spans: list[dict[str, Any]]
    total: int  # the run's spans, all pages


def list_spans(store: Store, tenant: str, run_id: str, first: int, limit: int) -> SpanPage:
    """A page of the run's timeline from position `first` on, and how many spans it holds."""
    stored = run_store.get_run(store, tenant, run_id)
    if stored is not None and stored.kind != RunKind.TRACE:
        raise NotFound(f"spans of run {run_id!r}: it was not made from a trace")
    root = (stored.parent_run_id or run_id) if stored is not None else _open_root(store, tenant, run_id)
    traces = trace_store.traces_of_runs(store, tenant, [root])
    payloads = trace_store.load_payloads(store, tenant, [trace.trace_id for trace in traces]) if traces else []
    found = timeline(root, map(decode_span, payloads), run_id)
    if found is None and stored is None:
        raise NotFound(f"run {run_id!r}")
    return SpanPage([], 0) if found is None else SpanPage(found.describe(first, limit), len(found.spans))


def _open_root(store: Store, tenant: str, run_id: str) -> str:
    """The root run of the open trace-born tree `run_id` is part of: the longest prefix of it (a child's id is
    `<root>:<identity>`) that some stored trace belongs to."""
    for candidate in run_and_parents(run_id):
        if trace_store.traces_of_runs(store, tenant, [candidate]):
            return candidate
    raise NotFound(f"run {run_id!r}")
