"""Spans grouped into runs (SPEC §3.4): the spans of one `gen_ai.conversation.id`, else of one trace.

Instrumentations often put the conversation id on the agent and model spans only, so every span belongs
to its trace's conversation (its root's, else its earliest span's naming one); a trace that names none
is a run of its own, keyed by its trace id.

Spans of one trace may arrive in several requests (children usually end, and are exported, before
their root): a trace's conversation is only known once a span naming it has arrived, so a store that
keys spans as they come should key them by trace and resolve the run when it reads them back.
"""

from collections.abc import Iterable, Mapping

# A value as text: a non-empty string, or an integer (the logs' reading of session.id).
from service.otlp.attributes import attribute_text
from service.traces.order import in_run_order, kept_copies, roots_first, span_key
from service.traces.semconv import CONVERSATION_ID
from service.traces.spans import Span


def conversation_id(span: Span) -> str | None:
    """The span's own `gen_ai.conversation.id`, as text."""
    return attribute_text(span.attributes.get(CONVERSATION_ID))


def trace_conversations(spans: Iterable[Span]) -> dict[str, str]:
    """Each trace's conversation id: its root's, else that of its first span (in span order) naming one."""
    conversations: dict[str, str] = {}
    for span in roots_first(in_run_order(spans)):
        conversation = conversation_id(span)
        if conversation is not None:
            conversations.setdefault(span.trace_id, conversation)
    return conversations


def run_key(span: Span, conversations: Mapping[str, str]) -> str:
    """The run_id of a span: its trace's conversation id (from `trace_conversations`), else its trace id.
    A span naming another conversation than its trace's (Pydantic AI gives each agent its own) stays in
    its trace's run, as the receiver stores it: one trace is one run, the agents in it its child runs."""
    return conversations.get(span.trace_id) or span.trace_id


def group_runs(spans: Iterable[Span]) -> dict[str, list[Span]]:
    """The spans of each run, by run_id, in input order. Every copy of a span goes where its kept copy
    (`kept_copies`) goes, so copies that differ never split a span across runs."""
    spans = list(spans)
    kept = kept_copies(spans)
    conversations = trace_conversations(kept.values())
    runs: dict[str, list[Span]] = {}
    for span in spans:
        runs.setdefault(run_key(kept[span_key(span)], conversations), []).append(span)
    return runs


def root_arrived(spans: Iterable[Span]) -> bool:
    """Whether a run's root span (one without a parent) is among its spans: once it is, the run settles
    after REPUTE_TRACE_SETTLE_SECONDS without new spans."""
    return any(span.is_root for span in spans)
