"""SPEC §6: execution status, trial aggregation and the suite summary (pure logic, no store)."""

import itertools
import json
import math
from collections import Counter
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.outcome import (
    ExecutionStatus,
    OutcomeInputError,
    RunOutcome,
    SuiteSummary,
    aggregate_task,
    aggregate_trials,
    classify_execution,
    median_of,
    quality_scores,
    summarize_suite,
)
from service.vocab import STAGES, Readiness
from tests.conftest import FIXTURES

OK, QUALITY, ERROR = ExecutionStatus.OK, ExecutionStatus.QUALITY_FAILURE, ExecutionStatus.EXECUTION_ERROR
READY, REVIEW, UNSAFE = Readiness.READY, Readiness.REVIEW, Readiness.UNSAFE
SUITE = "customs-evals"

SPEC_TEXT = """\
Total tests: 10
Passed: 5
Quality failures: 3
Execution errors: 2
Mean score: 0.750 (8 quality tests, 2 execution errors excluded)
Execution errors by stage:
  agent: 1
  setup: 1
Execution errors by reason:
  provider_error: 1
  template_error: 1"""


def run(
    run_id: str,
    task_id: str | None,
    status: ExecutionStatus,
    score: float = 0.0,
    trial: int | None = None,
    stage: str | None = None,
    reason: str | None = None,
) -> RunOutcome:
    return RunOutcome(run_id, SUITE, task_id, trial, status, score, stage, reason)


def error(run_id: str, task_id: str | None, stage: str, reason: str, trial: int | None = None) -> RunOutcome:
    return run(run_id, task_id, ERROR, 0.0, trial, stage, reason)


def spec_example_records() -> list[RunOutcome]:
    """Task scores 0.85 0.9 1.0 0.8 0.95 (passed) and 0.6 0.4 0.5 (failed): sum 6.0 over 8 tasks."""
    return [
        run("r01", "t-01", QUALITY, 0.7, trial=1),
        run("r02", "t-01", OK, 1.0, trial=2),  # ok beats an earlier quality failure; score (0.7 + 1.0) / 2
        error("r03", "t-02", "agent", "provider_error", trial=1),
        run("r04", "t-02", OK, 0.9, trial=2),  # the error trial is left out of the task's score
        run("r05", "t-03", OK, 1.0),
        run("r06", "t-04", OK, 0.8),
        run("r07", "t-05", OK, 0.95),
        run("r08", "t-06", QUALITY, 0.5, trial=1),
        run("r09", "t-06", QUALITY, 0.7, trial=2),
        run("r10", "t-07", QUALITY, 0.4, trial=2),
        error("r11", "t-07", "setup", "toolchain_missing", trial=1),  # not all errors: a quality failure
        run("r12", "t-08", QUALITY, 0.5),
        # Listed out of trial order: trial 2 is the last trial, so setup / template_error counts.
        error("r13", "t-09", "setup", "template_error", trial=2),
        error("r14", "t-09", "evaluator", "evaluator_error", trial=1),
        error("r15", None, "agent", "provider_error"),  # no task_id: a task of its own
    ]


# --- the SPEC example ----------------------------------------------------------------------------


def test_spec_example_text_is_reproduced_exactly() -> None:
    assert summarize_suite(SUITE, spec_example_records()).to_text() == SPEC_TEXT


def test_spec_example_json() -> None:
    summary = summarize_suite(SUITE, spec_example_records()).to_dict()
    assert {key: value for key, value in summary.items() if key != "tasks"} == {
        "suite": SUITE,
        "total": 10,
        "passed": 5,
        "quality_failures": 3,
        "execution_errors": 2,
        "mean_score": pytest.approx(0.75),
        "quality_tests": 8,
        "by_stage": {"agent": 1, "setup": 1},
        "by_reason": {"provider_error": 1, "template_error": 1},
        # repeated tasks t-01 [q, ok], t-02 [error, ok], t-06 [q, q], t-07 [error, q]; t-09 is all errors
        "flaky_tasks": ["t-01"],
        "pass_all_trials": 1 / 4,
        "pass_any_trial": 2 / 4,
    }
    tasks = {task["task_id"]: task for task in summary["tasks"]}
    assert tasks["t-01"] == {
        "task_id": "t-01", "runs": ["r01", "r02"], "trials": 2, "status": "ok", "score": pytest.approx(0.85),
        "stage": None, "reason_code": None,
    }  # fmt: skip
    assert tasks["t-09"]["runs"] == ["r14", "r13"]
    assert (tasks["t-09"]["status"], tasks["t-09"]["score"]) == ("execution_error", 0.0)
    assert (tasks[None]["runs"], tasks[None]["stage"]) == (["r15"], "agent")
    assert json.loads(json.dumps(summary)) == summary


