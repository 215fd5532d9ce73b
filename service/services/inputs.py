"""What a client sends, validated for storage: a run's identity and names, its events, its execution
object. Errors name the field (`sessions[1].identity`, `events[3].timestamp`).

A run's own fields and its execution object are read by the pydantic models below, and by nothing
else: the OpenAPI schema of every route that takes a run is generated from them, so the published
contract and the code that runs are one reading of a request. Every number is bounded by what its
column holds.
"""

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema

from service.diagnosis import RunInput, normalize_events
from service.errors import FieldError, TooLarge, field_path
from service.ids import Identifier, ProfileName, RunIdentifier, check_id
from service.model import RunHeader, RunMaterial, RunRecord
from service.outcome import REASON_PATTERN, OutcomeInputError, check_outcome_inputs
from service.priority import stepping_aside
from service.settings import Settings
from service.traces import TraceRun
from service.vocab import STAGES, ExecutionStatus, RunKind

MAX_TRIAL = 1_000_000  # far below the column's UInt32


def _known_stage(value: str) -> str:
    if value.lower() not in STAGES:
        raise ValueError(f"must be one of {', '.join(STAGES)} (any case)")
    return value


Stage = Annotated[str, AfterValidator(_known_stage), WithJsonSchema({"type": "string", "enum": list(STAGES)})]


class Execution(BaseModel):
    """The caller's execution object (SPEC §6); other keys are allowed and ignored."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    status: ExecutionStatus | None = None
    stage: Stage | None = None
    reason: str | None = Field(default=None, pattern=f"^{REASON_PATTERN}$", description="a reason code")
    message: str | None = Field(default=None, max_length=4096)
    score: float | None = Field(default=None, ge=0, le=1, strict=True, description="in [0, 1]; decides pass/fail")


class RunFields(BaseModel):
    """A run's own fields (SPEC §3.1): the body of POST /v1/runs, and each run of POST /v1/sessions."""

    model_config = ConfigDict(
        extra="forbid",
        allow_inf_nan=False,
        json_schema_extra={"examples": [{"identity": "agent-atlas", "suite": "customs-evals", "task_id": "t-01"}]},
    )

    run_id: RunIdentifier | None = Field(default=None, description="generated when absent")
    identity: Identifier = Field(description="the agent whose reputation this run affects")
    suite: Identifier | None = None
    task_id: Identifier | None = None
    trial: int | None = Field(default=None, ge=0, le=MAX_TRIAL, strict=True)
    metadata: dict[str, Any] = Field(default_factory=dict)
    profile: ProfileName | None = Field(
        default=None, description="the diagnosis profile to judge the run under (SPEC §4.1); default: the rules'"
    )
    parent_run_id: RunIdentifier | None = Field(
        default=None, description="the run of this tenant that this one is part of (SPEC §3.5: multi-agent runs)"
    )


def _identity_or_alias(schema: dict[str, Any]) -> None:
    """A session body names its agent by `identity` or by its alias `agent_id` (SPEC §3.1): the schema requires
    one of them, as the server does, instead of `identity` alone."""
    schema["required"] = [name for name in schema["required"] if name != "identity"]
    schema["anyOf"] = [{"required": ["identity"]}, {"required": ["agent_id"]}]
    schema["examples"] = [
        {
            "run_id": "run-clean-001",
            "identity": "agent-atlas",
            "events": [{"event": "tool_call", "tool": "search", "args": {"q": "tariff code 8471"}}],
        }
    ]


class SessionBody(RunFields):
    """A whole run in one request (SPEC §3.1 object form): its fields, execution object and events."""

    model_config = ConfigDict(
        extra="allow",
        allow_inf_nan=False,
        json_schema_extra=_identity_or_alias,
    )

    agent_id: Identifier | None = Field(default=None, description="an alias of identity")
    execution: Execution | None = None
    events: list[dict[str, Any]]


