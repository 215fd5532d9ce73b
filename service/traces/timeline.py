"""A trace-born run's spans as a timeline (issue #41: the run page's waterfall): each span in run order with
its place in the tree, its times, role and agent, the run of the tree it belongs to (SPEC §3.5), what the
mapping made of it (its tool, token usage and cost, its error) and the model's messages where the trace
carries them (service.traces.messages). Pure: no I/O, no clock.

A trace is indexed once (TraceIndex) and each span's figures come from the same mapping its run's events do
(mapping.own_events), so the timeline and the run's events never disagree. Only the page asked for is
described; placing every span (depth, offset) costs O(n) for the whole run.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from service.diagnosis.events import RunEvent
from service.traces.agents import agent_segments, child_run_id
from service.traces.index import TraceIndex
from service.traces.mapping import own_events
from service.traces.messages import span_messages
from service.traces.order import SpanKey, span_key
from service.traces.spans import NANOS_PER_MS, Span

# What the timeline shows of the events a span maps to (SPEC §3.4): the key it shows them under, and their fields.
EVENT_FIELDS = {
    "tool_call": ("tool_call", ("tool", "call_id")),
    "token_usage": ("usage", ("total_tokens", "input_tokens", "output_tokens", "model", "provider", "cost_usd")),
    "error_event": ("error", ("error", "message", "fatal")),
}


@dataclass(frozen=True)
class Timeline:
    """The spans of one run of a trace-born tree (all of the tree's for its root run, the agent's own for a
    child run), in run order."""

    spans: list[Span]
    index: TraceIndex
    root_run_id: str
    runs_by_identity: dict[str | None, str]
    depths: dict[SpanKey, int]
    started_unix_nano: int | None

    def describe(self, first: int, limit: int) -> list[dict[str, Any]]:
        """Spans `first` to `first + limit` of the timeline, each as the API shows it."""
        return [self._describe(span) for span in self.spans[first : first + limit]]

    def _describe(self, span: Span) -> dict[str, Any]:
        owner = self.index.owner(span)
        run_id = self.runs_by_identity.get(owner, self.root_run_id)
        messages = span_messages(span)
        start = self.started_unix_nano or span.start_unix_nano
        return {
            "span_id": span.span_id,
            "parent_span_id": span.parent_span_id,
            "trace_id": span.trace_id,
            "name": span.name,
            "role": self.index.role(span),
            "agent": owner,
            "run_id": run_id,
            "depth": self.depths[span_key(span)],
            "started_at": _time(span.start_unix_nano),
            "ended_at": _time(span.end_unix_nano),
            "offset_ms": (span.start_unix_nano - start) / NANOS_PER_MS,
            "duration_ms": max(0, span.end_unix_nano - span.start_unix_nano) / NANOS_PER_MS,
            **_mapped(own_events(span, self.index, run_id == self.root_run_id)),
            "messages": None if messages is None else messages.to_dict(),
        }


def timeline(root_run_id: str, spans: Iterable[Span], run_id: str) -> Timeline | None:
    """The timeline of `run_id`, the root run `root_run_id` of a trace-born tree or one of its child runs,
    from all of the tree's spans; None when no span belongs to `run_id`."""
    index = TraceIndex(spans)
    segments = agent_segments(index)
    runs = {
        segment.identity: root_run_id if position == 0 else child_run_id(root_run_id, segment.identity or "")
        for position, segment in enumerate(segments)
    }
    if run_id == root_run_id:
        own = index.ordered
    else:
        own = [span for span in index.ordered if runs.get(index.owner(span), root_run_id) == run_id]
        if not own:
            return None
    depths = _depths(index, own)
    started = min((span.start_unix_nano for span in own), default=None)
    return Timeline(own, index, root_run_id, runs, depths, started)


def _depths(index: TraceIndex, spans: list[Span]) -> dict[SpanKey, int]:
    """Each span's depth among the ancestors that arrived, the shallowest of `spans` at 0. Each span is
    walked past once (a chain of 100,000 spans costs 100,000 steps); a cycle of parent ids is cut where
    it closes."""
    depths: dict[SpanKey, int] = {}
    for span in spans:
        passed: list[SpanKey] = []
        seen: set[SpanKey] = set()
        current: Span | None = span
        while current is not None and (key := span_key(current)) not in depths and key not in seen:
            passed.append(key)
            seen.add(key)
            current = index.parent(current)
        depth = depths[span_key(current)] if current is not None and span_key(current) in depths else -1
        for key in reversed(passed):
            depth += 1
            depths[key] = depth
    shallowest = min((depths[span_key(span)] for span in spans), default=0)
    return {span_key(span): depths[span_key(span)] - shallowest for span in spans}


def _mapped(events: list[RunEvent]) -> dict[str, Any]:
    """What the mapping made of a span: its tool, its counted usage, its error (null where none)."""
    found: dict[str, dict[str, Any] | None] = {key: None for key, _ in EVENT_FIELDS.values()}
    for event in events:
        if event["event"] in EVENT_FIELDS:
            key, names = EVENT_FIELDS[event["event"]]
            found[key] = {name: event[name] for name in names if name in event}
    return found


def _time(unix_nano: int) -> str:
    moment = datetime.fromtimestamp(unix_nano // NANOS_PER_MS / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
