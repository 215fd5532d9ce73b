"""Execution outcome (SPEC §6): run classification, trial aggregation, suite summary.

Pure logic: no I/O, no clock. An execution error is infrastructure, not the agent: it keeps score 0 on
its record and is left out of every quality metric.

Decisions where the spec is silent:
- Caller's `execution.status` "ok" / "quality_failure" is validated but not authoritative: only
  "execution_error" overrides; otherwise the run's staged `error_event`s, then the score, decide.
- Several staged `error_event`s in one run: the first one names the failure, because later ones are
  usually its consequences (setup fails, so the agent and the evaluator fail too).
- `error_event`s whose `stage` is not a known stage are ordinary errors (the diagnosis counts them), not
  execution errors.
- Trial order inside a task: by `trial` number; runs without one come after the numbered ones, in input
  order (pass records oldest first). A task's "last trial" is the last in that order.
- A run without `task_id` is a task of its own, keyed by its run_id.
- An execution-error task has score 0.0, like its records; quality metrics filter on status.
- An execution-error task without stage or reason shows "unknown" there, so the breakdowns add up.
- Text form: "Mean score: n/a" when there is no quality test; "by stage"/"by reason" sections are omitted
  when there is no execution error; the mean is rounded half up; counts in the parenthesis are
  pluralised ("1 quality test"); no trailing newline.
"""

import math
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum
from typing import Any, NamedTuple, Protocol


class ExecutionStatus(StrEnum):
    OK = "ok"
    QUALITY_FAILURE = "quality_failure"
    EXECUTION_ERROR = "execution_error"


KNOWN_STAGES: tuple[str, ...] = ("setup", "repo_setup", "agent", "evaluator", "teardown")
# Open-ended: any other reason code is accepted as given.
KNOWN_REASON_CODES: tuple[str, ...] = (
    "provider_error", "template_error", "script_error", "clone_error", "evaluator_error", "budget_exceeded",
    "toolchain_missing",
)  # fmt: skip
DEFAULT_PASS_THRESHOLD = 0.8
UNKNOWN = "unknown"


class OutcomeInputError(ValueError):
    """The caller's `execution` object is invalid; `field` names the offending path, e.g. 'execution.score'."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class ExecutionOutcome:
    status: ExecutionStatus
    score: float  # in [0, 1]; 0.0 for an execution error
    stage: str | None = None
    reason_code: str | None = None
    message: str | None = None


# --- classification of one run ---------------------------------------------------------------------


def classify_execution(
    execution: Mapping[str, Any] | None,
    events: Iterable[Mapping[str, Any]],
    trust_score: int,
    pass_threshold: float = DEFAULT_PASS_THRESHOLD,
) -> ExecutionOutcome:
    """The caller's execution error, else the run's own staged error, else pass/fail on the score.

    Raises OutcomeInputError when the caller's `execution` object is invalid."""
    caller = _validated_execution(execution)
    if caller.status == ExecutionStatus.EXECUTION_ERROR:
        return _execution_error(caller.stage, caller.reason, caller.message)
    staged = _first_staged_error(events)
    if staged is not None:
        return staged
    score = trust_score / 100 if caller.score is None else caller.score
    status = ExecutionStatus.OK if score >= pass_threshold else ExecutionStatus.QUALITY_FAILURE
    return ExecutionOutcome(status, score)


@dataclass(frozen=True)
class _CallerExecution:
    status: str | None = None
    stage: str | None = None
    reason: str | None = None
    message: str | None = None
    score: float | None = None


def _validated_execution(execution: Mapping[str, Any] | None) -> _CallerExecution:
    if execution is None:
        return _CallerExecution()
    if not isinstance(execution, Mapping):
        raise OutcomeInputError("execution", "execution must be an object")
    texts = {key: _validated_text(execution, key) for key in ("stage", "reason", "message")}
    score = execution.get("score")
    return _CallerExecution(
        status=_validated_status(execution.get("status")),
        score=None if score is None else _validated_score(score),
        **texts,
    )


def _validated_status(status: Any) -> str | None:
    if status is not None and status not in tuple(ExecutionStatus):
        allowed = ", ".join(ExecutionStatus)
        raise OutcomeInputError("execution.status", f"execution.status must be one of {allowed}; got {status!r}")
    return status


