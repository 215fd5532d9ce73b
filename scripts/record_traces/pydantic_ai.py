"""Pydantic AI with its own OpenTelemetry instrumentation (`Agent.instrument_all()`): triage delegates to
billing through a tool that runs the billing agent (Pydantic AI's agent delegation)."""

from opentelemetry.sdk.trace import TracerProvider

from scripts.record_traces import app

TITLE = "Pydantic AI, agent delegation triage → billing, its own OpenTelemetry instrumentation"
LIBRARIES = ("pydantic-ai-slim", "openai", "opentelemetry-sdk")
TURNS = app.script("ask_billing", {"task": "Refund order 42 (arrived broken)"}, triage_answers=True)


def instrument(provider: TracerProvider, version: int = 5) -> None:
    from pydantic_ai import Agent, InstrumentationSettings

    settings = InstrumentationSettings(tracer_provider=provider, include_content=True, version=version)
    Agent.instrument_all(settings)


def run(base_url: str) -> None:
    from pydantic_ai import Agent, ModelRetry, RunContext
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel("fake-gpt-4o", provider=OpenAIProvider(base_url=base_url, api_key="fake-key"))
    billing = Agent(model, name=app.BILLING, instructions=app.BILLING_INSTRUCTIONS)
    triage = Agent(model, name=app.TRIAGE, instructions=app.TRIAGE_INSTRUCTIONS)

    @billing.tool_plain
    def lookup_order(order_id: int) -> str:
        """Look an order up by its id."""
        return app.lookup_order(order_id)

    @billing.tool_plain
    def check_policy(order_id: int) -> str:
        """Check the refund policy for an order."""
        return app.check_policy(order_id)

    @billing.tool_plain
    def issue_refund(order_id: int, amount: int) -> str:
        """Refund an amount (EUR) of an order."""
        try:
            return app.issue_refund(order_id, amount)
        except app.RefundDenied as error:
            raise ModelRetry(str(error)) from error

    @triage.tool
    async def ask_billing(ctx: RunContext[None], task: str) -> str:
        """Hand a billing task to the billing agent."""
        result = await billing.run(task, usage=ctx.usage)
        return result.output

    triage.run_sync(app.USER_REQUEST)