# --- classification of one run -------------------------------------------------------------------


def test_infra_error_fixture_is_an_execution_error() -> None:
    session = json.loads((FIXTURES / "session_infra_error.json").read_text())
    outcome = classify_execution(session.get("execution"), session["events"], trust_score=100, readiness=READY)
    assert outcome.status == ERROR
    assert (outcome.stage, outcome.reason_code, outcome.score) == ("setup", "toolchain_missing", 0.0)
    assert outcome.message == "dotnet: command not found"


def readiness_of(trust_score: int) -> Readiness:
    """The readiness a run without causes has at this trust (SPEC §4)."""
    return UNSAFE if trust_score < 60 else REVIEW if trust_score < 80 else READY


def staged_error(stage: str = "agent", **fields: Any) -> dict[str, Any]:
    return {"event": "error_event", "stage": stage, **fields}


def test_callers_execution_error_wins_over_evidence_and_score() -> None:
    caller = {"status": "execution_error", "stage": "repo_setup", "reason": "clone_error", "message": "403"}
    outcome = classify_execution(caller, [staged_error("setup", reason="toolchain_missing")], 100, readiness=READY)
    assert (outcome.status, outcome.score) == (ERROR, 0.0)
    assert (outcome.stage, outcome.reason_code, outcome.message) == ("repo_setup", "clone_error", "403")


def test_staged_error_event_wins_over_a_callers_ok() -> None:
    outcome = classify_execution(
        {"status": "ok", "score": 1.0}, [staged_error(reason="budget_exceeded")], 100, readiness=READY
    )
    assert (outcome.status, outcome.stage, outcome.reason_code) == (ERROR, "agent", "budget_exceeded")


def test_first_staged_error_names_the_failure() -> None:
    events = [
        {"event": "error_event", "error": "no stage: an ordinary agent error"},
        staged_error("build", reason="unknown_stage_is_ignored"),
        {"type": "error_event", "stage": "setup", "code": "script_error", "message": "setup.sh exited 2"},
        staged_error("agent", reason="provider_error"),
    ]
    outcome = classify_execution(None, events, trust_score=90, readiness=READY)
    assert (outcome.stage, outcome.reason_code, outcome.message) == ("setup", "script_error", "setup.sh exited 2")


def test_unstaged_errors_leave_the_score_to_decide() -> None:
    events = [
        {"event": "error_event", "error": "boom"},
        staged_error("deploy"),
        {"event": "tool_call", "stage": "agent"},
    ]
    assert classify_execution(None, events, trust_score=85, readiness=READY).status == OK


@pytest.mark.parametrize(
    ("execution", "trust_score", "status", "score"),
    [
        (None, 80, OK, 0.8),
        (None, 79, QUALITY, 0.79),
        ({"score": 0.8}, 0, OK, 0.8),  # the caller's score replaces trust_score / 100
        ({"score": 0.79}, 100, QUALITY, 0.79),
        ({"score": 1}, 0, OK, 1.0),
        ({"status": "quality_failure"}, 95, OK, 0.95),  # only execution_error is authoritative
        ({"status": "ok", "score": 0.2}, 95, QUALITY, 0.2),
        ({"stage": "agent", "reason": "provider_error"}, 90, OK, 0.9),  # no status: not an execution error
    ],
)
def test_score_decides_when_no_execution_error(
    execution: dict[str, Any] | None, trust_score: int, status: ExecutionStatus, score: float
) -> None:
    outcome = classify_execution(execution, [], trust_score, readiness=readiness_of(trust_score))
    assert (outcome.status, outcome.score, outcome.stage, outcome.reason_code) == (status, score, None, None)


