"""Trace-born runs (SPEC §3.4): spans received over /v1/traces are stored by trace; the run a trace
belongs to is its conversation id (the root span's, else the earliest span's that names one), else its
trace id, read from every span stored when it is needed. So the run id never depends on how an exporter
batched the spans, and a trace-born run becomes a `runs` row only when it is finalized: explicitly, once
its root span has arrived and nothing came for `trace_settle_seconds` (`finalize_if_settled`, which the
server calls at that moment), or when idle (the sweeper, `due`, which also catches up after a
restart: the state is the store).

Decisions where the spec is silent:
- Spans of a run already finalized, or of a run id that is not trace-born, are rejected (partialSuccess);
  a rejected span is not stored, so it never moves its trace to another run.
- A run holds at most `max_events` spans over all of its traces (REPUTE_MAX_EVENTS_PER_RUN).
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

import msgspec

from service.errors import FieldError
from service.ids import RUN_ID_RULE, check_run_id
from service.otlp.redaction import redacted, redacted_attributes
from service.priority import stepping
from service.services.finalize import finalize_locked
from service.services.inputs import Received, telemetry_refusal
from service.services.locks import holding, run_lock
from service.settings import Settings
from service.store import runs as run_store
from service.store import traces as trace_store
from service.store import writer
from service.store.client import Store
from service.store.rows import to_millis
from service.store.traces import ConversationRank, StoredTrace
from service.traces import DecodedSpans, Span, SpanEvent, conversation_id, span_content_id
from service.traces.roles import agent_name, default_service
from service.traces.spans import encode_span
from service.vocab import RunKind, RunStatus


@dataclass
class TracesReceived(Received):
    """What a /v1/traces request did, and the runs whose root span has arrived (they settle next)."""

    rooted_runs: set[str] = field(default_factory=set)


def conversation_rank(span: Span) -> ConversationRank:
    """The rank of a span naming a conversation: roots first, then the mapping's order."""
    return not span.is_root, span.start_unix_nano, span.end_unix_nano, span.span_id


def _run_of(trace_id: str, stored: StoredTrace | None, incoming: Sequence[Span]) -> str:
    """The run a trace belongs to once `incoming` is stored beside what is."""
    candidates = [(conversation_rank(span), name) for span in incoming if (name := conversation_id(span))]
    if stored is not None and stored.conversation is not None and stored.conversation_rank is not None:
        candidates.append((stored.conversation_rank, stored.conversation))
    return min(candidates)[1] if candidates else trace_id


def _span_rows(tenant: str, spans: Sequence[Span], now: datetime) -> list[list[object]]:
    return [
        [tenant, s.trace_id, span_content_id(s), s.span_id, conversation_id(s) or "", s.start_unix_nano,
         s.end_unix_nano, s.is_root, encode_span(s), now]
        for s in stepping(spans)
    ]  # fmt: skip


def receive(store: Store, tenant: str, decoded: DecodedSpans, now: datetime, settings: Settings) -> TracesReceived:
    """Stores the spans of a decoded request (personal attributes redacted: settings.redact_attributes),
    each trace whole or not at all."""
    now = to_millis(now)
    max_events = settings.max_events_per_run
    received = TracesReceived()
    received.reject(decoded.rejected_count, decoded.rejection_message())
    by_trace: defaultdict[str, list[Span]] = defaultdict(list)
    for span in stepping(decoded.spans):
        by_trace[span.trace_id].append(_redacted(span, settings.redact_attributes, tenant))
    stored = {trace.trace_id: trace for trace in trace_store.stored_traces(store, tenant, sorted(by_trace))}
    by_run: defaultdict[str, list[str]] = defaultdict(list)
    for trace_id, spans in by_trace.items():
        by_run[_run_of(trace_id, stored.get(trace_id), spans)].append(trace_id)
    valid = _valid_runs(by_run, by_trace, received)
    with holding(tenant, sorted(valid)):
        existing = run_store.get_runs(store, tenant, list(valid))
        stored_spans = _stored_span_counts(store, tenant, valid)
        rows = []
        nameless: list[str] = []
        for run_id, trace_ids in sorted(valid.items()):
            spans = [span for trace_id in trace_ids for span in by_trace[trace_id]]
            count = stored_spans.get(run_id, 0) + len(spans)
            refusal = telemetry_refusal(existing.get(run_id), RunKind.TRACE, count, "spans", max_events)
            if refusal:
                received.reject(len(spans), f"run {run_id} {refusal}; its spans were not stored")
                continue
            rows.extend(_span_rows(tenant, spans, now))
            received.accepted += len(spans)
            nameless.extend(_nameless(run_id, spans))
            if any(span.is_root for span in spans) or any(stored[t].rooted for t in trace_ids if t in stored):
                received.rooted_runs.add(run_id)
        writer.spans(store, rows)
    if nameless:
        received.warnings.append(_NAMELESS.format(runs=", ".join(nameless[:_NAMED_AT_MOST])))
    return received


