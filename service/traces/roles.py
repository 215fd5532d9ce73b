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

TOOL, AGENT, LLM = "tool", "agent", "llm"


def first_text(values: Iterable[AttributeValue]) -> str | None:
    """The first value that reads as text (attribute_text), else None."""
    return next(filter(None, map(attribute_text, values)), None)


def role_of(span: Span) -> str | None:
    """tool, agent or llm (SPEC §3.4 "Span roles"), the first that applies; None for any other span."""
    attributes = span.attributes
    operation = attributes.get(semconv.OPERATION_NAME)
    operation = operation if type(operation) is str else None
    openinference = attributes.get(semconv.OPENINFERENCE_KIND)
    traceloop = attributes.get(semconv.TRACELOOP_KIND)
    for role, (operations, openinference_kind, traceloop_kind) in (
        (TOOL, semconv.TOOL_ROLE),
        (AGENT, semconv.AGENT_ROLE),
        (LLM, semconv.LLM_ROLE),
    ):
        if operation in operations or openinference == openinference_kind:
            return role
        if traceloop_kind is not None and traceloop == traceloop_kind:
            return role
    if semconv.LLM_REQUEST_TYPE in attributes or usage_of(attributes) is not None:
        return LLM
    return None


def identity_of(values: Iterable[AttributeValue]) -> str | None:
    """The first value that reads as text, made a valid identity (SPEC §3.5: distinct names stay distinct
    identities), else None."""
    name = first_text(values)
    return None if name is None else as_identity(name)


def agent_identity(span: Span) -> str | None:
    """An agent span's identity (SPEC §3.5): gen_ai.agent.id, else gen_ai.agent.name, else its
    resource's service.name, made a valid identity."""
    return identity_of(
        (
            span.attributes.get(semconv.AGENT_ID),
            span.attributes.get(semconv.AGENT_NAME),
            span.resource_attributes.get(semconv.SERVICE_NAME),
        )
    )


def agent_name(span: Span) -> str | None:
    """The name a span gives its agent itself, as an identity: gen_ai.agent.id, else gen_ai.agent.name."""
    return identity_of((span.attributes.get(semconv.AGENT_ID), span.attributes.get(semconv.AGENT_NAME)))


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