def test_pass_threshold_is_configurable() -> None:
    assert classify_execution(None, [], 85, pass_threshold=0.9, readiness=READY).status == QUALITY


@pytest.mark.parametrize(
    ("execution", "field"),
    [
        ("execution_error", "execution"),
        ({"status": "failed"}, "execution.status"),
        ({"status": 1}, "execution.status"),
        ({"score": 1.01}, "execution.score"),
        ({"score": -0.01}, "execution.score"),
        ({"score": "0.9"}, "execution.score"),
        ({"score": True}, "execution.score"),
        ({"score": float("nan")}, "execution.score"),
        ({"status": "execution_error", "score": 7}, "execution.score"),
        ({"status": "execution_error", "stage": 3}, "execution.stage"),
        ({"reason": ["clone_error"]}, "execution.reason"),
        ({"message": {"text": "x"}}, "execution.message"),
    ],
)
def test_invalid_execution_object_names_the_field(execution: Any, field: str) -> None:
    with pytest.raises(OutcomeInputError) as raised:
        classify_execution(execution, [], trust_score=90, readiness=READY)
    assert raised.value.field == field
    assert isinstance(raised.value, ValueError)


# SPEC §6 (changed 2026-11-23): with the score from the diagnosis, an unsafe run fails whatever its trust.
@pytest.mark.parametrize("trust_score", [80, 90, 100])
def test_an_unsafe_run_is_a_quality_failure_whatever_its_trust(trust_score: int) -> None:
    outcome = classify_execution(None, [], trust_score, readiness=UNSAFE)
    assert (outcome.status, outcome.score) == (QUALITY, trust_score / 100)
    assert classify_execution(None, [], trust_score, readiness=REVIEW).status == OK


def test_a_callers_score_decides_alone_even_for_an_unsafe_run() -> None:
    outcome = classify_execution({"score": 0.9}, [], 85, readiness=UNSAFE)
    assert (outcome.status, outcome.score) == (OK, 0.9)
    assert classify_execution({"score": 0.7}, [], 100, readiness=READY).status == QUALITY


def test_an_unsafe_run_with_a_staged_error_is_an_execution_error() -> None:
    outcome = classify_execution(None, [staged_error(reason="provider_error")], 90, readiness=UNSAFE)
    assert outcome.status == ERROR


def test_readiness_must_be_a_readiness_level() -> None:
    with pytest.raises(ValueError):
        classify_execution(None, [], 90, readiness="fine")


# --- stage and reason codes are identifiers ------------------------------------------------------

FORGED = "provider_error: 1\nPassed: 999"


@pytest.mark.parametrize(
    ("execution", "field"),
    [
        ({"status": "execution_error", "stage": "build"}, "execution.stage"),
        ({"status": "execution_error", "stage": "setup\n"}, "execution.stage"),
        ({"stage": "deploy"}, "execution.stage"),  # validated whatever the status
        ({"status": "execution_error", "stage": "agent", "reason": FORGED}, "execution.reason"),
        ({"status": "execution_error", "reason": "provider error"}, "execution.reason"),
        ({"status": "execution_error", "reason": "x" * 65}, "execution.reason"),
        ({"status": "execution_error", "reason": "\u212aelvin"}, "execution.reason"),  # lowercases to ASCII
        ({"status": "execution_error", "reason": "café"}, "execution.reason"),
        ({"reason": "a/b"}, "execution.reason"),
    ],
)
def test_invalid_stage_or_reason_of_the_caller_names_the_field(execution: dict[str, Any], field: str) -> None:
    with pytest.raises(OutcomeInputError) as raised:
        classify_execution(execution, [], trust_score=90, readiness=READY)
    assert raised.value.field == field
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("event", "field"),
    [
        (staged_error(reason=FORGED), "events[1].reason"),
        (staged_error(reason="provider error"), "events[1].reason"),
        (staged_error(code="exit status 127"), "events[1].code"),
        (staged_error(reason=["provider_error"]), "events[1].reason"),
        (staged_error(reason=True), "events[1].reason"),
        (staged_error(code=1.5), "events[1].code"),
        ({"type": "ERROR_EVENT", "stage": "SETUP", "reason": "a b"}, "events[1].reason"),
    ],
)
def test_invalid_reason_of_a_staged_error_names_the_event(event: dict[str, Any], field: str) -> None:
    with pytest.raises(OutcomeInputError) as raised:
        classify_execution(None, [{"event": "tool_call"}, event], trust_score=90, readiness=READY)
    assert raised.value.field == field


