"""OpenAI Agents SDK traced with OpenInference (openinference-instrumentation-openai-agents)."""

from opentelemetry.sdk.trace import TracerProvider

from scripts.record_traces import openai_agents_app

TITLE = "OpenAI Agents SDK, handoff triage → billing, traced with OpenInference"
LIBRARIES = ("openai-agents", "openinference-instrumentation-openai-agents", "openai", "opentelemetry-sdk")
TURNS = openai_agents_app.TURNS
run = openai_agents_app.run


def instrument(provider: TracerProvider) -> None:
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    openai_agents_app.quiet_sdk_tracing()
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
