"""Pydantic AI with its instrumentation's data format version 2, the spans Pydantic AI 1.x wrote: `agent
run` spans with `agent_name`, `running tool` spans with `gen_ai.tool.name` and `tool_arguments`, no
operation name on either."""

from opentelemetry.sdk.trace import TracerProvider

from scripts.record_traces import pydantic_ai

TITLE = "Pydantic AI, agent delegation triage → billing, instrumentation format 2 (Pydantic AI 1.x's spans)"
LIBRARIES = pydantic_ai.LIBRARIES
TURNS = pydantic_ai.TURNS
run = pydantic_ai.run


def instrument(provider: TracerProvider) -> None:
    pydantic_ai.instrument(provider, version=2)
