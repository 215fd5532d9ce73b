"""ignoring_tool_outputs: the agent asks a tool, then acts without using the answer.

Steps that ignore the evidence the agent itself gathered are unsupported: the decision does not follow
from the observations. A `tool_output` counts when `used` or `referenced` is false (JSON false or the
string "false"), or its `status` is "ignored".
"""

from collections.abc import Mapping
from typing import Any

from service.diagnosis.detectors.base import HIGH, MEDIUM, Detector, Finding, at_least_one
from service.diagnosis.facts import RunFacts
from service.diagnosis.profiles import Profile
from service.diagnosis.values import is_false, lowered

IGNORED_STATUS = "ignored"
HIGH_COUNT = 2
BASE_IMPACT, IMPACT_PER_EVENT, MAX_IMPACT = 10, 7, 30
DESCRIPTION = "Tool outputs were marked unused, unreferenced, or ignored by the agent."


def detect(run: RunFacts, profile: Profile) -> list[Finding]:
    events = run.events
    matches = [i for i in run.of_type("tool_output") if _ignored(events[i])]
    n = len(matches)
    impact = min(MAX_IMPACT, BASE_IMPACT + IMPACT_PER_EVENT * n)
    return at_least_one(matches, HIGH if n >= HIGH_COUNT else MEDIUM, -impact, DESCRIPTION)


def _ignored(event: Mapping[str, Any]) -> bool:
    used, referenced, status = event.get("used"), event.get("referenced"), event.get("status")
    if used is True and referenced is None and status is None:  # the common case, decided without a call
        return False
    return is_false(used) or is_false(referenced) or lowered(status) == IGNORED_STATUS


DETECTOR = Detector(
    failure_type="ignoring_tool_outputs",
    dimension="tool_output_utilization",
    weight=0.20,
    causal_chain=("tool_call", "tool_output", "decision_skipped_output", "unsupported_agent_step"),
    remediation=(
        "Feed tool results back into the next decision, require each step to cite the output it relies on, "
        "and drop tool calls whose results are never used."
    ),
    detect=detect,
)
