"""The application on the OpenAI Agents SDK: triage hands off to billing (a real handoff:
`transfer_to_billing`), billing calls its three tools. Shared by the three recordings that trace it with
OpenInference, OpenLLMetry and the OpenTelemetry GenAI instrumentation."""

import asyncio
from typing import Any

from scripts.record_traces import app

TURNS = app.script("transfer_to_billing", {}, triage_answers=False)


def quiet_sdk_tracing() -> None:
    """The SDK's own trace exporter (to the vendor's platform) off; instrumentations add their processors."""
    import agents

    agents.set_trace_processors([])


def run(base_url: str) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="fake-key")
    model = OpenAIChatCompletionsModel(model="fake-gpt-4o", openai_client=client)

    @function_tool
    def lookup_order(order_id: int) -> str:
        """Look an order up by its id."""
        return app.lookup_order(order_id)

    @function_tool
    def check_policy(order_id: int) -> str:
        """Check the refund policy for an order."""
        return app.check_policy(order_id)

    @function_tool
    def issue_refund(order_id: int, amount: int) -> str:
        """Refund an amount (EUR) of an order."""
        return app.issue_refund(order_id, amount)

    billing = Agent(
        name=app.BILLING,
        instructions=app.BILLING_INSTRUCTIONS,
        model=model,
        tools=[lookup_order, check_policy, issue_refund],
    )
    triage = Agent(name=app.TRIAGE, instructions=app.TRIAGE_INSTRUCTIONS, model=model, handoffs=[billing])
    config: Any = RunConfig(workflow_name="support-desk refund")
    asyncio.run(Runner.run(triage, app.USER_REQUEST, run_config=config))
