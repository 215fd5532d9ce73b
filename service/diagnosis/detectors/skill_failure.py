"""skill_failure: a skill that fits the task is not used, is the wrong one, or fails.

Skills carry the tested way of doing a task; falling back to generic execution loses that. A
`skill_event` counts when `invoked` is false (JSON false or "false") or its `status` is one of STATUSES.
"""

from collections.abc import Mapping
from typing import Any

from service.diagnosis.detectors.base import HIGH, MEDIUM, Detector, Finding, at_least_one
from service.diagnosis.facts import RunFacts
from service.diagnosis.profiles import Profile
from service.diagnosis.values import is_false, lowered

STATUSES = frozenset({"ignored", "mismatch", "failed"})
HIGH_COUNT = 2
BASE_IMPACT, IMPACT_PER_EVENT, MAX_IMPACT = 8, 6, 24
DESCRIPTION = "An available skill was not invoked, was mismatched, or failed."


def detect(run: RunFacts, profile: Profile) -> list[Finding]:
    events = run.events
    matches = [i for i in run.of_type("skill_event") if _failed(events[i])]
    n = len(matches)
    impact = min(MAX_IMPACT, BASE_IMPACT + IMPACT_PER_EVENT * n)
    return at_least_one(matches, HIGH if n >= HIGH_COUNT else MEDIUM, -impact, DESCRIPTION)


def _failed(event: Mapping[str, Any]) -> bool:
    invoked, status = event.get("invoked"), event.get("status")
    if invoked is True and status is None:  # the common case, decided without a call
        return False
    return is_false(invoked) or lowered(status) in STATUSES


DETECTOR = Detector(
    failure_type="skill_failure",
    dimension="skill_adherence",
    weight=0.15,
    causal_chain=("skill_available", "skill_not_selected_or_failed", "generic_execution"),
    remediation=(
        "Make skill descriptions match the tasks they serve, route matching tasks to the skill explicitly, "
        "and surface skill invocation errors instead of falling back silently."
    ),
    detect=detect,
)
