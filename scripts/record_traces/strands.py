"""Strands Agents with its built-in OpenTelemetry tracing (GenAI conventions, its defaults): triage
delegates to billing through a tool that runs the billing agent (Strands' agents as tools)."""

from opentelemetry.sdk.trace import TracerProvider

from scripts.record_traces import app

TITLE = "Strands Agents, agents as tools triage → billing, its built-in OpenTelemetry tracing"
LIBRARIES = ("strands-agents", "openai", "opentelemetry-sdk")
TURNS = app.script("ask_billing", {"task": "Refund order 42 (arrived broken)"}, triage_answers=True)


def instrument(provider: TracerProvider) -> None:
    """Strands traces through the global tracer provider (set by the recording)."""


def run(base_url: str) -> None:
    from strands import Agent, tool
    from strands.models.openai import OpenAIModel

    def model() -> OpenAIModel:
        return OpenAIModel(client_args={"base_url": base_url, "api_key": "fake-key"}, model_id="fake-gpt-4o")

    @tool
    def lookup_order(order_id: int) -> str:
        """Look an order up by its id."""
        return app.lookup_order(order_id)

    @tool
    def check_policy(order_id: int) -> str:
        """Check the refund policy for an order."""
        return app.check_policy(order_id)

    @tool
    def issue_refund(order_id: int, amount: int) -> str:
        """Refund an amount (EUR) of an order."""
        return app.issue_refund(order_id, amount)

    billing = Agent(
        name=app.BILLING, system_prompt=app.BILLING_INSTRUCTIONS, model=model(),
        tools=[lookup_order, check_policy, issue_refund], callback_handler=None,
    )  # fmt: skip

    @tool
    def ask_billing(task: str) -> str:
        """Hand a billing task to the billing agent."""
        return str(billing(task))

    triage = Agent(
        name=app.TRIAGE, system_prompt=app.TRIAGE_INSTRUCTIONS, model=model(), tools=[ask_billing],
        callback_handler=None,
    )  # fmt: skip
    triage(app.USER_REQUEST)
