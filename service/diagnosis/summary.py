"""The summaries of a diagnosis (SPEC §4): evidence, cost, the executive summary and recommendations."""

from collections.abc import Sequence
from typing import Any

from service.diagnosis.cause import Cause
from service.diagnosis.detectors import ALL_DETECTORS
from service.diagnosis.facts import RunFacts

COST_EXPLOSION = "cost_explosion"
TOKENS_WASTED_PER_DUPLICATE = 1000
TOKENS_WASTED_PER_IMPACT_POINT = 120
NO_FAILURE_EXPLANATION = "No OpenClaw failure mode was detected from runtime evidence."
_COUNTED_TYPES = {
    "tool_calls": "tool_call", "tool_outputs": "tool_output", "memory_events": "memory_event",
    "retries": "retry_event", "errors": "error_event", "state_transitions": "state_transition",
}  # fmt: skip
_REMEDIATIONS = {d.failure_type: d.remediation for d in ALL_DETECTORS}


def evidence_summary(run: RunFacts) -> dict[str, Any]:
    counts = {kind: len(positions) for kind, positions in run.positions.items()}
    summary: dict[str, Any] = {"event_count": len(run.types), "event_counts": counts}
    summary.update({name: counts.get(kind, 0) for name, kind in _COUNTED_TYPES.items()})
    return summary


def cost_analysis(run: RunFacts, causes: Sequence[Cause]) -> dict[str, int]:
    calls, duplicates, total = len(run.calls), run.duplicate_calls, run.token_total
    redundancy = max(0, min(100, round(100 * duplicates / max(1, calls))))
    cost_impact = sum(abs(c.impact_score) for c in causes if c.type == COST_EXPLOSION)
    waste = TOKENS_WASTED_PER_DUPLICATE * duplicates + TOKENS_WASTED_PER_IMPACT_POINT * cost_impact
    return {
        "total_tokens": total,
        "duplicate_calls": duplicates,
        "redundancy_score": redundancy,
        "token_waste": min(total, waste),
        "cost_efficiency": 100 - redundancy,
    }


def executive_summary(trust: int, readiness: str, primary: Cause | None, causes: int) -> dict[str, Any]:
    verdict = f"Trust {trust}/100, {readiness.replace('_', ' ')}"
    if primary is None:
        sentence = f"{verdict}: no failure mode was detected from runtime evidence."
    else:
        found = "1 failure cause" if causes == 1 else f"{causes} failure causes"
        sentence = (
            f"{verdict}: {found} detected; the most damaging is {primary.type} "
            f"({primary.severity}, impact {primary.impact_score})."
        )
    return {
        "trust_score": trust,
        "readiness_level": readiness,
        "primary_failure_type": None if primary is None else primary.type,
        "summary": sentence,
    }


def recommendations(causes: Sequence[Cause]) -> list[dict[str, str]]:
    """One per detected failure type, in cause order."""
    types = dict.fromkeys(cause.type for cause in causes)
    return [{"failure_type": kind, "recommendation": _REMEDIATIONS[kind]} for kind in types]
