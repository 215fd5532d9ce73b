"""Trace-born runs (SPEC §3.4): spans received over /v1/traces are stored per run; a run is finalized
explicitly, once its root span has arrived and nothing came for `trace_settle_seconds`, or by the idle
sweeper. Its state is the store (runs + trace_spans), so a restart loses nothing and finalizes nothing
twice (finalize_run is idempotent).

Decisions where the spec is silent:
- A trace belongs to the run its first spans were stored under: the conversation id (gen_ai.conversation.id)
  when a span of the trace in that request carries it, else the trace id. Instrumentations that set the
  conversation id do so on the spans of each turn, so it arrives with the trace's first export.
- A run's identity, suite, task and trial are read when it opens and read again from all its spans when it
  is finalized (the root span, which often names the agent, tends to arrive last).
- Spans for a finalized run, or for a run id that is not trace-born, are rejected (partialSuccess).
"""

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta

from service.errors import FieldError
from service.ids import RUN_ID_RULE, check_run_id
from service.services import runs
from service.services.inputs import Received, trace_spec
from service.services.locks import holding
from service.store import runs as run_store
from service.store import traces as trace_store
from service.store.client import Store
from service.store.rows import to_millis
from service.traces import DecodedSpans, Span, group_runs, map_run, span_content_id
from service.traces.spans import encode_span
from service.vocab import RunKind


def _runs_of(store: Store, tenant: str, spans: Sequence[Span]) -> dict[str, list[Span]]:
    """The request's spans by run: traces already stored stay with their run; new ones group by §3.4."""
    stored = trace_store.runs_of_traces(store, tenant, sorted({span.trace_id for span in spans}))
    grouped: defaultdict[str, list[Span]] = defaultdict(list)
    new = [span for span in spans if span.trace_id not in stored]
    for span in spans:
        if span.trace_id in stored:
            grouped[stored[span.trace_id]].append(span)
    for run_id, members in group_runs(new).items():
        grouped[run_id].extend(members)
    return grouped


def _valid_runs(grouped: dict[str, list[Span]], received: Received) -> dict[str, list[Span]]:
    valid = {}
    for run_id, spans in grouped.items():
        try:
            valid[check_run_id(run_id, "gen_ai.conversation.id")] = spans
        except FieldError:
            received.reject(len(spans), f"gen_ai.conversation.id must be {RUN_ID_RULE}")
    return valid


def _span_rows(tenant: str, run_id: str, spans: Sequence[Span], now: datetime) -> list[list[object]]:
    return [
        [tenant, run_id, span_content_id(s), s.trace_id, s.start_unix_nano, s.is_root, encode_span(s), now]
        for s in spans
    ]


def receive(store: Store, tenant: str, decoded: DecodedSpans, now: datetime, max_events: int) -> Received:
    """Stores the spans of a decoded request; opens a run for each new one."""
    now = to_millis(now)
    received = Received()
    received.reject(decoded.rejected_count, decoded.rejection_message())
    valid = _valid_runs(_runs_of(store, tenant, decoded.spans), received)
    with holding(tenant, list(valid)):
        existing = run_store.get_runs(store, tenant, list(valid))
        stored_spans = trace_store.span_counts(store, tenant, list(valid))
        opened, rows = [], []
        for run_id, spans in valid.items():
            run = existing.get(run_id)
            if run is not None and (run.finalized or run.kind != RunKind.TRACE):
                state = "finalized" if run.finalized else "a run that is not trace-born"
                received.reject(len(spans), f"run {run_id} is {state}; its spans were not stored")
                continue
            if stored_spans.get(run_id, 0) + len(spans) > max_events:
                received.reject(len(spans), f"run {run_id} would exceed {max_events} spans (REPUTE_MAX_EVENTS_PER_RUN)")
                continue
            if run is None:
                opened.append(runs.new_record(tenant, trace_spec(map_run(run_id, spans)), run_id, now))
            rows.extend(_span_rows(tenant, run_id, spans, now))
            received.accepted += len(spans)
        trace_store.insert_spans(store, rows)
        run_store.insert_runs(store, opened)
    return received


def finalize_due(store: Store, now: datetime, settle: timedelta, idle: timedelta, pass_threshold: float) -> runs.Sweep:
    """Finalizes every open trace-born run that has settled or gone idle (see runs.finalize_each)."""
    return runs.finalize_each(store, trace_store.runs_to_finalize(store, now - settle, now - idle), now, pass_threshold)
