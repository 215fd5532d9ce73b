"""The spans of one run, indexed once (SPEC §3.4, §3.5): each span's role, parent, owning agent, stage,
whether its usage counts and whether it is an outermost agent span, each answered in constant time on
average, so mapping a run of n spans costs O(n) whatever its shape (a chain of 100,000 nested agents, or
spans that start before their parents).

A walk up the ancestors stops at the first span already answered and records its answer for every span
it passed, so no span is walked twice. Ancestors are the spans that arrived: a span whose parent never
arrived (exports lose links across services) has no ancestor beyond it; a cycle of parent ids ends the
walk where it closes.
"""

from collections import Counter
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any, TypeVar

from service.memo import memoized
from service.otlp.attributes import Attributes, AttributeValue
from service.priority import stepping
from service.traces import semconv
from service.traces.order import SpanKey, in_run_order, roots_first, span_key
from service.traces.roles import AGENT, LLM, agent_identity, agent_name, first_text, role_of, usage_of, valid_identity
from service.traces.spans import Span
from service.vocab import STAGES

Answer = TypeVar("Answer")
_ASK_PARENT = object()  # a span's own answer when its nearest ancestor's decides


class TraceIndex:
    def __init__(self, spans: Iterable[Span]) -> None:
        self.ordered = in_run_order(spans)
        self._by_key = {span_key(span): span for span in self.ordered}
        self._roles = {span_key(span): role_of(span) for span in stepping(self.ordered)}
        self._owners: dict[SpanKey, str | None] = {}
        self._stages: dict[SpanKey, str | None] = {}
        self._trace_context: dict[tuple[object, str, bool], Any] = {}
        self._outermost: set[SpanKey] | None = None  # built on the first question: most traces never ask
        self.root_identity = self._root_identity()
        self.counted_usage = self._innermost([span for span in self.ordered if usage_of(span.attributes) is not None])
        self.silent_calls = self._silent_calls()

    def role(self, span: Span) -> str | None:
        return self._roles[span_key(span)]

    def parent(self, span: Span) -> Span | None:
        if span.parent_span_id is None:
            return None
        return self._by_key.get((span.trace_id, span.parent_span_id))

    def owner(self, span: Span) -> str | None:
        """The identity of the agent a span belongs to: the nearest agent span among itself and its
        ancestors, else the root agent (SPEC §3.5)."""
        return self._nearest(span, self._owners, self._own_agent, self.root_identity)

    def parent_owner(self, span: Span) -> str | None:
        """The agent that handed work over to an agent span: its parent's owner, else the root agent."""
        parent = self.parent(span)
        return self.root_identity if parent is None else self.owner(parent)

    def outermost_agent(self, span: Span) -> bool:
        """Whether an agent span has no ancestor that is an agent span of its identity (SPEC §3.4
        "Errors": an agent invoked twice, or nested in another agent, has one per invocation)."""
        if self._outermost is None:
            self._outermost = self._outermost_agents()
        return span_key(span) in self._outermost

    def stage(self, span: Span) -> str | None:
        """The `repute.stage` (SPEC §6) of the nearest span among itself and its ancestors carrying a known
        one, else None."""
        return self._nearest(span, self._stages, _own_stage, None)

    def context(self, name: str, ranked: list[Span], read: Callable[[AttributeValue], Answer | None]) -> Answer | None:
        """A harness attribute (`repute.*`) as `read` reads it: from the attributes of a run's own spans
        (`ranked`: roots first, `roots_first`), else of the trace's spans, else from the resources of its own,
        else of the trace's."""
        for found in (
            lambda: _first(read, name, (span.attributes for span in ranked)),
            lambda: self._trace_first(read, name, resources=False),
            lambda: _first(read, name, (span.resource_attributes for span in ranked)),
            lambda: self._trace_first(read, name, resources=True),
        ):
            value = found()
            if value is not None:
                return value
        return None

    @memoized
    def _ranked(self) -> list[Span]:
        return roots_first(self.ordered)

    def _trace_first(self, read: Callable[[AttributeValue], Answer | None], name: str, resources: bool) -> Any:
        key = (read, name, resources)
        if key not in self._trace_context:
            dicts = (span.resource_attributes if resources else span.attributes for span in self._ranked)
            self._trace_context[key] = _first(read, name, dicts)
        return self._trace_context[key]

    def _own_agent(self, span: Span) -> object:
        if self._roles[span_key(span)] != AGENT:
            return _ASK_PARENT
        return agent_identity(span) or self.root_identity

    def _nearest(
        self, span: Span, answers: dict[SpanKey, Answer], own: Callable[[Span], object], default: Answer
    ) -> Answer:
        """`own(span)` of the nearest span among `span` and its ancestors whose own answer is not
        _ASK_PARENT, else `default`; every span walked past is answered too."""
        passed: list[SpanKey] = []
        seen: set[SpanKey] = set()
        answer = default
        current: Span | None = span
        while current is not None:
            key = span_key(current)
            if key in answers:
                answer = answers[key]
                break
            if key in seen:  # a cycle of parent ids: closed here
                break
            found = own(current)
            passed.append(key)
            seen.add(key)
            if found is not _ASK_PARENT:
                answer = found  # type: ignore[assignment]
                break
            current = self.parent(current)
        for key in passed:
            answers[key] = answer
        return answer

    def _outermost_agents(self) -> set[SpanKey]:
        """The outermost agent spans, in one walk down the trees the spans form, counting the identities
        of the agent spans open above each span (a walk up from each span would be quadratic in a chain).
        Spans on a cycle of parent ids are reached from no root: each cycle is entered at its first span
        in run order, as if its link to its parent were lost."""
        children: dict[SpanKey, list[Span]] = {}
        roots = []
        for span in self.ordered:
            parent = self.parent(span)
            if parent is None:
                roots.append(span)
            else:
                children.setdefault(span_key(parent), []).append(span)
        outermost: set[SpanKey] = set()
        open_agents: Counter[str | None] = Counter()
        visited: set[SpanKey] = set()
        for start in chain(roots, self.ordered):
            stack: list[tuple[Span, str | None, bool]] = [(start, None, False)]
            while stack:
                span, identity, leaving = stack.pop()
                if leaving:
                    open_agents[identity] -= 1
                    continue
                key = span_key(span)
                if key in visited:
                    continue
                visited.add(key)
                if self._roles[key] == AGENT:
                    identity = self.owner(span)
                    if not open_agents[identity]:
                        outermost.add(key)
                    open_agents[identity] += 1
                    stack.append((span, identity, True))
                stack.extend((child, None, False) for child in reversed(children.get(key, ())))
        return outermost

    def _root_identity(self) -> str | None:
        """The root agent's identity (SPEC §3.5): the name of the root span, else of the earliest agent
        span, else the root's resource service.name (each made a valid identity). The root is the earliest
        span without a parent, else (its parent never arrived) the earliest span."""
        if not self.ordered:
            return None
        root = next((span for span in self.ordered if span.is_root), self.ordered[0])
        first_agent = next((span for span in self.ordered if self.role(span) == AGENT), None)
        named = (agent_name(span) for span in (root, first_agent) if span is not None)
        service = first_text((root.resource_attributes.get(semconv.SERVICE_NAME),))
        return next(filter(None, named), None) or valid_identity(service)

    def _silent_calls(self) -> set[SpanKey]:
        """The model calls that record no usage and have no model call below them (SPEC §3.4 "every model
        call is visible"); the walk is made only when some model call records none."""
        calls = [span for span in self.ordered if self._roles[span_key(span)] == LLM]
        if all(usage_of(span.attributes) is not None for span in calls):
            return set()
        return {key for key in self._innermost(calls) if usage_of(self._by_key[key].attributes) is None}

    def _innermost(self, carrying: list[Span]) -> set[SpanKey]:
        """The spans of `carrying` with no descendant in the trace among them: with the spans carrying
        usage, those whose usage counts (SPEC §3.4: each LLM request counts once, across the whole trace).
        Each ancestor is walked once."""
        above: set[SpanKey] = set()  # spans with a descendant among `carrying`
        for span in carrying:
            parent = self.parent(span)
            while parent is not None and (key := span_key(parent)) not in above:
                above.add(key)
                parent = self.parent(parent)
        return {span_key(span) for span in carrying} - above


def _first(read: Callable[[AttributeValue], Answer | None], name: str, dicts: Iterable[Attributes]) -> Answer | None:
    """The first value `read` gives of the attribute `name` in `dicts`; an absent attribute is not read (most
    spans carry none: this scans a whole trace)."""
    return next(
        (value for values in dicts if (raw := values.get(name)) is not None and (value := read(raw)) is not None),
        None,
    )


def _own_stage(span: Span) -> object:
    stage = span.attributes.get(semconv.STAGE)
    return str(stage) if stage in STAGES else _ASK_PARENT
