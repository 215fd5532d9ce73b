"""The rebuild planner (service.reputation.rebuild), pure: what a run's stored events need to equal what the
current model emits, retractions included, and that applying a plan leaves nothing to do."""

from dataclasses import replace
from datetime import UTC, datetime
from uuid import UUID

from hypothesis import given
from hypothesis import strategies as st

from service.reputation.emit import FinalizedRun, events_for_run
from service.reputation.model import ReputationEvent, event_uuid
from service.reputation.rebuild import RETRACTS, Occupant, Plan, current_events, plan, retraction, retraction_id
from service.vocab import ExecutionStatus, Readiness
from tests.fleet import events_before_2026_11_23

AT = datetime(2026, 11, 1, 9, tzinfo=UTC)


def _run(
    trust: int = 90,
    readiness: str = Readiness.READY,
    *,
    event_count: int = 12,
    causes: tuple[tuple[str, str, int], ...] = (),
    status: str = ExecutionStatus.OK,
    composite: float | None = None,
) -> FinalizedRun:
    return FinalizedRun(
        "t", "run-1", "agent-a", "run", AT, status, trust, causes, "agent", "provider_error",
        session_composite=composite, readiness=readiness, event_count=event_count,
    )  # fmt: skip


def _applied(stored: list[ReputationEvent], done: Plan) -> list[ReputationEvent]:
    return stored + list(done.rows)


def _by_id(events: list[ReputationEvent]) -> dict:
    return {e.event_id: e for e in events}


def _content(events: list[ReputationEvent]) -> list[tuple]:
    return sorted((e.event_type, e.score_delta, e.weight, e.category, e.timestamp) for e in events)


def test_an_up_to_date_run_plans_nothing() -> None:
    run = _run(causes=(("cost_explosion", "high", -15),), composite=7.0)
    assert plan(events_for_run(run), events_for_run(run)) == Plan()


def test_an_old_run_trust_is_retracted_and_the_new_one_gets_a_new_id() -> None:
    run = _run(trust=75, readiness=Readiness.UNSAFE, causes=(("infinite_tool_loop", "critical", -20),))
    stored = events_before_2026_11_23(run)
    done = plan(stored, events_for_run(run))
    [old] = [e for e in stored if e.event_type == "run_trust"]
    [retracted] = done.retractions
    assert retracted == replace(
        old, event_id=retracted.event_id, sign=-1, attributes={**old.attributes, RETRACTS: str(old.event_id)}
    )
    [new] = done.emissions
    assert (new.event_type, new.score_delta, new.weight) == ("run_trust", -1.0, 1.0)
    assert new.event_id not in {e.event_id for e in stored} | {retracted.event_id}
    assert old.score_delta == 0.5  # (75 - 50) / 50: an unsafe run used to raise its agent's reputation


def test_a_run_without_events_loses_its_run_trust_and_emits_nothing() -> None:
    run = _run(trust=100, event_count=0)
    stored = events_before_2026_11_23(run)
    done = plan(stored, events_for_run(run))
    assert [r.attributes[RETRACTS] for r in done.retractions] == [str(stored[0].event_id)]
    assert done.emissions == ()


def test_an_execution_error_keeps_its_weightless_event() -> None:
    run = _run(status=ExecutionStatus.EXECUTION_ERROR)
    assert [e.event_type for e in events_for_run(run)] == ["execution_error"]
    assert plan(events_before_2026_11_23(run), events_for_run(run)) == Plan()


def test_a_model_that_changes_back_never_reuses_an_id() -> None:
    """A, B, then A again: each time a new row, never an id stored before (the store would skip it)."""
    base = events_for_run(_run(trust=90))
    b = [replace(e, score_delta=0.1) for e in base]
    stored = list(base)
    seen = {e.event_id for e in stored}
    for model in (b, base, b, base):
        done = plan(stored, model)
        assert len(done.retractions) == 1 and len(done.emissions) == 1
        assert not {e.event_id for e in done.rows} & seen
        seen |= {e.event_id for e in done.rows}
        stored = _applied(stored, done)
        assert _content(current_events(stored)) == _content(model)


def test_a_rebuild_cut_short_converges() -> None:
    run = _run(trust=60, readiness=Readiness.REVIEW, causes=(("skill_failure", "high", -14),))
    stored = events_before_2026_11_23(run)
    full = plan(stored, events_for_run(run))
    for written in (list(full.retractions), list(full.emissions)):  # only one half reached the store
        again = plan(stored + written, events_for_run(run))
        assert _by_id(_applied(stored + written, again)) == _by_id(_applied(stored, full))


