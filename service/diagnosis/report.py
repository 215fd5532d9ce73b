"""A diagnosis as plain text for people (`repute diagnose --text`, `repute runs show`, after the run's
outcome line: see `service.run_report`, which knows whether the run has a trust verdict at all). It reads
the diagnosis's JSON view (`Diagnosis.to_dict()`, which the API also serves), so a file diagnosed offline
and a stored run read alike."""

from collections.abc import Iterable, Mapping
from typing import Any

from service.diagnosis.built_in import recorded_profile
from service.diagnosis.detectors import ALL_DETECTORS, CRITICAL, HIGH
from service.diagnosis.diagnosis import Diagnosis
from service.diagnosis.scoring import REVIEW_BELOW, UNSAFE_BELOW
from service.vocab import Readiness

View = Mapping[str, Any]
EVIDENCE_SHOWN = 12  # a cause's evidence events listed by id; the rest are counted
LABEL_CHARS = 48


def text_report(diagnosis: Diagnosis) -> str:
    view = diagnosis.to_dict()
    return "\n".join([*verdict_lines(view), evidence_line(view), profile_line(view)]) + "\n"


def verdict_lines(view: View) -> list[str]:
    """The trust verdict and why, the primary cause with its chain, every cause with its evidence, the
    dimension scores."""
    lines = [f"trust {view['trust_score']}/100  {view['readiness_level']}", f"  why: {_why(view)}"]
    primary = view["primary_diagnosis"]
    if primary["root_cause_failure_type"] is None:
        lines.append("primary: none (no failure mode detected)")
    else:
        primary_type = primary["root_cause_failure_type"]
        # The primary cause is the one of its type with the largest impact (the earlier on a tie).
        impact = max(
            (cause["impact_score"] for cause in view["failure_causes"] if cause["type"] == primary_type), key=abs
        )
        lines.append(f"primary: {primary_type} ({primary['severity']}, impact {impact})")
        lines.append(f"  chain: {primary['causal_chain_explanation']}")
    causes = view["failure_causes"]
    lines.append(f"failures: {len(causes)}")
    labels = {node["id"]: node for node in view["causal_graph"]["nodes"]}
    for cause in causes:
        count = len(cause["evidence"])
        lines.append(f"- {cause['type']}: {cause['severity']}, impact {cause['impact_score']}, {_events(count)}")
        lines.append(f"    {cause['description']}")
        lines.append(f"    evidence: {_evidence(cause['evidence'], labels)}")
        lines.append(f"    remediation: {cause['remediation']}")
    scores = "  ".join(f"{name} {score}" for name, score in view["scores"].items())
    lines.append(f"scores: {scores}")
    return lines


def _why(view: View) -> str:
    """The rule that gave the readiness (docs/model.md): the causes and the trust that set it."""
    trust, readiness = view["trust_score"], view["readiness_level"]
    if readiness == Readiness.READY:
        return f"no critical or high cause, and trust {trust} is {REVIEW_BELOW} or more"
    severity, below = (CRITICAL, UNSAFE_BELOW) if readiness == Readiness.UNSAFE else (HIGH, REVIEW_BELOW)
    named = list(dict.fromkeys(cause["type"] for cause in view["failure_causes"] if cause["severity"] == severity))
    reasons = [f"{severity} {'cause' if len(named) == 1 else 'causes'}: {', '.join(named)}"] if named else []
    if trust < below:
        reasons.append(f"trust {trust} is below {below}")
    return " and ".join(reasons)


def unsafe_reason(trust: int, readiness: str, causes: Iterable[tuple[str, str]]) -> str | None:
    """Why a run is unsafe although its trust is not low, in one line: its critical cause (SPEC §4: any
    critical cause makes a run unsafe, whatever its trust; the gate's verdict says it, the report's `why`
    line names the causes). None for any other verdict. `causes` are
    (failure type, severity) in cause order."""
    if readiness != Readiness.UNSAFE or trust < UNSAFE_BELOW:
        return None
    critical = next((kind for kind, severity in causes if severity == CRITICAL), None)
    if critical is None:
        return None
    return f"unsafe at trust {trust} because {critical} is critical (a critical cause makes a run unsafe at any trust)"


def _events(count: int) -> str:
    return f"{count} evidence event" + ("" if count == 1 else "s")


def _evidence(ids: list[str], nodes: Mapping[str, Mapping[str, str]]) -> str:
    """The first evidence events by id, each run of them that were the same thing named once (its type,
    and its label when that says more: a tool call's tool and arguments); the rest counted."""
    runs: list[tuple[str, list[str]]] = []
    for event_id in ids[:EVIDENCE_SHOWN]:
        what = _what(nodes.get(event_id))
        if runs and runs[-1][0] == what:
            runs[-1][1].append(event_id)
        else:
            runs.append((what, [event_id]))
    shown = "; ".join(", ".join(same) + (f" ({what})" if what else "") for what, same in runs)
    more = len(ids) - EVIDENCE_SHOWN
    return shown + (f"; and {more} more" if more > 0 else "")


def _what(node: Mapping[str, str] | None) -> str:
    if node is None:
        return ""
    label = node["label"] if len(node["label"]) <= LABEL_CHARS else node["label"][: LABEL_CHARS - 1] + "…"
    return node["type"] if label == node["type"] else f"{node['type']} {label}"


def evidence_line(view: View) -> str:
    """What the run's events hold, verdict or not."""
    summary, cost = view["evidence_summary"], view["cost_analysis"]
    return (
        f"events: {summary['event_count']} (tool calls {summary['tool_calls']}, retries {summary['retries']}, "
        f"errors {summary['errors']}); tokens {cost['total_tokens']}, duplicate calls {cost['duplicate_calls']}"
    )


def profile_line(view: View) -> str:
    """Which profile judged the run, its thresholds and the detectors it leaves out (SPEC §4.1, §4.2)."""
    profile = recorded_profile(dict(view))
    off = [d.failure_type for d in ALL_DETECTORS if d.failure_type not in profile.detectors]
    return profile.describe() + (f"; not detected: {', '.join(off)}" if off else "")
