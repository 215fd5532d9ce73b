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
- Event types are read by the diagnosis's own reader (`diagnosis.events.event_type_of`): "ERROR_EVENT"
  and "Error_Event" are error_events here exactly when the diagnosis counts them as errors.
- Stages match case-insensitively and are recorded in lowercase ("SETUP" is `setup`). The caller's
  `execution.stage`, when given, must be one of `vocab.STAGES` (whatever the status): OutcomeInputError.
- Reason codes are identifiers: 1-64 ASCII characters of `[A-Za-z0-9_.:-]`, recorded in lowercase so
  that "Provider_Error" and "provider_error" are one reason in every breakdown. Anything else (a space,
  a line break, a non-ASCII letter) is an OutcomeInputError naming the field (`execution.reason`,
  `events[i].reason`, `events[i].code`): no report or summary can be made to print a forged line. An
  integer `code` (an exit status) reads as its decimal text; null or "" counts as absent (then `code`).
- Every staged `error_event`'s reason is validated, not only the first one's, and whether or not the
  caller declared the execution error: a run with an unreadable reason is rejected as a whole.
- Messages (`execution.message`, an error_event's `error`/`message`) are free text kept as given;
  whatever prints one escapes its control characters (`printable`).
- When the score comes from the diagnosis (no caller `execution.score`), an `unsafe_for_production`
  run is a quality failure whatever its trust (SPEC §6); a caller's score decides alone, as the caller
  judged the run by its own measure.
- Trial order inside a task: by `trial` number; runs without one come after the numbered ones, in input
  order (pass records oldest first). A task's "last trial" is the last in that order.
- A run without `task_id` is a task of its own, keyed by its run_id.
- An execution-error task has score 0.0, like its records; quality metrics filter on status.
- An execution-error task without stage or reason shows "unknown" there, so the breakdowns add up.
- Flakiness (SPEC §7.1): `flaky_tasks` lists task names (the task id, or the run id of a run without
  one) in the summary's task order; `pass_all_trials` / `pass_any_trial` are exact fractions of the
  repeated tasks, null when the suite has none.
- Text form: "Mean score: n/a" when there is no quality test; "by stage"/"by reason" sections are omitted
  when there is no execution error; the mean is rounded half up; counts in the parenthesis are
  pluralised ("1 quality test"); no trailing newline. A stage or reason with a non-printable character
  (a record stored before reasons were validated) is printed escaped, never as a line break.
"""

import math
import re
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, NamedTuple, Protocol

from service.diagnosis.events import event_type_of
from service.errors import FieldError
from service.vocab import STAGES, ExecutionStatus, Readiness

__all__ = [
    "DEFAULT_PASS_THRESHOLD", "REASON_PATTERN", "REASON_RULE", "UNKNOWN", "ExecutionOutcome", "ExecutionStatus",
    "OutcomeInputError", "RunOutcome", "SuiteSummary", "TaskOutcome", "aggregate_task", "aggregate_trials",
    "check_outcome_inputs", "classify_execution", "mean_of", "median_of", "printable", "quality_scores",
    "summarize_suite", "three_decimals", "validated_reason", "validated_stage",
]  # fmt: skip

DEFAULT_PASS_THRESHOLD = 0.8
UNKNOWN = "unknown"
ERROR_EVENT = "error_event"
REASON_PATTERN = r"[A-Za-z0-9_.:-]{1,64}"
_REASON = re.compile(REASON_PATTERN, re.ASCII)
REASON_RULE = "1-64 characters of [a-z0-9_.:-]"


class OutcomeInputError(FieldError):
    """The caller's `execution` object (or a staged error_event) is invalid (422); `field` names the
    offending path, e.g. 'execution.score' or 'events[3].reason'."""


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
    *,
    readiness: str,
) -> ExecutionOutcome:
    """The caller's execution error, else the run's own staged error, else pass/fail on the score.

    `trust_score` and `readiness` are the diagnosis's (`readiness_level`): with no caller score, an
    unsafe run fails whatever its trust. Raises OutcomeInputError when the caller's `execution` object,
    or the stage or reason of a staged error_event, is invalid."""
    verdict = Readiness(readiness)
    caller = _validated_execution(execution)
    staged = _first_staged_error(events)
    if caller.status == ExecutionStatus.EXECUTION_ERROR:
        return _execution_error(caller.stage, caller.reason, caller.message)
    if staged is not None:
        return staged
    if caller.score is None:
        score = trust_score / 100
        passed = score >= pass_threshold and verdict != Readiness.UNSAFE
    else:
        score = caller.score
        passed = score >= pass_threshold
    return ExecutionOutcome(ExecutionStatus.OK if passed else ExecutionStatus.QUALITY_FAILURE, score)


def check_outcome_inputs(execution: Mapping[str, Any] | None, events: Iterable[Mapping[str, Any]]) -> None:
    """Raises the OutcomeInputError that `classify_execution` would raise for this execution object and
    these events, so a run is refused before anything of it is stored, never at its finalize."""
    _validated_execution(execution)
    _first_staged_error(events)


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
    stage = _validated_text(execution, "stage")
    reason = _validated_text(execution, "reason")
    score = execution.get("score")
    return _CallerExecution(
        status=_validated_status(execution.get("status")),
        stage=None if not stage else validated_stage(stage, "execution.stage"),
        reason=None if not reason else validated_reason(reason, "execution.reason"),
        message=_validated_text(execution, "message"),
        score=None if score is None else _validated_score(score),
    )


def _validated_status(status: Any) -> str | None:
    if status is not None and status not in tuple(ExecutionStatus):
        allowed = ", ".join(ExecutionStatus)
        raise OutcomeInputError("execution.status", f"execution.status must be one of {allowed}; got {status!r:.80}")
    return status


def _validated_text(execution: Mapping[str, Any], key: str) -> str | None:
    value = execution.get(key)
    if value is not None and not isinstance(value, str):
        raise OutcomeInputError(f"execution.{key}", f"execution.{key} must be a string")
    return value


def validated_stage(stage: str, field: str) -> str:
    """A stage as recorded (lowercase); `field` names the place of `stage` for the OutcomeInputError."""
    known = _known_stage(stage)
    if known is None:
        allowed = ", ".join(STAGES)
        raise OutcomeInputError(field, f"{field} must be one of {allowed}; got {stage!r:.80}")
    return known


def _known_stage(stage: Any) -> str | None:
    """The stage in its recorded (lowercase) form, or None when it is not one of `vocab.STAGES`."""
    if not isinstance(stage, str):
        return None
    lowered = stage.lower()
    return lowered if lowered in STAGES else None


def validated_reason(value: Any, field: str) -> str:
    """A reason code as recorded: validated (see the decisions above), in lowercase. `field` names the
    place of `value` for the OutcomeInputError."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not _REASON.fullmatch(value):
        shown = f"{value!r:.80}" if isinstance(value, str) else "a " + type(value).__name__
        raise OutcomeInputError(field, f"{field} must be a reason code ({REASON_RULE}); got {shown}")
    return value.lower()


def _validated_score(score: Any) -> float:
    # bool is an int subclass; NaN fails the range check.
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        raise OutcomeInputError("execution.score", f"execution.score must be a number in [0, 1]; got {score!r:.80}")
    return float(score)


def _first_staged_error(events: Iterable[Mapping[str, Any]]) -> ExecutionOutcome | None:
    """The first staged error_event as an execution error; every staged one's reason is validated."""
    first = None
    for position, event in enumerate(events):
        # A parsed event is a dict: the class check spares it the slower check of an abstract class.
        readable = event.__class__ is dict or isinstance(event, Mapping)
        if not readable or event_type_of(event, position) != ERROR_EVENT:
            continue
        stage = _known_stage(event.get("stage"))
        if stage is None:
            continue
        reason = _event_reason(event, position)
        if first is None:
            first = _execution_error(stage, reason, _first_text(event, ("error", "message")))
    return first


def _event_reason(event: Mapping[str, Any], position: int) -> str | None:
    """`reason`, else `code` (null or "" count as absent), validated as a reason code."""
    for key in ("reason", "code"):
        value = event.get(key)
        if value is not None and value != "":
            return validated_reason(value, f"events[{position}].{key}")
    return None


def _first_text(event: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    """The first non-empty string (or integer) among `keys`."""
    for key in keys:
        value = event.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if isinstance(value, str) and value:
            return value
    return None


def _execution_error(stage: str | None, reason_code: str | None, message: str | None) -> ExecutionOutcome:
    return ExecutionOutcome(ExecutionStatus.EXECUTION_ERROR, 0.0, stage or None, reason_code or None, message or None)


def printable(text: str) -> str:
    """`text` with its non-printable characters (line breaks, escapes, controls) written as Python
    escapes, so that it always prints as one harmless piece of a line."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


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
    trial_statuses: tuple[ExecutionStatus, ...] = ()  # in trial order

    @property
    def name(self) -> str:
        """The task id, or the run id of a run without one."""
        return self.task_id or self.run_ids[0]

    @property
    def repeated(self) -> bool:
        """Two or more trials, not all execution errors: the tasks flakiness is measured on (SPEC §7.1)."""
        return len(self.trial_statuses) >= 2 and self.status != ExecutionStatus.EXECUTION_ERROR

    @property
    def quality_trials(self) -> list[ExecutionStatus]:
        return [status for status in self.trial_statuses if status != ExecutionStatus.EXECUTION_ERROR]

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
        trial_statuses=tuple(run.status for run in ordered),
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

    @property
    def flaky_tasks(self) -> list[str]:
        """Repeated tasks with some trial ok and some a quality failure."""
        return [
            task.name
            for task in self.tasks
            if task.repeated and {ExecutionStatus.OK, ExecutionStatus.QUALITY_FAILURE} <= set(task.quality_trials)
        ]

    def _share_of_repeated(self, passes: Callable[[list[ExecutionStatus]], bool]) -> float | None:
        repeated = [task for task in self.tasks if task.repeated]
        if not repeated:
            return None
        return sum(passes(task.quality_trials) for task in repeated) / len(repeated)

    @property
    def pass_all_trials(self) -> float | None:
        """Share of repeated tasks whose every trial that is not an execution error is ok."""
        return self._share_of_repeated(lambda trials: all(s == ExecutionStatus.OK for s in trials))

    @property
    def pass_any_trial(self) -> float | None:
        """Share of repeated tasks with at least one ok trial."""
        return self._share_of_repeated(lambda trials: ExecutionStatus.OK in trials)

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
            "flaky_tasks": self.flaky_tasks,
            "pass_all_trials": self.pass_all_trials,
            "pass_any_trial": self.pass_any_trial,
            "tasks": [task.to_dict() for task in self.tasks],
        }

    def to_text(self) -> str:
        lines = [
            f"Total tests: {len(self.tasks)}",
            f"Passed: {self.passed}",
            f"Quality failures: {self.quality_failures}",
            f"Execution errors: {self.execution_errors}",
            f"Mean score: {three_decimals(self.mean_score)} ({_plural(self.quality_tests, 'quality test')}, "
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
    return [title, *(f"  {printable(name)}: {count}" for name, count in counts.items())] if counts else []


def three_decimals(value: float | None) -> str:
    if value is None:
        return "n/a"
    # Half up on the shortest decimal form, as a person rounds: 0.0625 -> 0.063 (format() gives 0.062).
    return str(Decimal(repr(value)).quantize(Decimal("0.001"), rounding=ROUND_HALF_UP))


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