def _occupant(event_id: UUID, capped: bool = False) -> Occupant:
    """A client's +1 stored under `event_id` before signals had ids of their own (issue #28)."""
    claimed = ReputationEvent(event_id, AT, "agent-a", "task_quality", "run_trust", 1.0, reference_type="run")
    return Occupant(claimed, "key-attacker", capped)


def _without_run_trust(run: FinalizedRun) -> tuple[list[ReputationEvent], ReputationEvent]:
    """What a finalize stored when a signal held the id of its run_trust, and that run_trust."""
    events = events_for_run(run)
    [run_trust] = [e for e in events if e.event_type == "run_trust"]
    return [e for e in events if e is not run_trust], run_trust


def test_an_occupied_id_is_stepped_around_and_the_occupant_retracted_with_its_source() -> None:
    run = _run(trust=75, readiness=Readiness.UNSAFE, causes=(("infinite_tool_loop", "critical", -20),))
    stored, run_trust = _without_run_trust(run)
    occupant = _occupant(run_trust.event_id)
    done = plan(stored, events_for_run(run), [occupant])
    [moved] = done.emissions
    assert _content([moved]) == _content([run_trust]) and moved.event_id != run_trust.event_id
    [eviction] = done.evictions
    assert eviction == Occupant(retraction(occupant.event, eviction.event.event_id), "key-attacker")
    assert done.retractions == () and len(done.ids) == 2
    applied = _applied(stored, done)
    assert plan(applied, events_for_run(run)) == Plan()  # the next rebuild looks nothing up
    assert plan(applied, events_for_run(run), [occupant, eviction]) == Plan()  # nor retracts twice


def test_a_pre_claimed_retraction_and_next_generation_are_stepped_around() -> None:
    run = _run(trust=80, readiness=Readiness.UNSAFE)
    stored = events_before_2026_11_23(run)
    [old] = [e for e in stored if e.event_type == "run_trust"]
    occupants = [_occupant(retraction_id(old.event_id)), _occupant(event_uuid(str(old.event_id), "generation", "1"))]
    done = plan(stored, events_for_run(run), occupants)
    [retracted], [new] = done.retractions, done.emissions
    assert retracted.attributes[RETRACTS] == str(old.event_id) and new.score_delta == -1.0
    taken = {e.event_id for e in stored} | {o.event.event_id for o in occupants}
    assert not done.ids & taken and len(done.ids) == 4
    assert {e.event.attributes[RETRACTS] for e in done.evictions} == {str(o.event.event_id) for o in occupants}


def test_an_occupant_that_does_not_count_is_only_stepped_around() -> None:
    run = _run(trust=90)
    stored, run_trust = _without_run_trust(run)
    capped = _occupant(run_trust.event_id, capped=True)
    counted = _occupant(retraction_id(run_trust.event_id))
    undone = Occupant(retraction(counted.event, event_uuid("an earlier rebuild's")), "key-attacker")
    done = plan(stored, events_for_run(run), [capped, counted, undone])
    assert done.evictions == () and [e.event_id for e in done.emissions] != [run_trust.event_id]


trusts = st.integers(min_value=0, max_value=100)
readiness = st.sampled_from(list(Readiness))
causes = st.lists(
    st.tuples(st.sampled_from(["infinite_tool_loop", "cost_explosion", "skill_failure"]), st.just("high"),
              st.integers(min_value=-30, max_value=0)),
    max_size=4,
)  # fmt: skip
runs = st.builds(
    _run,
    trusts,
    readiness,
    event_count=st.integers(min_value=0, max_value=3),
    causes=causes.map(tuple),
    status=st.sampled_from([ExecutionStatus.OK, ExecutionStatus.QUALITY_FAILURE, ExecutionStatus.EXECUTION_ERROR]),
    composite=st.none() | st.floats(min_value=0, max_value=10),
)


@given(runs, st.lists(runs, min_size=1, max_size=3))
def test_applying_a_plan_leaves_nothing_to_plan(first: FinalizedRun, later: list[FinalizedRun]) -> None:
    """Whatever was stored and however often the model changed: after a plan, the current events are the
    model's, planning again is empty, and no id is ever written twice."""
    stored = events_before_2026_11_23(first)
    for run in later:
        emitted = events_for_run(run)
        done = plan(stored, emitted)
        assert not {e.event_id for e in done.rows} & {e.event_id for e in stored}
        stored = _applied(stored, done)
        assert _content(current_events(stored)) == _content(emitted)
        assert plan(stored, emitted) == Plan()
    assert len({e.event_id for e in stored}) == len(stored)
