"""A diagnosis as plain text for people (`repute diagnose --text`, after the run's outcome line: see
`service.run_report`, which knows whether the run has a trust verdict at all)."""

from collections.abc import Iterable

from service.diagnosis.detectors import ALL_DETECTORS, CRITICAL
from service.diagnosis.diagnosis import Diagnosis
from service.diagnosis.scoring import UNSAFE_BELOW
from service.vocab import Readiness


def text_report(diagnosis: Diagnosis) -> str:
    return "\n".join([*verdict_lines(diagnosis), evidence_line(diagnosis), profile_line(diagnosis)]) + "\n"


def verdict_lines(diagnosis: Diagnosis) -> list[str]:
    """The trust verdict: trust and readiness, the primary cause, every cause, the dimension scores."""
    lines = [f"trust {diagnosis.trust_score}/100  {diagnosis.readiness_level}"]
    causes = ((cause.type, cause.severity) for cause in diagnosis.causes)
    lines += filter(None, [unsafe_reason(diagnosis.trust_score, diagnosis.readiness_level, causes)])
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


def unsafe_reason(trust: int, readiness: str, causes: Iterable[tuple[str, str]]) -> str | None:
    """Why a run is unsafe although its trust is not low, in one line: its critical cause (SPEC §4: any
    critical cause makes a run unsafe, whatever its trust). None for any other verdict. `causes` are
    (failure type, severity) in cause order."""
    if readiness != Readiness.UNSAFE or trust < UNSAFE_BELOW:
        return None
    critical = next((kind for kind, severity in causes if severity == CRITICAL), None)
    if critical is None:
        return None
    return f"unsafe at trust {trust} because {critical} is critical (a critical cause makes a run unsafe at any trust)"


def evidence_line(diagnosis: Diagnosis) -> str:
    """What the run's events hold, verdict or not."""
    summary, cost = diagnosis.evidence_summary, diagnosis.cost_analysis
    return (
        f"events: {summary['event_count']} (tool calls {summary['tool_calls']}, retries {summary['retries']}, "
        f"errors {summary['errors']}); tokens {cost['total_tokens']}, duplicate calls {cost['duplicate_calls']}"
    )


def profile_line(diagnosis: Diagnosis) -> str:
    """Which profile judged the run, its thresholds and the detectors it leaves out (SPEC §4.1, §4.2)."""
    profile = diagnosis.profile
    off = [d.failure_type for d in ALL_DETECTORS if d.failure_type not in profile.detectors]
    return profile.describe() + (f"; not detected: {', '.join(off)}" if off else "")
