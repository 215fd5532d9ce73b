"""OpenAI Agents SDK traced with the OpenTelemetry GenAI instrumentations: opentelemetry-instrumentation-
openai-agents-v2 (agents, tools, handoffs) and the official opentelemetry-instrumentation-openai-v2 (the
OpenAI client's chat calls)."""

from opentelemetry.sdk.trace import TracerProvider

from scripts.record_traces import openai_agents_app

TITLE = "OpenAI Agents SDK, handoff triage → billing, traced with the OpenTelemetry GenAI instrumentations"
LIBRARIES = (
    "openai-agents",
    "opentelemetry-instrumentation-openai-agents-v2",
    "opentelemetry-instrumentation-openai-v2",
    "openai",
    "opentelemetry-sdk",
)
TURNS = openai_agents_app.TURNS
run = openai_agents_app.run


def instrument(provider: TracerProvider) -> None:
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    openai_agents_app.quiet_sdk_tracing()
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