def test_every_staged_errors_reason_is_validated_even_under_a_declared_error() -> None:
    events = [staged_error(reason="provider_error"), staged_error("teardown", reason=FORGED)]
    with pytest.raises(OutcomeInputError) as raised:
        classify_execution({"status": "execution_error", "stage": "agent"}, events, 90, readiness=READY)
    assert raised.value.field == "events[1].reason"


def test_reasons_of_unstaged_errors_are_not_reason_codes() -> None:
    events = [{"event": "error_event", "reason": "free text\nis fine here"}, staged_error("build", reason="a b")]
    assert classify_execution(None, events, 90, readiness=READY).status == OK


def test_stages_and_reasons_are_recorded_in_lowercase() -> None:
    caller = {"status": "execution_error", "stage": "Repo_Setup", "reason": "Clone_Error"}
    outcome = classify_execution(caller, [], 90, readiness=READY)
    assert (outcome.stage, outcome.reason_code) == ("repo_setup", "clone_error")
    evidence = [{"event": "Error_Event", "stage": "SETUP", "reason": "Toolchain_Missing:v2.1-rc"}]
    outcome = classify_execution(None, evidence, 90, readiness=READY)
    assert (outcome.stage, outcome.reason_code) == ("setup", "toolchain_missing:v2.1-rc")


def test_a_staged_error_is_read_from_any_mapping_not_only_a_dict() -> None:
    """The outcome takes a parsed event (a dict) by its class first; any other mapping is still an event."""
    evidence = [MappingProxyType({"event": "tool_call"}), MappingProxyType(staged_error("setup", reason="no_disk"))]
    outcome = classify_execution(None, evidence, 90, readiness=READY)
    assert (outcome.status, outcome.stage, outcome.reason_code) == (ERROR, "setup", "no_disk")


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"code": 127}, "127"),  # an exit status
        ({"reason": "", "code": "script_error"}, "script_error"),
        ({"reason": None, "code": "script_error"}, "script_error"),
        ({"reason": "r" * 64}, "r" * 64),
        ({}, None),
    ],
)
def test_reason_code_sources(fields: dict[str, Any], reason: str | None) -> None:
    outcome = classify_execution(None, [staged_error(**fields)], 90, readiness=READY)
    assert (outcome.status, outcome.reason_code) == (ERROR, reason)


def test_a_forged_reason_never_reaches_the_summary() -> None:
    events = [staged_error(reason=FORGED, error="boom")]
    with pytest.raises(OutcomeInputError):
        classify_execution(None, events, 90, readiness=READY)
    # Records stored before reasons were validated are printed escaped, on the line they belong to.
    text = summarize_suite(SUITE, [error("r1", "t-1", "agent", FORGED)]).to_text()
    assert "Passed: 0" in text and "Passed: 999" not in text.splitlines()
    assert text.splitlines()[-1] == "  provider_error: 1\\nPassed: 999: 1"
    assert len(text.splitlines()) == 9


# --- trial aggregation ---------------------------------------------------------------------------

TRIAL_COMBINATIONS = [combo for count in (1, 2, 3) for combo in itertools.product((OK, QUALITY, ERROR), repeat=count)]
TRIAL_SCORES = {OK: (0.9, 0.85, 1.0), QUALITY: (0.1, 0.5, 0.3), ERROR: (0.0, 0.0, 0.0)}


def expected_task_status(statuses: tuple[ExecutionStatus, ...]) -> ExecutionStatus:
    counts = Counter(statuses)
    if counts[OK] > 0:
        return OK
    return ERROR if counts[ERROR] == len(statuses) else QUALITY


def trial_records(statuses: tuple[ExecutionStatus, ...]) -> list[RunOutcome]:
    """Trial n has a stage and reason of its own; given newest first so trial numbers must order them."""
    records = [
        run(f"r{n}", "t-01", status, TRIAL_SCORES[status][n - 1], n, STAGES[n], f"reason_{n}")
        if status == ERROR
        else run(f"r{n}", "t-01", status, TRIAL_SCORES[status][n - 1], n)
        for n, status in enumerate(statuses, start=1)
    ]
    return records[::-1]