def _validated_text(execution: Mapping[str, Any], key: str) -> str | None:
    value = execution.get(key)
    if value is not None and not isinstance(value, str):
        raise OutcomeInputError(f"execution.{key}", f"execution.{key} must be a string")
    return value


def _validated_score(score: Any) -> float:
    # bool is an int subclass; NaN fails the range check.
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        raise OutcomeInputError("execution.score", f"execution.score must be a number in [0, 1]; got {score!r}")
    return float(score)


def _first_staged_error(events: Iterable[Mapping[str, Any]]) -> ExecutionOutcome | None:
    for event in events:
        if isinstance(event, Mapping) and _is_staged_error(event):
            reason = _first_text(event, ("reason", "code"))
            return _execution_error(event["stage"], reason, _first_text(event, ("error", "message")))
    return None


def _is_staged_error(event: Mapping[str, Any]) -> bool:
    return _event_type(event) == "error_event" and event.get("stage") in KNOWN_STAGES


def _event_type(event: Mapping[str, Any]) -> Any:
    kind = event.get("event")
    return event.get("type") if kind is None else kind


def _first_text(event: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    """The first non-empty string (or integer, e.g. a numeric `code`) among `keys`."""
    for key in keys:
        value = event.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if isinstance(value, str) and value:
            return value
    return None


def _execution_error(stage: str | None, reason_code: str | None, message: str | None) -> ExecutionOutcome:
    return ExecutionOutcome(ExecutionStatus.EXECUTION_ERROR, 0.0, stage or None, reason_code or None, message or None)


# --- quality metrics -----------------------------------------------------------------------------


class Scored(Protocol):
    @property
    def status(self) -> ExecutionStatus: ...

    @property
    def score(self) -> float: ...


def quality_scores(items: Iterable[Scored]) -> list[float]:
    """Scores of runs or tasks that are not execution errors: the only input to quality metrics."""
    return [item.score for item in items if item.status != ExecutionStatus.EXECUTION_ERROR]


def mean_of(scores: Iterable[float]) -> float | None:
    values = list(scores)
    # fsum: the mean does not depend on the order of the scores.
    return math.fsum(values) / len(values) if values else None


def median_of(scores: Iterable[float]) -> float | None:
    values = list(scores)
    return statistics.median(values) if values else None


# --- trial aggregation ---------------------------------------------------------------------------


def aggregate_trials(statuses: Iterable[ExecutionStatus | str]) -> ExecutionStatus:
    """Any ok -> ok; all execution errors -> execution error; else quality failure."""
    seen = {ExecutionStatus(status) for status in statuses}
    if not seen:
        raise ValueError("a task has at least one trial")
    if ExecutionStatus.OK in seen:
        return ExecutionStatus.OK
    if seen == {ExecutionStatus.EXECUTION_ERROR}:
        return ExecutionStatus.EXECUTION_ERROR
    return ExecutionStatus.QUALITY_FAILURE


@dataclass(frozen=True)
class RunOutcome:
    """One finalized run as the summary sees it. `task_id` "" or None: the run is a task of its own."""

    run_id: str
    suite: str
    task_id: str | None
    trial: int | None
    status: ExecutionStatus
    score: float
    stage: str | None = None
    reason_code: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", ExecutionStatus(self.status))


@dataclass(frozen=True)
class TaskOutcome:
    task_id: str | None  # None for a run without task_id
    run_ids: tuple[str, ...]  # in trial order
    status: ExecutionStatus
    score: float  # mean over trials that are not execution errors; 0.0 for an execution-error task
    stage: str | None
    reason_code: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "runs": list(self.run_ids),
            "trials": len(self.run_ids),
            "status": str(self.status),
            "score": self.score,
            "stage": self.stage,
            "reason_code": self.reason_code,
        }


class _TaskKey(NamedTuple):
    task_id: str  # "" when the run has none
    run_id: str  # "" when the task has a task_id


def _task_key(record: RunOutcome) -> _TaskKey:
    return _TaskKey(record.task_id, "") if record.task_id else _TaskKey("", record.run_id)


def _in_trial_order(trials: list[RunOutcome]) -> list[RunOutcome]:
    return sorted(trials, key=lambda run: (run.trial is None, run.trial or 0))


