"""cost_explosion: the run spends many tokens, or repeats the same tool calls.

Token totals and redundant calls are the cost side of agent quality: the same result at several times
the price. Fires on the run's token total or its duplicate calls (calls minus distinct call labels). What
counts as many depends on the agent: the thresholds are the diagnosis profile's (SPEC §4.1; `critiqor`'s
are Critiqor's own: 12,000 tokens high, 30,000 critical, an impact point per 6,000 tokens, 3 duplicates).
"""

from service.diagnosis.detectors.base import CRITICAL, HIGH, Detector, Finding
from service.diagnosis.events import TOKEN_USAGE
from service.diagnosis.facts import RunFacts
from service.diagnosis.profiles import Profile

EVIDENCE_LIMIT = 12
BASE_IMPACT, IMPACT_PER_DUPLICATE, MAX_IMPACT = 10, 4, 30
DESCRIPTION = "Token usage was high or tool calls were repeated redundantly."


def detect(run: RunFacts, profile: Profile) -> list[Finding]:
    tokens, duplicates = run.token_total, run.duplicate_calls
    if tokens < profile.tokens_high and duplicates < profile.duplicates:
        return []
    impact = min(MAX_IMPACT, BASE_IMPACT + IMPACT_PER_DUPLICATE * duplicates + tokens // profile.tokens_per_point)
    return [
        Finding(
            evidence=_first_evidence(run),
            severity=CRITICAL if tokens >= profile.tokens_critical else HIGH,
            impact_score=-impact,
            description=DESCRIPTION,
        )
    ]


def _first_evidence(run: RunFacts) -> list[int]:
    """The first EVIDENCE_LIMIT token_usage and tool_call events, in run order."""
    merged = sorted(run.of_type(TOKEN_USAGE)[:EVIDENCE_LIMIT] + run.calls[:EVIDENCE_LIMIT])
    return merged[:EVIDENCE_LIMIT]


DETECTOR = Detector(
    failure_type="cost_explosion",
    dimension="cost_efficiency",
    weight=0.15,
    causal_chain=("repeated_reasoning_or_calls", "token_waste", "cost_spike"),
    remediation=(
        "Set a token budget per run, cache tool results instead of calling again with the same arguments, and "
        "shorten prompts and retrieved context."
    ),
    detect=detect,
)
