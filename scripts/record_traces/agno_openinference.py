"""Agno traced with OpenInference (openinference-instrumentation-agno): triage delegates to billing through
a tool that runs the billing agent."""

from opentelemetry.sdk.trace import TracerProvider

from scripts.record_traces import app

TITLE = "Agno agents, delegation triage → billing, traced with OpenInference"
LIBRARIES = ("agno", "openinference-instrumentation-agno", "openai", "opentelemetry-sdk")
TURNS = app.script("ask_billing", {"task": "Refund order 42 (arrived broken)"}, triage_answers=True)


def instrument(provider: TracerProvider) -> None:
    from openinference.instrumentation.agno import AgnoInstrumentor

    AgnoInstrumentor().instrument(tracer_provider=provider)


def run(base_url: str) -> None:
    from agno.agent import Agent
    from agno.models.openai import OpenAIChat

    def model() -> OpenAIChat:
        return OpenAIChat(id="fake-gpt-4o", base_url=base_url, api_key="fake-key")

    def lookup_order(order_id: int) -> str:
        """Look an order up by its id."""
        return app.lookup_order(order_id)

    def check_policy(order_id: int) -> str:
        """Check the refund policy for an order."""
        return app.check_policy(order_id)

    def issue_refund(order_id: int, amount: int) -> str:
        """Refund an amount (EUR) of an order."""
        return app.issue_refund(order_id, amount)

    billing = Agent(
        name=app.BILLING, model=model(), instructions=app.BILLING_INSTRUCTIONS,
        tools=[lookup_order, check_policy, issue_refund],
    )  # fmt: skip

    def ask_billing(task: str) -> str:
        """Hand a billing task to the billing agent."""
        return str(billing.run(task).content)

    triage = Agent(name=app.TRIAGE, model=model(), instructions=app.TRIAGE_INSTRUCTIONS, tools=[ask_billing])
    triage.run(app.USER_REQUEST)
