"""What a client sends, validated for storage: a run's identity and names, its events, its execution
object. Errors name the field (`sessions[1].identity`, `events[3].timestamp`)."""

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from service.diagnosis import Event, RunInput, normalize_events
from service.errors import FieldError, TooLarge
from service.ids import check_id, check_optional_id, check_run_id
from service.priority import in_turn
from service.settings import Settings
from service.store.records import RunRecord
from service.traces import TraceRun
from service.vocab import RunKind


@dataclass(frozen=True)
class RunSpec:
    identity: str
    run_id: str | None = None
    suite: str = ""
    task_id: str = ""
    trial: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    kind: str = RunKind.RUN


def new_run_id() -> str:
    return f"run_{uuid.uuid4().hex}"


class _NormalizedOnce:
    """For frozen dataclasses with `events` and `normalized`: fills `normalized` when the caller did not
    hand over the events parsing already normalized."""

    events: list[dict[str, Any]]
    normalized: list[Event] | None

    def __post_init__(self) -> None:
        if self.normalized is None:
            object.__setattr__(self, "normalized", normalize_events(self.events))

    @property
    def normalized_events(self) -> list[Event]:
        assert self.normalized is not None  # filled on construction
        return self.normalized


@dataclass(frozen=True)
class FinalizeRequest(_NormalizedOnce):
    """One run to finalize: its stored (open) record, the events to diagnose, the caller's execution object."""

    base: RunRecord
    events: list[dict[str, Any]]
    execution: dict[str, Any] | None = None
    session_performance: dict[str, Any] | None = None
    normalized: list[Event] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class SessionInput(_NormalizedOnce):
    """A whole run sent at once (POST /v1/sessions, `repute ingest`)."""

    spec: RunSpec
    events: list[dict[str, Any]]
    execution: dict[str, Any] | None = None
    session_performance: dict[str, Any] | None = None
    normalized: list[Event] | None = field(default=None, compare=False, repr=False)


def over_limit(holder: str, limit: int, unit: str, sent: str, setting: str, field: str = "") -> TooLarge:
    """A 413 naming the limit and the setting that moves it."""
    return TooLarge(
        f"{holder} holds at most {limit} {unit} ({sent}); the limit is the setting REPUTE_{setting.upper()}", field
    )


def check_run_size(events: int, max_events: int, field: str, stored: int = 0) -> None:
    if stored + events > max_events:
        sent = f"{stored} stored, {events} sent" if stored else f"{events} sent"
        raise over_limit("a run", max_events, "events", sent, "max_events_per_run", field)


def check_batch_size(runs: Sequence[RunInput], max_runs: int, max_events: int) -> None:
    """The runs of one request, and their events together, within their caps."""
    if len(runs) > max_runs:
        raise over_limit("a batch", max_runs, "runs", f"{len(runs)} sent", "max_runs_per_batch", "sessions")
    check_request_size(sum(len(run.events) for run in runs), max_events, field="sessions")


def check_request_size(items: int, max_items: int, unit: str = "events", field: str = "") -> None:
    if items > max_items:
        raise over_limit("a request", max_items, unit, f"{items} sent", "max_events_per_request", field)


def session_input(run: RunInput, field: str = "", max_events: int = 100_000) -> SessionInput:
    """Validates a parsed run for storage; errors name the field."""
    prefix = f"{field}." if field else ""
    if run.trial is not None and (isinstance(run.trial, bool) or not isinstance(run.trial, int) or run.trial < 0):
        raise FieldError(f"{prefix}trial", "trial must be a non-negative integer")
    check_run_size(len(run.events), max_events, f"{prefix}events")
    normalized = run.normalized if run.normalized is not None else normalize_events(run.events)
    spec = RunSpec(
        identity=check_id(run.identity, f"{prefix}identity"),
        run_id=check_run_id(run.run_id, f"{prefix}run_id") if run.run_id else None,
        suite=check_optional_id(run.suite, f"{prefix}suite"),
        task_id=check_optional_id(run.task_id, f"{prefix}task_id"),
        trial=run.trial,
        metadata=run.metadata or {},
    )
    return SessionInput(spec, list(run.events), run.execution, normalized=normalized)


def session_inputs(runs: Sequence[RunInput], settings: Settings) -> list[SessionInput]:
    """The runs of one request validated for storage, within the request's caps; errors name the
    run (`sessions[2].identity`) when there are several."""
    check_batch_size(runs, settings.max_runs_per_batch, settings.max_events_per_request)

    def checked(indexed: tuple[int, RunInput]) -> SessionInput:
        index, run = indexed
        return session_input(run, f"sessions[{index}]" if len(runs) > 1 else "", settings.max_events_per_run)

    return in_turn(checked, enumerate(runs))


UNKNOWN_IDENTITY = "unknown"


def safe_identity(identity: str | None) -> str:
    """An identity read from telemetry: one that is not a valid identifier is `unknown`, never an error."""
    try:
        return check_id(identity, "identity")
    except FieldError:
        return UNKNOWN_IDENTITY


def safe_name(value: str | None) -> str:
    """A suite or task id read from telemetry; one that is not a valid identifier is left out."""
    try:
        return check_id(value, "name") if value else ""
    except FieldError:
        return ""


@dataclass
class Received:
    """What an OTLP request did: OTLP reports the rejected items and why (partial success)."""

    accepted: int = 0
    rejected: int = 0
    reasons: list[str] = field(default_factory=list)

    def reject(self, count: int, reason: str) -> None:
        if count:
            self.rejected += count
            self.reasons.append(reason)


def trace_spec(mapped: TraceRun) -> RunSpec:
    """A trace-born run's names as its spans give them (SPEC §3.4); unusable values are left out."""
    trial = mapped.trial if mapped.trial is not None and mapped.trial >= 0 else None
    return RunSpec(
        identity=safe_identity(mapped.identity),
        run_id=mapped.run_id,
        suite=safe_name(mapped.suite),
        task_id=safe_name(mapped.task_id),
        trial=trial,
        kind=RunKind.TRACE,
    )
