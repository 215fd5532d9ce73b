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
from service.traces.index import TraceIndex
from service.traces.mapping import TraceRun, segment_run
from service.traces.roles import AGENT
from service.traces.spans import Span

CHILD_DIGITS = 32


@dataclass
class Segment:
    """One agent's part of a run: its spans, and the agent spans it handed work over to."""

    identity: str | None
    spans: list[Span] = field(default_factory=list)
    handoffs: list[Span] = field(default_factory=list)


def agent_segments(index: TraceIndex) -> list[Segment]:
    """The run's segments, the root agent's first, the others by their first span (in run order)."""
    root = index.root_identity
    segments: dict[str | None, Segment] = {root: Segment(root)}
    for span in index.ordered:
        identity = index.owner(span)
        segments.setdefault(identity, Segment(identity)).spans.append(span)
        if index.role(span) == AGENT:
            handed_by = index.parent_owner(span)
            if handed_by != identity:
                segments.setdefault(handed_by, Segment(handed_by)).handoffs.append(span)
    return list(segments.values())


def map_runs(run_id: str, spans: Iterable[Span]) -> list[TraceRun]:
    """The runs of a trace-born run's spans (in any order, copies allowed): the root agent's run under
    `run_id`, then a child run for every other agent (SPEC §3.5)."""
    index = TraceIndex(spans)
    parent, *children = agent_segments(index)
    runs = [segment_run(run_id, parent.spans, index, parent.handoffs, parent.identity)]
    for child in children:
        child_id = child_run_id(run_id, child.identity or "")
        runs.append(segment_run(child_id, child.spans, index, child.handoffs, child.identity, run_id))
    return runs


def child_run_id(run_id: str, identity: str) -> str:
    """`<run_id>:<identity>`, or `<run_id>:` and 32 hex digits of sha256(identity) when that would not be a
    valid run id (longer than 256 characters, or holding a `/`, which run ids do not)."""
    plain = f"{run_id}:{identity}"
    if is_run_id(plain):
        return plain
    return f"{run_id}:{hashlib.sha256(identity.encode()).hexdigest()[:CHILD_DIGITS]}"