def validated(model: type[BaseModel], values: Mapping[str, Any], prefix: str = "") -> BaseModel:
    """`values` read by `model`; the first error is a FieldError naming its field under `prefix`."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        message = error["msg"].removeprefix("Value error, ")
        raise FieldError(prefix + field_path(error["loc"]), message) from None


def new_run_id() -> str:
    return f"run_{uuid.uuid4().hex}"


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


def header_of_fields(fields: RunFields) -> RunHeader:
    return RunHeader(
        identity=fields.identity,
        run_id=fields.run_id,
        suite=fields.suite or "",
        task_id=fields.task_id or "",
        trial=fields.trial,
        metadata=fields.metadata,
        profile=fields.profile or "",
        parent_run_id=fields.parent_run_id or "",
    )


def material_of(run: RunInput, field: str = "", max_events: int = 100_000) -> RunMaterial:
    """A parsed run validated for storage: its fields by the API's own models, its execution object by
    `Execution`, its staged errors classifiable (SPEC §6); errors name the field. Its events were
    normalized by the parser, once."""
    prefix = f"{field}." if field else ""
    check_run_size(len(run.events), max_events, f"{prefix}events")
    normalized = run.normalized if run.normalized is not None else normalize_events(run.events)
    sent = {"identity": run.identity, "run_id": run.run_id or None, "suite": run.suite or None,
            "task_id": run.task_id or None, "trial": run.trial, "metadata": run.metadata or {},
            "profile": run.profile or None, "parent_run_id": run.parent_run_id or None}  # fmt: skip
    fields = validated(RunFields, sent, prefix)
    assert isinstance(fields, RunFields)
    if run.execution is not None:
        validated(Execution, run.execution, f"{prefix}execution.")
    check_staged_errors(run.events, prefix)
    return RunMaterial(header_of_fields(fields), normalized, run.execution)


def check_staged_errors(events: Sequence[Mapping[str, Any]], prefix: str = "") -> None:
    """Refuses, before anything is stored, a staged error_event that cannot be classified (SPEC §6): the
    run's finalize would fail on it."""
    try:
        check_outcome_inputs(None, events)
    except OutcomeInputError as exc:
        raise OutcomeInputError(prefix + exc.field, str(exc)) from None


def materials_of(runs: Sequence[RunInput], settings: Settings) -> list[RunMaterial]:
    """The runs of one request validated for storage, within the request's caps; errors name the
    run (`sessions[2].identity`) when there are several."""
    check_batch_size(runs, settings.max_runs_per_batch, settings.max_events_per_request)

    def checked(indexed: tuple[int, RunInput]) -> RunMaterial:
        index, run = indexed
        return material_of(run, f"sessions[{index}]" if len(runs) > 1 else "", settings.max_events_per_run)

    return stepping_aside(checked, enumerate(runs))


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
    warnings: list[str] = field(default_factory=list)  # about items accepted all the same

    def reject(self, count: int, reason: str) -> None:
        if count:
            self.rejected += count
            self.reasons.append(reason)

    @property
    def message(self) -> str:
        """partialSuccess.errorMessage: why items were rejected, then what was accepted with a warning."""
        return "; ".join([*self.reasons, *self.warnings])


_FED_BY = {RunKind.SESSION: "a session", RunKind.TRACE: "trace-born"}


def telemetry_refusal(run: RunRecord | None, kind: RunKind, items: int, unit: str, max_events: int) -> str | None:
    """Why a run fed by OTLP telemetry (a session of log records, a trace-born run of spans) takes no
    more of it, if it does not: it is finalized, it is another kind of run, or it would grow too large."""
    if run is not None and run.finalized:
        return "is finalized"
    if run is not None and run.kind != kind:
        return f"is a run that is not {_FED_BY[kind]}"
    if items > max_events:
        return f"would hold {items} {unit}, over the {max_events} of a run (REPUTE_MAX_EVENTS_PER_RUN)"
    return None


def trace_header(mapped: TraceRun) -> RunHeader:
    """A trace-born run's names as its spans give them (SPEC §3.4); unusable values are left out."""
    trial = mapped.trial if mapped.trial is not None and mapped.trial >= 0 else None
    return RunHeader(
        identity=safe_identity(mapped.identity),
        run_id=mapped.run_id,
        suite=safe_name(mapped.suite),
        task_id=safe_name(mapped.task_id),
        trial=trial,
        kind=RunKind.TRACE,
        parent_run_id=mapped.parent_run_id or "",
    )
