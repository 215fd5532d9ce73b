"""tool_failures: most of the run's tool calls failed (SPEC §4.2).

An agent whose tools fail answers from nothing: the steps after a failed call are not supported by what
the tool was meant to return. A `tool_output` counts as failed when its `status` is "error" or its
`success` is false (JSON false or the string "false"); the cause fires from MIN_FAILED failed outputs
that are at least half of the run's tool outputs, so one HTTP 404 the agent got past is no failure. No
dimension: the impact is taken off the trust score itself.
"""

from collections.abc import Mapping
from typing import Any

from service.diagnosis.detectors.base import CRITICAL, HIGH, Detector, Finding
from service.diagnosis.facts import RunFacts
from service.diagnosis.profiles import Profile
from service.diagnosis.values import is_false, lowered

ERROR_STATUS = "error"
OK_STATUS = "ok"
MIN_FAILED = 2
EVIDENCE_LIMIT = 12
BASE_IMPACT, IMPACT_PER_FAILURE, MAX_IMPACT = 10, 5, 25
DESCRIPTION = "At least half of the run's tool calls failed."


def detect(run: RunFacts, profile: Profile) -> list[Finding]:
    events = run.events
    outputs = run.of_type("tool_output")
    failed = [i for i in outputs if _failed(events[i])]
    n = len(failed)
    if n < MIN_FAILED or 2 * n < len(outputs):
        return []
    impact = min(MAX_IMPACT, BASE_IMPACT + IMPACT_PER_FAILURE * n)
    severity = CRITICAL if n == len(outputs) else HIGH
    return [Finding(failed[:EVIDENCE_LIMIT], severity, -impact, DESCRIPTION)]


def _failed(event: Mapping[str, Any]) -> bool:
    status, success = event.get("status"), event.get("success")
    if success is None and (status is None or status == OK_STATUS):  # the common cases, decided without a call
        return False
    return lowered(status) == ERROR_STATUS or is_false(success)


DETECTOR = Detector(
    failure_type="tool_failures",
    dimension=None,
    weight=0.0,
    causal_chain=("tool_called", "tool_failed", "task_unsupported"),
    remediation=(
        "Check the tools' arguments before calling, surface a tool's error to the agent so it can correct the "
        "call, and stop with a report when the tools it needs keep failing."
    ),
    detect=detect,
)
