"""What a client sends, validated for storage: a run's identity and names, its events, its execution
object. Errors name the field (`sessions[1].identity`, `events[3].timestamp`)."""

import uuid
from dataclasses import dataclass, field
from typing import Any

from service.diagnosis import Event, RunInput, normalize_events
from service.errors import FieldError
from service.ids import check_id, check_optional_id
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


def session_input(run: RunInput, field: str = "", max_events: int = 100_000) -> SessionInput:
    """Validates a parsed run for storage; errors name the field."""
    prefix = f"{field}." if field else ""
    if run.trial is not None and (isinstance(run.trial, bool) or not isinstance(run.trial, int) or run.trial < 0):
        raise FieldError(f"{prefix}trial", "trial must be a non-negative integer")
    if len(run.events) > max_events:
        raise FieldError(f"{prefix}events", f"a run holds at most {max_events} events ({len(run.events)} sent)")
    normalized = run.normalized if run.normalized is not None else normalize_events(run.events)
    spec = RunSpec(
        identity=check_id(run.identity, f"{prefix}identity"),
        run_id=check_optional_id(run.run_id, f"{prefix}run_id") or None,
        suite=check_optional_id(run.suite, f"{prefix}suite"),
        task_id=check_optional_id(run.task_id, f"{prefix}task_id"),
        trial=run.trial,
        metadata=run.metadata or {},
    )
    return SessionInput(spec, list(run.events), run.execution, normalized=normalized)


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
