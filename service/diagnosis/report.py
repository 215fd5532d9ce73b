"""A diagnosis as plain text for people (`repute diagnose --text`, after the run's outcome line: see
`service.run_report`, which knows whether the run has a trust verdict at all)."""

from service.diagnosis.diagnosis import Diagnosis


def text_report(diagnosis: Diagnosis) -> str:
    return "\n".join([*verdict_lines(diagnosis), evidence_line(diagnosis), profile_line(diagnosis)]) + "\n"


def verdict_lines(diagnosis: Diagnosis) -> list[str]:
    """The trust verdict: trust and readiness, the primary cause, every cause, the dimension scores."""
    lines = [f"trust {diagnosis.trust_score}/100  {diagnosis.readiness_level}"]
    primary = diagnosis.primary
    if primary is None:
        lines.append("primary: none (no failure mode detected)")
    else:
        lines.append(f"primary: {primary.type} ({primary.severity}, impact {primary.impact_score})")
        lines.append(f"  chain: {primary.causal_chain}")
    lines.append(f"failures: {len(diagnosis.causes)}")
    for cause in diagnosis.causes:
        evidence = f"{len(cause.evidence)} evidence event" + ("" if len(cause.evidence) == 1 else "s")
        lines.append(f"- {cause.type}: {cause.severity}, impact {cause.impact_score}, {evidence}")
        lines.append(f"    {cause.description}")
        lines.append(f"    remediation: {cause.remediation}")
    scores = "  ".join(f"{name} {score}" for name, score in diagnosis.scores.items())
    lines.append(f"scores: {scores}")
    return lines


def evidence_line(diagnosis: Diagnosis) -> str:
    """What the run's events hold, verdict or not."""
    summary, cost = diagnosis.evidence_summary, diagnosis.cost_analysis
    return (
        f"events: {summary['event_count']} (tool calls {summary['tool_calls']}, retries {summary['retries']}, "
        f"errors {summary['errors']}); tokens {cost['total_tokens']}, duplicate calls {cost['duplicate_calls']}"
    )


def profile_line(diagnosis: Diagnosis) -> str:
    """Which profile judged the run, and its thresholds (SPEC §4.1)."""
    return diagnosis.profile.describe()
