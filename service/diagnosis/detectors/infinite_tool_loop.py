"""infinite_tool_loop: the agent calls the same tool with the same arguments again and again.

Repeating an identical call rarely yields a different result; together with retries it is the signature of
an agent stuck without progress, burning time and budget. One cause per group of identical calls (same
loop key: tool and canonical args, see facts.gather), in order of the group's first call.
"""

from service.diagnosis.detectors.base import CRITICAL, HIGH, Detector, Finding
from service.diagnosis.facts import RunFacts
from service.diagnosis.profiles import Profile

MIN_REPEATS = 3
CRITICAL_REPEATS = 5
CRITICAL_RETRIES = 3
RETRIES_AS_EVIDENCE = 3
BASE_IMPACT, IMPACT_PER_CALL, IMPACT_PER_RETRY, MAX_IMPACT = 8, 4, 3, 30
DESCRIPTION = "Tool call repeated {count} times with matching arguments."


def detect(run: RunFacts, profile: Profile) -> list[Finding]:
    retries = run.of_type("retry_event")
    return [_finding(calls, retries) for calls in run.call_groups.values() if len(calls) >= MIN_REPEATS]


def _finding(calls: list[int], retries: list[int]) -> Finding:
    critical = len(calls) >= CRITICAL_REPEATS or len(retries) >= CRITICAL_RETRIES
    impact = min(MAX_IMPACT, BASE_IMPACT + IMPACT_PER_CALL * len(calls) + IMPACT_PER_RETRY * len(retries))
    return Finding(
        evidence=calls + retries[:RETRIES_AS_EVIDENCE],
        severity=CRITICAL if critical else HIGH,
        impact_score=-impact,
        description=DESCRIPTION.format(count=len(calls)),
    )


DETECTOR = Detector(
    failure_type="infinite_tool_loop",
    dimension="loop_control",
    weight=0.20,
    causal_chain=("tool_call", "tool_failure_or_no_progress", "retry_same_action", "loop_flagged"),
    remediation=(
        "Cap identical tool calls and retries, back off on repeated failures, and make the agent change its "
        "arguments or strategy (or stop and report) when a call returns the same result."
    ),
    detect=detect,
)
