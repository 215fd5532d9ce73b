"""The one application every recording runs: a support desk where a `triage` agent hands a refund over to
a `billing` agent (a handoff, or a delegation where the framework has no handoff), and billing makes
three tool calls: `lookup_order` (succeeds), `check_policy` (its policy service times out: the tool
catches that and records the exception on the current span, a handled exception) and `issue_refund`
(raises: a failing tool call). Each framework module wraps these plain functions in its own tool type.

The fake model (fake_model.py) follows `SCRIPT`: which tool each agent asks for at each of its turns,
with which arguments, so every recording holds the same calls with the same arguments.
"""

from typing import Any

from opentelemetry import trace

SERVICE_NAME = "support-desk"
TRIAGE, BILLING = "triage", "billing"
USER_REQUEST = "Please refund order 42, it arrived broken."
TRIAGE_INSTRUCTIONS = f"[agent:{TRIAGE}] You route customer requests. Refunds go to the billing agent."
BILLING_INSTRUCTIONS = f"[agent:{BILLING}] You handle refunds: look the order up, check the policy, refund."

LOOKUP_ARGS = {"order_id": 42}
POLICY_ARGS = {"order_id": 42}
REFUND_ARGS = {"order_id": 42, "amount": 30}


class RefundDenied(Exception):
    """What issue_refund raises: the failing tool call."""


def lookup_order(order_id: int) -> str:
    return f"order {order_id}: 1 kettle, 30 EUR, delivered"


def check_policy(order_id: int) -> str:
    try:
        raise TimeoutError(f"policy service did not answer for order {order_id}")
    except TimeoutError as error:
        trace.get_current_span().record_exception(error)
    return "cached policy: refunds up to 25 EUR without approval"


def issue_refund(order_id: int, amount: int) -> str:
    raise RefundDenied(f"refund of {amount} EUR for order {order_id} needs approval")


TOOLS = {"lookup_order": lookup_order, "check_policy": check_policy, "issue_refund": issue_refund}
TOOL_DESCRIPTIONS = {
    "lookup_order": "Look an order up by its id.",
    "check_policy": "Check the refund policy for an order.",
    "issue_refund": "Refund an amount (EUR) of an order.",
}

# A turn: ("tools", [(tool, arguments)]) or ("text", answer). The handoff or delegation tool's name and
# arguments are the framework's (HANDOFF below is replaced by each module's).
HANDOFF = "<handoff>"
BILLING_TURNS: list[tuple[str, Any]] = [
    ("tools", [("lookup_order", LOOKUP_ARGS)]),
    ("tools", [("check_policy", POLICY_ARGS)]),
    ("tools", [("issue_refund", REFUND_ARGS)]),
    ("text", "The refund of 30 EUR for order 42 needs a supervisor's approval; I have asked for it."),
]


def script(handoff_tool: str, handoff_args: dict[str, Any], triage_answers: bool) -> dict[str, list[Any]]:
    """The fake model's turns for each agent: triage hands over (and, when the framework returns to it
    after a delegation, answers last), billing makes its three calls and answers."""
    triage: list[tuple[str, Any]] = [("tools", [(handoff_tool, handoff_args)])]
    if triage_answers:
        triage.append(("text", "Billing is on it: the refund needs a supervisor's approval."))
    return {TRIAGE: triage, BILLING: list(BILLING_TURNS)}
