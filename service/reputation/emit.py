"""The reputation events a finalized run emits (SPEC §7). Ids are UUIDv5 of tenant/run/event type,
so finalizing again produces the same ids and the store skips them."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from service.reputation.model import ReputationEvent, event_uuid
from service.vocab import Category, ExecutionStatus, Readiness

# run_trust is centred on Critiqor's own "ready" threshold (SPEC §7): a ready run at trust 100 counts
# +1, a review run at most 0, an unsafe run -1 whatever its trust.
READY_TRUST = 80
TRUST_SPAN = 20


@dataclass(frozen=True)
class FinalizedRun:
    """What emission needs to know about a run; built by the finalize pipeline."""

    tenant: str
    run_id: str
    identity: str
    kind: str  # "run" or "session"
    timestamp: datetime
    execution_status: str
    trust_score: int
    causes: Sequence[tuple[str, str, int]]  # (failure type, severity, impact score)
    failure_stage: str = ""
    failure_reason_code: str = ""
    session_composite: float | None = None
    readiness: str = field(kw_only=True)  # the diagnosis's readiness_level
    event_count: int = field(kw_only=True)  # the run's events; with none there is no verdict to count

    def causes_by_type(self) -> list[tuple[str, str, int]]:
        """One entry per failed type, in cause order: the cause with the largest |impact| (the one that
        set the dimension's penalty; several loop groups can share a type)."""
        strongest: dict[str, tuple[str, str, int]] = {}
        for cause in self.causes:
            current = strongest.get(cause[0])
            if current is None or abs(cause[2]) > abs(current[2]):
                strongest[cause[0]] = cause
        return list(strongest.values())


def run_trust_delta(readiness: str, trust_score: int) -> float:
    """SPEC §7: ready -> (trust - 80) / 20; review -> min(0, (trust - 80) / 20); unsafe -> -1; in [-1, 1]."""
    verdict = Readiness(readiness)
    if verdict == Readiness.UNSAFE:
        return -1.0
    delta = (trust_score - READY_TRUST) / TRUST_SPAN
    if verdict == Readiness.REVIEW:
        delta = min(0.0, delta)
    return max(-1.0, min(1.0, delta))


def _event(run: FinalizedRun, event_type: str, delta: float, weight: float, **attributes: str) -> ReputationEvent:
    return ReputationEvent(
        event_id=event_uuid(run.tenant, run.run_id, event_type),
        timestamp=run.timestamp,
        identity=run.identity,
        category=Category.TASK_QUALITY,
        event_type=event_type,
        score_delta=delta,
        weight=weight,
        reference_type=run.kind,
        reference_id=run.run_id,
        attributes=attributes,
    )


def events_for_run(run: FinalizedRun) -> list[ReputationEvent]:
    if run.execution_status == ExecutionStatus.EXECUTION_ERROR:
        # Infrastructure, not the agent: recorded with weight 0 so it never moves a score.
        return [_event(run, "execution_error", 0.0, 0.0, stage=run.failure_stage, reason=run.failure_reason_code)]
    events = []
    if run.event_count > 0:  # a run with no events has nothing to judge: no run_trust (SPEC §7)
        events.append(_event(run, "run_trust", run_trust_delta(run.readiness, run.trust_score), 1.0))
    for failure_type, severity, impact in run.causes_by_type():
        events.append(_event(run, f"failure.{failure_type}", impact / 100, 0.0, severity=severity, impact=str(impact)))
    if run.session_composite is not None:
        events.append(_event(run, "session_performance", (run.session_composite - 5) / 5, 1.0))
    return events
