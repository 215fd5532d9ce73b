"""What a client sends, validated for storage: a run's identity and names, its events, its execution
object. Errors name the field (`sessions[1].identity`, `events[3].timestamp`)."""

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from service.diagnosis import Event, RunInput, normalize_events
from service.errors import FieldError
from service.ids import check_id, check_optional_id, check_run_id
from service.store.records import RunRecord
from service.vocab import EARLIEST_MS, LATEST_MS, TIME_RULE, RunKind


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


def storable_ms(ms: int) -> bool:
    return EARLIEST_MS <= ms < LATEST_MS


def check_event_times(events: Sequence[Event], prefix: str = "") -> None:
    """Every timestamp must be storable; the error names the first event that is not."""
    for index, event in enumerate(events):
        ms = event.timestamp_ms
        if ms is not None and not storable_ms(ms):
            raise FieldError(f"{prefix}events[{index}].timestamp", f"timestamp must lie {TIME_RULE}")


def session_input(run: RunInput, field: str = "", max_events: int = 100_000) -> SessionInput:
    """Validates a parsed run for storage; errors name the field."""
    prefix = f"{field}." if field else ""
    if run.trial is not None and (isinstance(run.trial, bool) or not isinstance(run.trial, int) or run.trial < 0):
        raise FieldError(f"{prefix}trial", "trial must be a non-negative integer")
    if len(run.events) > max_events:
        raise FieldError(f"{prefix}events", f"a run holds at most {max_events} events ({len(run.events)} sent)")
    normalized = run.normalized if run.normalized is not None else normalize_events(run.events)
    check_event_times(normalized, prefix)
    spec = RunSpec(
        identity=check_id(run.identity, f"{prefix}identity"),
        run_id=check_run_id(run.run_id, f"{prefix}run_id") if run.run_id else None,
        suite=check_optional_id(run.suite, f"{prefix}suite"),
        task_id=check_optional_id(run.task_id, f"{prefix}task_id"),
        trial=run.trial,
        metadata=run.metadata or {},
    )
    return SessionInput(spec, list(run.events), run.execution, normalized=normalized)
