"""unrecovered_error: the run ended in an error it did not recover from (SPEC §4.2).

A run whose agent crashed did not do its task, however clean its steps were until then; Critiqor's six
detectors never look at errors, so without this one a crash reads "100, ready for runtime". An
`error_event` counts when its `fatal` is true (JSON true or the string "true"): clients may send it, the
trace mapping gives it to the error of a run's own outermost agent span or of the trace's root span
(SPEC §3.4), the Claude Code mapping to an `api_error` that is the session's last record (SPEC §3.2). An
error_event carrying a known `stage` is an execution error (SPEC §6), infrastructure and not the agent:
never counted here. No dimension: the impact is taken off the trust score itself.
"""

from service.diagnosis.detectors.base import CRITICAL, Detector, Finding
from service.diagnosis.facts import RunFacts
from service.diagnosis.profiles import Profile
from service.diagnosis.values import is_true, lowered
from service.vocab import STAGES

EVENTS_BEFORE = 3
IMPACT = 30
DESCRIPTION = "The run ended in an error it did not recover from."


def detect(run: RunFacts, profile: Profile) -> list[Finding]:
    events = run.events
    fatal = [
        i for i in run.of_type("error_event")
        if is_true(events[i].get("fatal")) and lowered(events[i].get("stage")) not in STAGES
    ]  # fmt: skip
    if not fatal:
        return []
    before = list(range(max(0, fatal[0] - EVENTS_BEFORE), fatal[0]))
    return [Finding(before + fatal, CRITICAL, -IMPACT, DESCRIPTION)]


DETECTOR = Detector(
    failure_type="unrecovered_error",
    dimension=None,
    weight=0.0,
    causal_chain=("error_raised", "not_recovered", "run_aborted"),
    remediation=(
        "Handle the errors the agent's tools and model calls raise (retry with backoff, fall back, or stop and "
        "report a partial result) instead of letting one exception abort the run."
    ),
    detect=detect,
)