_NAMED_AT_MOST = 10
_NAMELESS = (
    "runs {runs} got no agent name: their spans name no agent and their service.name is the SDK's default,"
    " so unrelated agents would share one reputation; set OTEL_SERVICE_NAME (or service.name), or"
    " gen_ai.agent.name on the agent spans"
)


def _nameless(run_id: str, spans: Sequence[Span]) -> list[str]:
    """[run_id] when no span of this request names an agent and their service is the SDK's default
    (SPEC §3.5), else []: the run's identity would fall back to `unknown_service`."""
    if any(agent_name(span) for span in spans) or not all(default_service(span) for span in spans):
        return []
    return [run_id]


def _redacted(span: Span, names: Sequence[str], tenant: str) -> Span:
    events = tuple(SpanEvent(event.name, redacted(event.attributes, names, tenant)) for event in span.events)
    own = redacted_attributes(span.attributes, span.resource_attributes, names, tenant)
    return msgspec.structs.replace(span, events=events, **own)


def _valid_runs(
    by_run: dict[str, list[str]], by_trace: dict[str, list[Span]], received: Received
) -> dict[str, list[str]]:
    valid = {}
    for run_id, trace_ids in by_run.items():
        try:
            valid[check_run_id(run_id, "gen_ai.conversation.id")] = trace_ids
        except FieldError:
            received.reject(sum(len(by_trace[t]) for t in trace_ids), f"gen_ai.conversation.id must be {RUN_ID_RULE}")
    return valid


def _stored_span_counts(store: Store, tenant: str, runs_by_id: dict[str, list[str]]) -> dict[str, int]:
    """The spans each run holds already, over all of its stored traces."""
    counts: defaultdict[str, int] = defaultdict(int)
    also = [trace_id for trace_ids in runs_by_id.values() for trace_id in trace_ids]
    for trace in trace_store.traces_of_runs(store, tenant, list(runs_by_id), also):
        counts[trace.run_id] += trace.span_count
    return counts


# --- finalizing ---------------------------------------------------------------------------------------


class Settling(NamedTuple):
    finalized: bool
    look_again: datetime | None  # None: nothing to wait for (finalized, gone, or no root yet)


def finalize_if_settled(
    store: Store, tenant: str, run_id: str, now: datetime, settle: timedelta, pass_threshold: float
) -> Settling:
    """Finalizes the run when its root span has arrived and it received nothing for `settle`; else says
    when to look again. The look and the finalize hold the run's lock, as a request storing its spans does:
    the traces looked at are those finalized, read once."""
    with run_lock(tenant, run_id):
        traces = trace_store.traces_of_runs(store, tenant, [run_id])
        if not traces or not any(trace.rooted for trace in traces):
            return Settling(False, None)
        last_seen = max(trace.last_seen for trace in traces)
        if last_seen + settle > now:
            return Settling(False, last_seen + settle)
        _, finalized = finalize_locked(store, tenant, run_id, None, now, pass_threshold, traces)
        return Settling(finalized, None)


def due(store: Store, now: datetime, settle: timedelta, idle: timedelta) -> list[tuple[str, str]]:
    """The trace-born runs (tenant, run id) of every tenant that settled or went idle and are not finalized:
    due for the sweeper's finalize."""
    activity: dict[tuple[str, str], tuple[bool, datetime]] = {}
    for trace in trace_store.stored_traces(store):
        rooted, last_seen = activity.get((trace.tenant, trace.run_id), (False, trace.last_seen))
        activity[(trace.tenant, trace.run_id)] = (rooted or trace.rooted, max(last_seen, trace.last_seen))
    settled = [
        key
        for key, (rooted, last_seen) in sorted(activity.items())
        if (rooted and last_seen < now - settle) or last_seen < now - idle
    ]
    return _not_finalized(store, settled)


def _not_finalized(store: Store, due: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    by_tenant: defaultdict[str, list[str]] = defaultdict(list)
    for tenant, run_id in due:
        by_tenant[tenant].append(run_id)
    states = {
        (tenant, run_id): status
        for tenant, run_ids in by_tenant.items()
        for run_id, status in run_store.run_states(store, tenant, run_ids).items()
    }
    return [key for key in due if states.get(key) != RunStatus.FINALIZED]
