"""context_pollution: the context window fills up or gets compacted.

Near-full contexts and compactions are where earlier instructions and state silently fall out; what the
agent does next may no longer be grounded in what it was told. A `context_event` counts when its
saturation (see values.saturation_of) is at least SATURATED or its `action` is "compaction".
"""

from service.diagnosis.detectors.base import HIGH, MEDIUM, Detector, Finding, at_least_one
from service.diagnosis.facts import RunFacts
from service.diagnosis.profiles import Profile
from service.diagnosis.values import lowered, saturation_of

SATURATED = 85
HIGH_SATURATION = 95
COMPACTION = "compaction"
BASE_IMPACT, IMPACT_PER_EVENT, MAX_IMPACT = 7, 5, 22
DESCRIPTION = "The context window saturated or was compacted, risking the loss of key state."


def detect(run: RunFacts, profile: Profile) -> list[Finding]:
    events = run.events
    saturations = {i: saturation_of(events[i]) for i in run.of_type("context_event")}
    matches = [
        i for i, saturation in saturations.items()
        if saturation >= SATURATED or lowered(events[i].get("action")) == COMPACTION
    ]  # fmt: skip
    severe = any(saturations[i] >= HIGH_SATURATION for i in matches)
    impact = min(MAX_IMPACT, BASE_IMPACT + IMPACT_PER_EVENT * len(matches))
    return at_least_one(matches, HIGH if severe else MEDIUM, -impact, DESCRIPTION)


DETECTOR = Detector(
    failure_type="context_pollution",
    dimension="context_health",
    weight=0.15,
    causal_chain=("context_growth", "saturation_or_compaction", "key_state_risk"),
    remediation=(
        "Trim or summarise tool outputs before they enter the context, keep key state in memory rather than "
        "the transcript, and split long tasks before the window saturates."
    ),
    detect=detect,
)
