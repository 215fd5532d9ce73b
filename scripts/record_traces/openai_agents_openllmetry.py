"""OpenAI Agents SDK traced with OpenLLMetry (opentelemetry-instrumentation-openai-agents, Traceloop's)."""

from opentelemetry.sdk.trace import TracerProvider

from scripts.record_traces import openai_agents_app

TITLE = "OpenAI Agents SDK, handoff triage → billing, traced with OpenLLMetry"
LIBRARIES = ("openai-agents", "opentelemetry-instrumentation-openai-agents", "openai", "opentelemetry-sdk")
TURNS = openai_agents_app.TURNS
run = openai_agents_app.run


def instrument(provider: TracerProvider) -> None:
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    openai_agents_app.quiet_sdk_tracing()
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
