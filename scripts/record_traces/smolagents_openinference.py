"""smolagents traced with OpenInference: a ToolCallingAgent `triage` managing a ToolCallingAgent `billing`
(smolagents' managed agents: triage calls billing as a tool named after it)."""

from opentelemetry.sdk.trace import TracerProvider

from scripts.record_traces import app

TITLE = "smolagents managed agent triage → billing, traced with OpenInference"
LIBRARIES = ("smolagents", "openinference-instrumentation-smolagents", "openai", "opentelemetry-sdk")
TURNS = app.script(app.BILLING, {"task": "Refund order 42 (arrived broken)"}, triage_answers=True)
# smolagents' ToolCallingAgent ends with its `final_answer` tool, not with text.
TURNS = {
    agent: [("tools", [("final_answer", {"answer": content})]) if kind == "text" else (kind, content)
            for kind, content in turns]
    for agent, turns in TURNS.items()
}  # fmt: skip


def instrument(provider: TracerProvider) -> None:
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    SmolagentsInstrumentor().instrument(tracer_provider=provider)


def run(base_url: str) -> None:
    from smolagents import OpenAIServerModel, ToolCallingAgent, tool

    model = OpenAIServerModel(model_id="fake-gpt-4o", api_base=base_url, api_key="fake-key")

    @tool
    def lookup_order(order_id: int) -> str:
        """Look an order up by its id.

        Args:
            order_id: the order's id
        """
        return app.lookup_order(order_id)

    @tool
    def check_policy(order_id: int) -> str:
        """Check the refund policy for an order.

        Args:
            order_id: the order's id
        """
        return app.check_policy(order_id)

    @tool
    def issue_refund(order_id: int, amount: int) -> str:
        """Refund an amount (EUR) of an order.

        Args:
            order_id: the order's id
            amount: the amount in EUR
        """
        return app.issue_refund(order_id, amount)

    billing = ToolCallingAgent(
        tools=[lookup_order, check_policy, issue_refund],
        model=model,
        name=app.BILLING,
        description="Handles refunds.",
        instructions=app.BILLING_INSTRUCTIONS,
        max_steps=6,
    )
    triage = ToolCallingAgent(
        tools=[], model=model, managed_agents=[billing], name=app.TRIAGE, instructions=app.TRIAGE_INSTRUCTIONS,
        max_steps=4,
    )  # fmt: skip
    triage.run(app.USER_REQUEST)
