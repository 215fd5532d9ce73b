"""The reputation events a finalized run emits (SPEC §7), pure: no store."""

import uuid
from datetime import UTC, datetime

import pytest

from service.diagnosis import diagnose
from service.reputation.emit import FinalizedRun, events_for_run, run_trust_delta
from service.reputation.model import ReputationEvent
from service.vocab import ExecutionStatus, Readiness

AT = datetime(2026, 11, 20, 12, tzinfo=UTC)
READY, REVIEW, UNSAFE = Readiness.READY, Readiness.REVIEW, Readiness.UNSAFE


def finalized(
    trust: int,
    readiness: str,
    *,
    event_count: int = 10,
    status: str = ExecutionStatus.OK,
    causes: tuple[tuple[str, str, int], ...] = (),
    composite: float | None = None,
    run_id: str = "r1",
) -> FinalizedRun:
    return FinalizedRun(
        "t", run_id, "agent-a", "run", AT, status, trust, causes,
        session_composite=composite, readiness=readiness, event_count=event_count,
    )  # fmt: skip


def deltas(run: FinalizedRun) -> dict[str, float]:
    return {event.event_type: event.score_delta for event in events_for_run(run)}


# SPEC §7 changed on 2026-11-23: run_trust is centred on the "ready" threshold (80), not on 50.
@pytest.mark.parametrize(
    ("readiness", "trust", "delta"),
    [
        (READY, 100, 1.0),
        (READY, 90, 0.5),
        (READY, 80, 0.0),
        (REVIEW, 100, 0.0),  # a high cause: review whatever the trust, never a gain
        (REVIEW, 85, 0.0),
        (REVIEW, 80, 0.0),
        (REVIEW, 70, -0.5),
        (REVIEW, 60, -1.0),
        (UNSAFE, 100, -1.0),
        (UNSAFE, 90, -1.0),
        (UNSAFE, 0, -1.0),
    ],
)
def test_run_trust_delta(readiness: Readiness, trust: int, delta: float) -> None:
    assert run_trust_delta(readiness, trust) == delta
    (event,) = [e for e in events_for_run(finalized(trust, readiness)) if e.event_type == "run_trust"]
    assert (event.score_delta, event.weight, event.category) == (delta, 1.0, "task_quality")
    assert event.reference_type == "run"


def test_an_all_unsafe_agent_only_loses() -> None:
    # The unsafe runs Critiqor can produce (trust stays above about 73 whatever fires) counted as gains
    # under the old mapping (trust - 50) / 50; each one now counts -1.
    loops = [
        [{"event": "tool_call", "tool": "search", "args": {"q": "x"}}] * 5,
        [{"event": "tool_call", "tool": "t"}] * 9 + [{"event": "retry_event"}] * 3,
        [{"event": "token_usage", "total_tokens": 40_000}],
    ]
    for number, events in enumerate(loops):
        diagnosis = diagnose(events)
        assert diagnosis.readiness_level == UNSAFE and diagnosis.trust_score > 50
        run = FinalizedRun(
            "t", f"r{number}", "agent-u", "run", AT, ExecutionStatus.QUALITY_FAILURE, diagnosis.trust_score,
            [(c.type, c.severity, c.impact_score) for c in diagnosis.causes],
            readiness=diagnosis.readiness_level, event_count=diagnosis.event_count,
        )  # fmt: skip
        assert deltas(run)["run_trust"] == -1.0


def test_a_run_without_events_emits_no_run_trust() -> None:
    diagnosis = diagnose([])
    assert (diagnosis.trust_score, diagnosis.readiness_level) == (100, READY)
    assert deltas(finalized(100, READY, event_count=0)) == {}
    with_session = deltas(finalized(100, READY, event_count=0, composite=8.0))
    assert with_session == {"session_performance": pytest.approx(0.6)}


def test_failures_and_session_performance_are_unchanged() -> None:
    run = finalized(70, REVIEW, causes=(("skill_failure", "high", -20), ("skill_failure", "high", -26)), composite=3)
    events = {event.event_type: event for event in events_for_run(run)}
    assert list(events) == ["run_trust", "failure.skill_failure", "session_performance"]
    assert (events["run_trust"].score_delta, events["run_trust"].weight) == (-0.5, 1.0)
    failure = events["failure.skill_failure"]
    assert (failure.score_delta, failure.weight) == (-0.26, 0.0)
    assert failure.attributes == {"severity": "high", "impact": "-26"}
    assert events["session_performance"].score_delta == pytest.approx(-0.4)


def test_an_execution_error_emits_only_itself() -> None:
    run = FinalizedRun(
        "t", "r1", "agent-a", "run", AT, ExecutionStatus.EXECUTION_ERROR, 100, [], "setup", "toolchain_missing",
        readiness=READY, event_count=3,
    )  # fmt: skip
    (event,) = events_for_run(run)
    assert (event.event_type, event.score_delta, event.weight) == ("execution_error", 0.0, 0.0)
    assert event.attributes == {"stage": "setup", "reason": "toolchain_missing"}


def test_readiness_and_event_count_are_required() -> None:
    with pytest.raises(TypeError):
        FinalizedRun("t", "r1", "a", "run", AT, "ok", 90, [])  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        run_trust_delta("fine", 90)


def test_a_runs_events_carry_the_default_confidence() -> None:
    """SPEC §7.1: a run's events are certain (confidence 1, which they take from ReputationEvent's default),
    and an event's confidence and weight default to 1 (SPEC §3.3); an execution error weighs 0.

    Broken on purpose: ReputationEvent's default confidence or weight (service/reputation/model.py) made 2.0
    → this test fails (make mutants: both survived the model's focused tests before it)."""
    events = events_for_run(finalized(90, READY, causes=(("tool_loop", "high", 3),)))
    assert len(events) == 2 and {event.confidence for event in events} == {1.0}
    signal = ReputationEvent(uuid.uuid4(), AT, "agent-a", "economic", "payment_completed", 1.0)
    assert (signal.confidence, signal.weight) == (1.0, 1.0)
    failed = events_for_run(finalized(0, READY, status=ExecutionStatus.EXECUTION_ERROR))
    assert [(event.event_type, event.weight) for event in failed] == [("execution_error", 0.0)]
