"""memory_degradation: memory the agent stored is not recalled, or is ignored or lost.

An agent that cannot get its own state back re-derives it (or gets it wrong); failed recalls are direct
evidence that memory is not doing its job. A `memory_event` counts when its `action` (else `status`) is
one of MARKERS, in any case.
"""

from collections.abc import Mapping
from typing import Any

from service.diagnosis.detectors.base import HIGH, MEDIUM, Detector, Finding, at_least_one
from service.diagnosis.facts import RunFacts
from service.diagnosis.profiles import Profile
from service.diagnosis.values import lowered

MARKERS = frozenset({"recall_failed", "ignored", "lost", "miss"})
HIGH_COUNT = 3
BASE_IMPACT, IMPACT_PER_EVENT, MAX_IMPACT = 8, 5, 25
DESCRIPTION = "Memory recalls failed, were ignored, or lost stored state."


def detect(run: RunFacts, profile: Profile) -> list[Finding]:
    events = run.events
    matches = [i for i in run.of_type("memory_event") if _outcome(events[i]) in MARKERS]
    n = len(matches)
    impact = min(MAX_IMPACT, BASE_IMPACT + IMPACT_PER_EVENT * n)
    return at_least_one(matches, HIGH if n >= HIGH_COUNT else MEDIUM, -impact, DESCRIPTION)


def _outcome(event: Mapping[str, Any]) -> str | None:
    return lowered(event["action"] if "action" in event else event.get("status"))


DETECTOR = Detector(
    failure_type="memory_degradation",
    dimension="memory_integrity",
    weight=0.15,
    causal_chain=("memory_stored", "recall_failed_or_ignored", "state_reconstruction_failed"),
    remediation=(
        "Check that memory writes are keyed the way they are read back, verify recalls before relying on "
        "them, and persist the state the task needs outside the context window."
    ),
    detect=detect,
)
