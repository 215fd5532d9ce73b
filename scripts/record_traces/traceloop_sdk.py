"""traceloop-sdk (OpenLLMetry's SDK) on a hand-written two-agent loop with the OpenAI client: its
`@agent` and `@tool` decorators and its OpenAI instrumentation. Triage delegates to billing through a
`billing` tool; billing calls its three tools."""

import json
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from scripts.record_traces import app

TITLE = "traceloop-sdk decorators on a hand-written loop over the OpenAI client, delegation triage → billing"
LIBRARIES = ("traceloop-sdk", "opentelemetry-instrumentation-openai", "openai", "opentelemetry-sdk")
TURNS = app.script(app.BILLING, {"task": "Refund order 42 (arrived broken)"}, triage_answers=True)
_exporter = InMemorySpanExporter()


def own_provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    """traceloop-sdk makes its own provider: it exports to ours, span by span."""
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from traceloop.sdk import Traceloop
    from traceloop.sdk.instruments import Instruments

    Traceloop.init(
        app_name=app.SERVICE_NAME,
        exporter=_exporter,
        disable_batch=True,
        telemetry_enabled=False,
        instruments={Instruments.OPENAI},
        resource_attributes=dict(Resource.create({"service.name": app.SERVICE_NAME}).attributes),
    )
    return trace.get_tracer_provider(), _exporter  # type: ignore[return-value]


def instrument(provider: TracerProvider) -> None:
    """Traceloop.init did it."""


def _schema(name: str) -> dict[str, Any]:
    properties = {"order_id": {"type": "integer"}}
    if name == "issue_refund":
        properties["amount"] = {"type": "integer"}
    if name == app.BILLING:
        properties = {"task": {"type": "string"}}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": app.TOOL_DESCRIPTIONS.get(name, "Hand a billing task to the billing agent."),
            "parameters": {"type": "object", "properties": properties, "required": list(properties)},
        },
    }


def run(base_url: str) -> None:
    from openai import OpenAI
    from traceloop.sdk.decorators import agent, tool, workflow

    client = OpenAI(base_url=base_url, api_key="fake-key")

    @tool(name="lookup_order")
    def lookup_order(order_id: int) -> str:
        return app.lookup_order(order_id)

    @tool(name="check_policy")
    def check_policy(order_id: int) -> str:
        return app.check_policy(order_id)

    @tool(name="issue_refund")
    def issue_refund(order_id: int, amount: int) -> str:
        return app.issue_refund(order_id, amount)

    def loop(instructions: str, request: str, tools: dict[str, Any]) -> str:
        messages: list[Any] = [{"role": "system", "content": instructions}, {"role": "user", "content": request}]
        while True:
            reply = (
                client.chat.completions.create(
                    model="fake-gpt-4o", messages=messages, tools=[_schema(name) for name in tools]
                )
                .choices[0]
                .message
            )
            if not reply.tool_calls:
                return reply.content or ""
            messages.append(reply.model_dump(exclude_none=True))
            for call in reply.tool_calls:
                try:
                    result = tools[call.function.name](**json.loads(call.function.arguments))
                except app.RefundDenied as error:
                    result = f"error: {error}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

    @agent(name=app.BILLING)
    def billing(task: str) -> str:
        return loop(app.BILLING_INSTRUCTIONS, task, TOOLS)

    @agent(name=app.TRIAGE)
    def triage(request: str) -> str:
        return loop(app.TRIAGE_INSTRUCTIONS, request, {app.BILLING: billing})

    TOOLS = {"lookup_order": lookup_order, "check_policy": check_policy, "issue_refund": issue_refund}

    @workflow(name="support-desk refund")
    def refund() -> str:
        return triage(app.USER_REQUEST)

    refund()
