"""LangGraph traced with OpenInference (openinference-instrumentation-langchain): two prebuilt ReAct agent
graphs, triage delegating to billing through a tool that invokes the billing graph."""

from opentelemetry.sdk.trace import TracerProvider

from scripts.record_traces import app

TITLE = "LangGraph ReAct agents, delegation triage → billing, traced with OpenInference"
LIBRARIES = (
    "langgraph",
    "langchain-core",
    "langchain-openai",
    "openinference-instrumentation-langchain",
    "openai",
    "opentelemetry-sdk",
)
TURNS = app.script("ask_billing", {"task": "Refund order 42 (arrived broken)"}, triage_answers=True)


def instrument(provider: TracerProvider) -> None:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=provider)


def run(base_url: str) -> None:
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import ToolNode, create_react_agent

    model = ChatOpenAI(model="fake-gpt-4o", base_url=base_url, api_key="fake-key")

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

    # The tool node turns a tool's exception into an error message for the model (the tool span fails).
    tools = ToolNode([lookup_order, check_policy, issue_refund], handle_tool_errors=True)
    billing = create_react_agent(model, tools, prompt=app.BILLING_INSTRUCTIONS, name=app.BILLING)

    @tool
    def ask_billing(task: str) -> str:
        """Hand a billing task to the billing agent."""
        return billing.invoke({"messages": [("user", task)]})["messages"][-1].content

    triage = create_react_agent(model, [ask_billing], prompt=app.TRIAGE_INSTRUCTIONS, name=app.TRIAGE)
    triage.invoke({"messages": [("user", app.USER_REQUEST)]})