def test_every_combination_of_up_to_three_trials_is_covered() -> None:
    assert len(TRIAL_COMBINATIONS) == 3 + 9 + 27 == 39


@pytest.mark.parametrize("statuses", TRIAL_COMBINATIONS, ids=lambda combo: "+".join(combo))
def test_trial_aggregation(statuses: tuple[ExecutionStatus, ...]) -> None:
    expected = expected_task_status(statuses)
    assert aggregate_trials(statuses) == expected
    assert aggregate_trials(str(status) for status in statuses) == expected

    (task,) = summarize_suite(SUITE, trial_records(statuses)).tasks
    assert task.status == expected
    assert task.run_ids == tuple(f"r{n}" for n in range(1, len(statuses) + 1))
    kept = [TRIAL_SCORES[s][n] for n, s in enumerate(statuses) if s != ERROR]
    assert task.score == (pytest.approx(sum(kept) / len(kept)) if kept else 0.0)
    last = len(statuses)
    expected_cause = (STAGES[last], f"reason_{last}") if expected == ERROR else (None, None)
    assert (task.stage, task.reason_code) == expected_cause


def test_aggregate_trials_rejects_no_trials_and_unknown_statuses() -> None:
    with pytest.raises(ValueError):
        aggregate_trials([])
    with pytest.raises(ValueError):
        aggregate_trials(["ok", "passed"])


def test_trial_order_is_input_order_without_trial_numbers_and_numbered_trials_come_first() -> None:
    records = [
        error("a", "t-01", "setup", "clone_error"),
        error("b", "t-01", "agent", "provider_error", trial=5),
        error("c", "t-01", "teardown", "script_error"),
        error("d", "t-01", "evaluator", "evaluator_error", trial=1),
    ]
    (task,) = summarize_suite(SUITE, records).tasks
    assert task.run_ids == ("d", "b", "a", "c")
    assert (task.stage, task.reason_code) == ("teardown", "script_error")


# --- suite summary -------------------------------------------------------------------------------


def test_summary_without_execution_errors_omits_the_breakdowns() -> None:
    records = [run("r1", "t-1", OK, 0.9), run("r2", "t-2", QUALITY, 0.5), run("r3", "t-3", QUALITY, 0.2)]
    assert summarize_suite(SUITE, records).to_text() == (
        "Total tests: 3\nPassed: 1\nQuality failures: 2\nExecution errors: 0\n"
        "Mean score: 0.533 (3 quality tests, 0 execution errors excluded)"
    )


def test_summary_without_quality_tests_has_no_mean() -> None:
    summary = summarize_suite(SUITE, [run("r1", "t-1", ERROR)])
    assert summary.to_text() == (
        "Total tests: 1\nPassed: 0\nQuality failures: 0\nExecution errors: 1\n"
        "Mean score: n/a (0 quality tests, 1 execution error excluded)\n"
        "Execution errors by stage:\n  unknown: 1\nExecution errors by reason:\n  unknown: 1"
    )
    assert summary.to_dict()["mean_score"] is None
    assert summarize_suite(SUITE, []).to_dict()["total"] == 0


def test_breakdown_sorts_by_count_then_name_and_mean_rounds_half_up() -> None:
    records = [
        error("e1", "t-1", "teardown", "script_error"),
        error("e2", "t-2", "agent", "budget_exceeded"),
        error("e3", "t-3", "teardown", "script_error"),
        error("e4", "t-4", "agent", "provider_error"),
        error("e5", "t-5", "evaluator", "evaluator_error"),
        run("q1", "t-6", QUALITY, 0.125),
        run("q2", None, QUALITY, 0.0),
    ]
    text = summarize_suite(SUITE, records).to_text()
    assert text.endswith(
        "Mean score: 0.063 (2 quality tests, 5 execution errors excluded)\n"
        "Execution errors by stage:\n  agent: 2\n  teardown: 2\n  evaluator: 1\n"
        "Execution errors by reason:\n  script_error: 2\n  budget_exceeded: 1\n  evaluator_error: 1\n"
        "  provider_error: 1"
    )


