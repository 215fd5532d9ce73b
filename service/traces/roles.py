"""What one span is, read from its own attributes (SPEC §3.4 span roles and token usage, §3.5 agent
names): no other span is looked at here (service.traces.index answers the questions about ancestors)."""

from collections.abc import Iterable
from dataclasses import dataclass

from service.diagnosis.values import MAX_TOKENS_PER_EVENT
from service.ids import as_identity
from service.otlp.attributes import Attributes, AttributeValue, attribute_text
from service.otlp.values import as_int
from service.traces import semconv
from service.traces.spans import Span

TOOL, AGENT, LLM, HANDOFF = "tool", "agent", "llm", "handoff"


def first_text(values: Iterable[AttributeValue]) -> str | None:
    """The first value that reads as text (attribute_text), else None."""
    return next(filter(None, map(attribute_text, values)), None)


def role_of(span: Span) -> str | None:
    """handoff, tool, agent or llm (SPEC §3.4 "Span roles"), the first that applies; None for any other
    span, and for an agent span that names no agent (it is no boundary: its spans belong to the nearest
    named agent above it, SPEC §3.5)."""
    attributes = span.attributes
    operation = attributes.get(semconv.OPERATION_NAME)
    operation = operation if type(operation) is str else None
    openinference = attributes.get(semconv.OPENINFERENCE_KIND)
    traceloop = attributes.get(semconv.TRACELOOP_KIND)
    if traceloop == semconv.TRACELOOP_HANDOFF or (
        openinference == semconv.TOOL_ROLE[1] and span.name.startswith(semconv.HANDOFF_PREFIX)
    ):
        return HANDOFF
    unnamed_operation = operation is None and semconv.OPERATION_NAME not in attributes
    for role, (operations, openinference_kind, traceloop_kind), alone in (
        (TOOL, semconv.TOOL_ROLE, semconv.TOOL_NAME),
        (AGENT, semconv.AGENT_ROLE, semconv.AGENT_RUN_NAME),
        (LLM, semconv.LLM_ROLE, None),
    ):
        if (
            operation in operations
            or openinference == openinference_kind
            or (traceloop_kind is not None and traceloop == traceloop_kind)
            or (alone is not None and unnamed_operation and alone in attributes)
        ):
            return role if role != AGENT or agent_name(span) else None
    if semconv.LLM_REQUEST_TYPE in attributes or usage_of(attributes) is not None:
        return LLM
    return None


def agent_identity(span: Span) -> str | None:
    """An agent span's identity (SPEC §3.5): its name, else its resource's service.name, made valid."""
    return agent_name(span) or valid_identity(first_text((span.resource_attributes.get(semconv.SERVICE_NAME),)))


def agent_name(span: Span) -> str | None:
    """The name a span gives its agent itself, made a valid identity: the first of semconv.AGENT_NAMES,
    else `<name>` of an OpenInference AGENT span named `<name>.run` (smolagents)."""
    name = first_text(span.attributes.get(key) for key in semconv.AGENT_NAMES)
    openinference_agent = span.attributes.get(semconv.OPENINFERENCE_KIND) == semconv.AGENT_ROLE[1]
    if name is None and openinference_agent and span.name.endswith(semconv.SMOLAGENTS_RUN_SUFFIX):
        name = span.name.removesuffix(semconv.SMOLAGENTS_RUN_SUFFIX) or None
    return valid_identity(name)


def valid_identity(text: str | None) -> str | None:
    """`text` as an identity (SPEC §3.5, §9): each run of other characters `-`, at most 256 characters."""
    return None if text is None else as_identity(text) or None


def default_service(span: Span) -> str | None:
    """The span's service.name when it is the SDK's default (`unknown_service`, `unknown_service:<process>`)
    or absent (as "unknown_service"), else None."""
    name = first_text((span.resource_attributes.get(semconv.SERVICE_NAME),))
    if name is None:
        return semconv.DEFAULT_SERVICE
    return name if name == semconv.DEFAULT_SERVICE or name.startswith(semconv.DEFAULT_SERVICE + ":") else None


@dataclass(frozen=True)
class Usage:
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int


def usage_of(attributes: Attributes) -> Usage | None:
    """The span's token usage from the first family present (semconv.USAGE_FAMILIES): input + output,
    else the family's total; None when the span carries none. Unreadable counts are 0."""
    for input_name, output_name, total_name in semconv.USAGE_FAMILIES:
        if input_name in attributes or output_name in attributes:
            input_tokens, output_tokens = _tokens(attributes.get(input_name)), _tokens(attributes.get(output_name))
            return Usage(input_tokens, output_tokens, input_tokens + output_tokens)
        if total_name is not None and total_name in attributes:
            return Usage(None, None, _tokens(attributes[total_name]))
    return None


def _tokens(value: AttributeValue) -> int:
    count = as_int(value)
    return count if 0 <= count <= MAX_TOKENS_PER_EVENT else 0
