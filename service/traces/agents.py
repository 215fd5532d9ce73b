"""The agents of a run's spans (SPEC §3.5): reputation goes to the agent that earned it.

A span belongs to the nearest agent span among itself and its ancestors that arrived (exports often lose
a parent across services: the walk goes on through the ancestors that did arrive); spans with none belong
to the root agent. Each agent span's identity is gen_ai.agent.id, else gen_ai.agent.name, else its
resource's service.name (an agent span that names none is the root agent's). One identity: one run. Several:
the run keeps the root agent's spans, and every other identity gets one child run of its own, holding all
of its invocations. The agent span of a child appears in both: in the run that handed work over, as the
handoff (`state_transition {agent: <child identity>}`, at the span's start), and as the child's own.
"""

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from service.ids import is_run_id
from service.traces.mapping import AGENT, TraceRun, agent_identity, role_of, root_agent_identity, segment_run
from service.traces.order import SpanKey, in_run_order, span_key
from service.traces.spans import Span

CHILD_DIGITS = 32


@dataclass
class Segment:
    """One agent's part of a run: its spans, and the agent spans it handed work over to."""

    identity: str | None
    spans: list[Span] = field(default_factory=list)
    handoffs: list[Span] = field(default_factory=list)


def agent_segments(ordered: list[Span]) -> list[Segment]:
    """The run's segments, the root agent's first, the others by their first span (spans in run order)."""
    root = root_agent_identity(ordered)
    owners = _Owners(ordered, root)
    segments: dict[str | None, Segment] = {root: Segment(root)}
    for span in ordered:
        identity = owners.identity_of(span)
        segments.setdefault(identity, Segment(identity)).spans.append(span)
        if role_of(span) == AGENT:
            handed_by = owners.parent_identity_of(span)
            if handed_by != identity:
                segments.setdefault(handed_by, Segment(handed_by)).handoffs.append(span)
    return list(segments.values())


def map_runs(run_id: str, spans: Iterable[Span]) -> list[TraceRun]:
    """The runs of a trace-born run's spans (in any order, copies allowed): the root agent's run under
    `run_id`, then a child run for every other agent (SPEC §3.5)."""
    ordered = in_run_order(spans)
    segments = agent_segments(ordered)
    parent, *children = segments
    return [segment_run(run_id, parent.spans, ordered, parent.handoffs, parent.identity)] + [
        segment_run(
            child_run_id(run_id, child.identity or ""), child.spans, ordered, child.handoffs, child.identity, run_id
        )
        for child in children
    ]


def child_run_id(run_id: str, identity: str) -> str:
    """`<run_id>:<identity>`, or `<run_id>:` and 32 hex digits of sha256(identity) when that would not be a
    valid run id (longer than 256 characters, or holding a `/`, which run ids do not)."""
    plain = f"{run_id}:{identity}"
    if is_run_id(plain):
        return plain
    return f"{run_id}:{hashlib.sha256(identity.encode()).hexdigest()[:CHILD_DIGITS]}"


class _Owners:
    """Each span's agent identity, memoized: the nearest agent span up the ancestors that arrived."""

    def __init__(self, ordered: Iterable[Span], root: str | None) -> None:
        self._by_key = {span_key(span): span for span in ordered}
        self._root = root
        self._identity: dict[SpanKey, str | None] = {}

    def identity_of(self, span: Span) -> str | None:
        key = span_key(span)
        if key not in self._identity:
            self._identity[key] = self._walk(span)
        return self._identity[key]

    def parent_identity_of(self, span: Span) -> str | None:
        parent = self._parent(span)
        return self._root if parent is None else self.identity_of(parent)

    def _walk(self, span: Span) -> str | None:
        visited: set[SpanKey] = set()
        current: Span | None = span
        while current is not None and (key := span_key(current)) not in visited:
            if key in self._identity:
                return self._identity[key]
            if role_of(current) == AGENT:
                return agent_identity(current) or self._root
            visited.add(key)
            current = self._parent(current)
        return self._root

    def _parent(self, span: Span) -> Span | None:
        if span.parent_span_id is None:
            return None
        return self._by_key.get((span.trace_id, span.parent_span_id))