def test_runs_without_task_id_are_tasks_of_their_own() -> None:
    records = [run("r1", None, OK, 0.9), run("r2", "", QUALITY, 0.1), run("r3", "r1", OK, 1.0)]
    summary = summarize_suite(SUITE, records)
    keys = [(task.task_id, task.run_ids) for task in summary.tasks]
    assert keys == [(None, ("r1",)), (None, ("r2",)), ("r1", ("r3",))]


def test_summary_refuses_runs_of_another_suite() -> None:
    with pytest.raises(ValueError, match="other-suite"):
        summarize_suite(SUITE, [RunOutcome("r1", "other-suite", "t-1", None, OK, 1.0)])


def test_records_accept_plain_status_strings() -> None:
    assert RunOutcome("r1", SUITE, "t-1", None, "quality_failure", 0.3).status is QUALITY  # type: ignore[arg-type]


# --- execution errors never move a quality metric ------------------------------------------------

scores = st.floats(min_value=0, max_value=1, allow_nan=False)
task_ids = st.sampled_from(["t-0", "t-1", "t-2", "t-3", None])
trials = st.one_of(st.none(), st.integers(min_value=0, max_value=4))
stages = st.sampled_from([*STAGES, None])
reasons = st.sampled_from(["provider_error", "template_error", "clone_error", None])


ErrorFields = tuple[str | None, int | None, str | None, str | None]  # task_id, trial, stage, reason


def error_runs(prefix: str, drawn: list[ErrorFields]) -> list[RunOutcome]:
    return [
        run(f"{prefix}{i}", task, ERROR, 0.0, trial, stage, reason)
        for i, (task, trial, stage, reason) in enumerate(drawn)
    ]


@st.composite
def base_runs(draw: st.DrawFn) -> list[RunOutcome]:
    quality = draw(st.lists(st.tuples(task_ids, trials, scores), min_size=1, max_size=12))
    errors = draw(st.lists(st.tuples(task_ids, trials, stages, reasons), max_size=4))
    quality_runs = [
        run(f"q{i}", task, OK if score >= 0.8 else QUALITY, score, trial)
        for i, (task, trial, score) in enumerate(quality)
    ]
    return quality_runs + error_runs("e", errors)


@st.composite
def added_errors(draw: st.DrawFn, base: list[RunOutcome]) -> list[RunOutcome]:
    """Execution errors on new tasks, on lone runs, or as extra trials of tasks with a non-error trial."""
    tasks_with_quality = sorted({r.task_id for r in base if r.status != ERROR and r.task_id})
    targets = st.sampled_from([*tasks_with_quality, "new-0", "new-1", None])
    return error_runs("x", draw(st.lists(st.tuples(targets, trials, stages, reasons), min_size=1, max_size=8)))


def quality_metrics(records: list[RunOutcome]) -> dict[str, Any]:
    summary: SuiteSummary = summarize_suite(SUITE, records)
    quality_tasks = [task for task in summary.tasks if task.status != ERROR]
    return {
        "mean_score": summary.mean_score,
        "median_score": median_of(quality_scores(summary.tasks)),
        "passed": summary.passed,
        "quality_failures": summary.quality_failures,
        "quality_tests": summary.quality_tests,
        "run_scores": sorted(quality_scores(records)),
        "tasks": sorted((task.task_id or task.run_ids[0], task.status, task.score) for task in quality_tasks),
        "mean_line": summary.to_text().splitlines()[4].split(" (")[0],
    }


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_adding_execution_errors_changes_no_quality_metric(data: st.DataObject) -> None:
    base = data.draw(base_runs())
    extended = data.draw(st.permutations([*base, *data.draw(added_errors(base))]))
    before, after = quality_metrics(base), quality_metrics(extended)
    assert after == before
    assert before["mean_score"] is not None and math.isfinite(before["mean_score"])


def _trial(task: str, trial: int, status: ExecutionStatus) -> RunOutcome:
    score = {ExecutionStatus.OK: 0.9, ExecutionStatus.QUALITY_FAILURE: 0.4, ExecutionStatus.EXECUTION_ERROR: 0.0}
    return RunOutcome(f"{task}-{trial}", "s", task, trial, status, score[status])