def aggregate_task(trials: list[RunOutcome]) -> TaskOutcome:
    """One task from its trials (any order: they are put in trial order here)."""
    ordered = _in_trial_order(trials)
    status = aggregate_trials(run.status for run in ordered)
    last = ordered[-1]
    is_error = status == ExecutionStatus.EXECUTION_ERROR
    mean = mean_of(quality_scores(ordered))
    return TaskOutcome(
        task_id=last.task_id or None,
        run_ids=tuple(run.run_id for run in ordered),
        status=status,
        score=0.0 if mean is None else mean,
        stage=(last.stage or UNKNOWN) if is_error else None,
        reason_code=(last.reason_code or UNKNOWN) if is_error else None,
    )


# --- suite summary -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SuiteSummary:
    suite: str
    tasks: tuple[TaskOutcome, ...]  # sorted: runs without task_id (by run_id) first, then by task_id

    def _count(self, status: ExecutionStatus) -> int:
        return sum(task.status == status for task in self.tasks)

    @property
    def passed(self) -> int:
        return self._count(ExecutionStatus.OK)

    @property
    def quality_failures(self) -> int:
        return self._count(ExecutionStatus.QUALITY_FAILURE)

    @property
    def execution_errors(self) -> int:
        return self._count(ExecutionStatus.EXECUTION_ERROR)

    @property
    def quality_tests(self) -> int:
        return len(self.tasks) - self.execution_errors

    @property
    def mean_score(self) -> float | None:
        return mean_of(quality_scores(self.tasks))

    @property
    def by_stage(self) -> dict[str, int]:
        return _breakdown(task.stage for task in self.tasks if task.stage is not None)

    @property
    def by_reason(self) -> dict[str, int]:
        return _breakdown(task.reason_code for task in self.tasks if task.reason_code is not None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "total": len(self.tasks),
            "passed": self.passed,
            "quality_failures": self.quality_failures,
            "execution_errors": self.execution_errors,
            "mean_score": self.mean_score,
            "quality_tests": self.quality_tests,
            "by_stage": self.by_stage,
            "by_reason": self.by_reason,
            "tasks": [task.to_dict() for task in self.tasks],
        }

    def to_text(self) -> str:
        lines = [
            f"Total tests: {len(self.tasks)}",
            f"Passed: {self.passed}",
            f"Quality failures: {self.quality_failures}",
            f"Execution errors: {self.execution_errors}",
            f"Mean score: {_three_decimals(self.mean_score)} ({_plural(self.quality_tests, 'quality test')}, "
            f"{_plural(self.execution_errors, 'execution error')} excluded)",
        ]
        lines += _breakdown_lines("Execution errors by stage:", self.by_stage)
        lines += _breakdown_lines("Execution errors by reason:", self.by_reason)
        return "\n".join(lines)


def summarize_suite(suite: str, records: Iterable[RunOutcome]) -> SuiteSummary:
    """Per-task outcomes after trial aggregation. Records must all belong to `suite`."""
    trials_by_task: dict[_TaskKey, list[RunOutcome]] = {}
    for record in records:
        if record.suite != suite:
            raise ValueError(f"run {record.run_id!r} belongs to suite {record.suite!r}, not {suite!r}")
        trials_by_task.setdefault(_task_key(record), []).append(record)
    tasks = tuple(aggregate_task(trials_by_task[key]) for key in sorted(trials_by_task))
    return SuiteSummary(suite, tasks)


def _breakdown(names: Iterable[str]) -> dict[str, int]:
    """Counts by name, largest count first, then by name."""
    return dict(sorted(Counter(names).items(), key=lambda item: (-item[1], item[0])))


def _breakdown_lines(title: str, counts: dict[str, int]) -> list[str]:
    return [title, *(f"  {name}: {count}" for name, count in counts.items())] if counts else []


def _three_decimals(value: float | None) -> str:
    if value is None:
        return "n/a"
    # Half up on the shortest decimal form, as a person rounds: 0.0625 -> 0.063 (format() gives 0.062).
    return str(Decimal(repr(value)).quantize(Decimal("0.001"), rounding=ROUND_HALF_UP))


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