def test_flakiness_over_tasks_with_several_trials() -> None:
    """SPEC §7.1: tasks with 2+ trials that are not all execution errors; the text form is unchanged."""
    ok, failed, error = ExecutionStatus.OK, ExecutionStatus.QUALITY_FAILURE, ExecutionStatus.EXECUTION_ERROR
    trials = {
        "always": [ok, ok, error],  # every non-error trial ok
        "flaky": [ok, failed],
        "never": [failed, failed],
        "broken": [error, error],  # all execution errors: not counted
        "once": [failed],  # one trial: not counted
    }
    records = [_trial(task, n, status) for task, statuses in trials.items() for n, status in enumerate(statuses)]
    summary = summarize_suite("s", records)
    assert summary.flaky_tasks == ["flaky"]
    assert summary.pass_all_trials == 1 / 3 and summary.pass_any_trial == 2 / 3
    as_dict = summary.to_dict()
    assert (as_dict["flaky_tasks"], as_dict["pass_all_trials"], as_dict["pass_any_trial"]) == (["flaky"], 1 / 3, 2 / 3)
    assert "flaky" not in summary.to_text().lower()
    single = summarize_suite("s", [_trial("only", 0, ok)])
    assert (single.flaky_tasks, single.pass_all_trials, single.pass_any_trial) == ([], None, None)


# Each test below was written for a mutant of service/outcome.py that survived `make mutants` (docs/testing.md):
# with the change named in its docstring in place, it fails.


def _staged_error(**fields: Any) -> dict[str, Any]:
    return {"event": "error_event", "stage": "setup", "reason": "provider_error", **fields}


def test_a_staged_errors_message_is_its_first_text_or_integer() -> None:
    """`error`, else `message`; an integer is its digits, a bool or a list is not a text, "" is absent.
    Broken on purpose: `and` made `or` in the string test, or `not` dropped from the bool test → fails."""

    def message(**fields: Any) -> str | None:
        return classify_execution(None, [_staged_error(**fields)], 90, readiness=Readiness.READY).message

    assert message(error=7) == "7"
    assert message(error=True, message="quota") == "quota"
    assert message(error=["x"], message="quota") == "quota"
    assert message(error="", message="quota") == "quota"


def test_a_bad_reason_code_is_quoted_in_the_answer_and_another_type_named() -> None:
    """Broken on purpose: the `isinstance(value, str)` of the message negated → fails."""
    with pytest.raises(OutcomeInputError, match="got 'no spaces allowed'"):
        classify_execution(None, [_staged_error(reason="no spaces allowed")], 90, readiness=Readiness.READY)
    with pytest.raises(OutcomeInputError, match="got a list"):
        classify_execution(None, [_staged_error(reason=["x"])], 90, readiness=Readiness.READY)


def test_a_callers_score_of_zero_is_a_score() -> None:
    """[0, 1] is closed at 0. Broken on purpose: `0 <= score` made `0 < score` → fails."""
    outcome = classify_execution({"score": 0}, [], 90, readiness=Readiness.READY)
    assert (outcome.status, outcome.score) == (ExecutionStatus.QUALITY_FAILURE, 0)


def test_the_median_of_scores_and_of_none() -> None:
    """Broken on purpose: `if values` made `if not values` → fails."""
    assert median_of([0.9, 0.2, 0.4]) == 0.4
    assert median_of([]) is None


def test_a_task_without_task_id_is_named_by_its_run_and_trials_go_in_order() -> None:
    """Trial 0 comes before trial 1 whatever the order they arrive in, and a run without task id is a task
    named by its run. Broken on purpose: `run.trial or 0` made `or 1`, or `run_ids[0]` made `[1]` → fails."""
    late, early = (RunOutcome(f"r{n}", "s", "t", n, ExecutionStatus.OK, 0.5 + n / 10) for n in (1, 0))
    assert aggregate_task([late, early]).run_ids == ("r0", "r1")
    alone = RunOutcome("solo", "s", None, None, ExecutionStatus.OK, 1.0)
    assert aggregate_task([alone]).name == "solo"
