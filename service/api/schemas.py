"""Request and response bodies of the REST API (OpenAPI at /docs)."""

from datetime import UTC, date, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from service.diagnosis import FAILURE_TYPES
from service.ids import Identifier, IdentityPattern, OptionalIdentifier, ProfileName
from service.services.inputs import Execution
from service.store.rows import storable
from service.vocab import SCOPES, TIME_RULE, Category, InputKind, Scope


def _storable_time(value: datetime) -> datetime:
    if not storable(value):
        raise ValueError(f"must lie {TIME_RULE}")
    return value


def _storable_day(value: date) -> date:
    _storable_time(datetime(value.year, value.month, value.day, tzinfo=UTC))
    return value


StorableTime = Annotated[datetime, AfterValidator(_storable_time)]
StorableDay = Annotated[date, AfterValidator(_storable_day)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class FinalizeBody(Strict):
    execution: Execution | None = None

    model_config = ConfigDict(
        extra="forbid",
        allow_inf_nan=False,
        json_schema_extra={
            "examples": [
                {},
                {"execution": {"status": "execution_error", "stage": "setup", "reason": "toolchain_missing"}},
            ]
        },
    )


class RunSummary(BaseModel):
    run_id: str
    identity: str
    kind: str
    suite: str
    task_id: str
    trial: int | None
    status: str
    run_at: datetime
    finalized_at: datetime | None
    execution_status: str
    failure_stage: str
    failure_reason_code: str
    score: float
    trust_score: int | None = Field(description="null while open, and for an execution error (no quality verdict)")
    readiness_level: str | None = Field(description="null while open, and for an execution error")
    primary_failure: str | None
    session_composite: float | None
    event_count: int
    tool_calls: int
    total_tokens: int
    parent_run_id: str | None = Field(description="the run this one is part of (SPEC §3.5), null when none")


class ChildRun(BaseModel):
    """A child run's verdict, as its parent shows it (SPEC §3.5)."""

    run_id: str
    identity: str
    status: str
    execution_status: str
    trust_score: int | None
    readiness_level: str | None


TOP_FAILURE = "the primary failure of most of the agent's runs in the window (ties: larger summed impact, then name)"
MAX_TOKENS_THRESHOLD = 10**15  # a run of 100,000 events of 10^12 tokens each totals 10^17
MAX_DUPLICATES = 100_000  # the events of a run
MAX_DETECTORS = 100  # names, repeats allowed; each must be one of the registry's (service.services.profiles)
DetectorName = Annotated[str, StringConstraints(min_length=1, max_length=100)]


class Thresholds(BaseModel):
    """A diagnosis profile's thresholds (SPEC §4.1)."""

    tokens_high: int = Field(description="cost_explosion (high) from this token total")
    tokens_critical: int = Field(description="critical from this token total")
    tokens_per_point: int = Field(description="impact = -min(30, 10 + 4 x duplicates + total // tokens_per_point)")
    duplicates: int = Field(description="cost_explosion from this many duplicate calls, whatever the tokens")


class ProfileThresholds(Thresholds):
    name: str
    detectors: list[str] = Field(description="the failure types it detects (SPEC §4.1, §4.2)")


class RunDetail(RunSummary):
    child_runs: list[ChildRun] = Field(description="the runs of the other agents of a multi-agent run (SPEC §3.5)")
    metadata: dict[str, Any]
    failure_message: str
    started_at: datetime | None
    ended_at: datetime | None
    diagnosis: dict[str, Any] | None
    profile: ProfileThresholds | None = Field(description="the diagnosis profile that judged the run; null while open")
    session_performance: dict[str, Any] | None


class ProfileBody(Strict):
    """A profile's thresholds and where it applies. A built-in profile's thresholds are fixed: for it, leave
    them out (or repeat them) and give its rules."""

    tokens_high: int | None = Field(default=None, ge=1, le=MAX_TOKENS_THRESHOLD, strict=True)
    tokens_critical: int | None = Field(default=None, ge=1, le=MAX_TOKENS_THRESHOLD, strict=True)
    tokens_per_point: int | None = Field(default=None, ge=1, le=MAX_TOKENS_THRESHOLD, strict=True)
    duplicates: int | None = Field(default=None, ge=1, le=MAX_DUPLICATES, strict=True)
    detectors: list[DetectorName] | None = Field(
        default=None,
        max_length=MAX_DETECTORS,
        description=f"the failure types it detects, of {', '.join(FAILURE_TYPES)}; default: every one",
    )
    identities: list[IdentityPattern] = Field(
        default_factory=list, max_length=100, description="exact identities or globs (`claude-code*`)"
    )
    inputs: list[InputKind] = Field(default_factory=list, max_length=len(InputKind))

    model_config = ConfigDict(
        extra="forbid",
        allow_inf_nan=False,
        json_schema_extra={
            "examples": [
                {
                    "tokens_high": 150_000, "tokens_critical": 600_000, "tokens_per_point": 75_000, "duplicates": 4,
                    "identities": ["claude-code*"], "inputs": ["otlp_logs"],
                },
                {
                    "tokens_high": 12_000, "tokens_critical": 30_000, "tokens_per_point": 6_000, "duplicates": 3,
                    "detectors": ["infinite_tool_loop", "cost_explosion", "unrecovered_error", "tool_failures"],
                },
                {"identities": ["claude-code*"]},
            ]
        },
    )  # fmt: skip

    def thresholds(self) -> dict[str, int | None]:
        return {name: getattr(self, name) for name in Thresholds.model_fields}


class ProfileFile(ProfileBody):
    """`repute diagnose --profile FILE`: a profile's thresholds and, optionally, its name."""

    name: ProfileName | None = None


class ProfileInfo(ProfileThresholds):
    identities: list[str]
    inputs: list[str]
    built_in: bool
    default_for: list[str] = Field(description="the input kinds it judges when no rule applies")


class ProfileRule(BaseModel):
    kind: str = Field(description="identity, glob, input or default")
    match: str
    profile: str


class ProfileList(BaseModel):
    profiles: list[ProfileInfo]
    rules: list[ProfileRule] = Field(description="in the order they are tried, after the run's own `profile`")
    next_cursor: str | None = Field(description="the next page's `cursor`; null on the last page")


class RunList(BaseModel):
    runs: list[RunSummary]
    next_cursor: str | None = Field(description="the next page's `cursor`; null on the last page")


class RunEvent(BaseModel):
    seq: int
    event_id: str
    type: str
    timestamp: datetime | None
    data: dict[str, Any]


class RunEvents(BaseModel):
    run_id: str
    events: list[RunEvent]
    total: int = Field(description="the run's events, all pages")
    next_cursor: str | None = Field(description="the next page's `cursor`; null on the last page")


class EventsAccepted(BaseModel):
    run_id: str
    accepted: int
    event_count: int


class SessionVerdict(BaseModel):
    """A stored run's verdict; `GET /v1/runs/{run_id}` has its full diagnosis."""

    run_id: str
    created: bool
    execution_status: str
    failure_stage: str
    failure_reason_code: str
    trust_score: int | None
    readiness_level: str | None
    primary_failure: str | None
    tool_calls: int
    diagnosis_hash: str


class SessionResult(SessionVerdict):
    diagnosis: dict[str, Any]


class SessionBatchResult(BaseModel):
    results: list[SessionVerdict]


class Signal(Strict):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, use_enum_values=True)

    identity: Identifier
    category: Category
    event_type: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:\-]+$")
    score_delta: float = Field(ge=-1, le=1)
    confidence: float = Field(default=1.0, ge=0, le=1)
    weight: float = Field(default=1.0, ge=0, le=1_000)
    timestamp: StorableTime | None = Field(default=None, description="ISO 8601; UTC when no offset; now when absent")
    reference_type: str = Field(default="", max_length=64, pattern=r"^[A-Za-z0-9._:\-]*$")
    reference_id: OptionalIdentifier = ""
    attributes: dict[str, str] = Field(default_factory=dict, max_length=64)
    event_id: str | None = Field(
        default=None,
        description="a UUID, deduplicated per posting key and kept as attributes.client_event_id;"
        " without it, the content deduplicates",
    )
    source: str | None = Field(
        default=None, exclude=True, description="ignored: an event's source is the id of the key that posts it"
    )

    model_config = ConfigDict(
        extra="forbid",
        allow_inf_nan=False,
        json_schema_extra={
            "examples": [
                {"identity": "agent-atlas", "category": "economic", "event_type": "payment_completed", "score_delta": 1}
            ]
        },
    )


class SignalBatch(Strict):
    """`{"events": [...]}`, or the bare array, which is read as that."""

    events: list[Signal] = Field(max_length=10_000)

    @model_validator(mode="before")
    @classmethod
    def _bare_array(cls, value: Any) -> Any:
        return {"events": value} if isinstance(value, list) else value


class SignalsAccepted(BaseModel):
    accepted: int = Field(description="events stored (capped ones included)")
    duplicates: int = Field(description="events whose id this identity already had")
    capped: int = Field(description="stored but not counted: over the source's daily cap for the identity")
    event_ids: list[str]


class Source(BaseModel):
    source: str
    credibility: float
    updated_at: datetime | None


class SourceList(BaseModel):
    sources: list[Source]


class Credibility(Strict):
    credibility: float = Field(ge=0, le=1, description="0 takes the source out of every score; 1 counts it fully")


class RebuildReport(BaseModel):
    tenant: str
    runs_examined: int
    runs_changed: int = Field(description="runs whose reputation events changed")
    events_retracted: int
    events_emitted: int
    runs_rediagnosed: int = Field(description="with rediagnose: runs whose diagnosis changed")
    runs_without_events: int = Field(
        description="with rediagnose: runs left as they were, their events no longer stored (TTL)"
    )


class Categories(BaseModel):
    task_quality: float | None
    economic: float | None
    identity_hygiene: float | None


class Reputation(BaseModel):
    identity: str
    as_of: date
    window_days: int
    overall: float | None
    categories: Categories
    confidence: float
    events: int
    positive_events: int
    negative_events: int
    failures: dict[str, int]
    score_7d_ago: float | None
    score_30d_ago: float | None
    trend_7d: float | None
    trend_30d: float | None
    runs: int = Field(description="finalized runs in the window, execution errors included")
    execution_errors: int = Field(description="runs that stopped on their infrastructure (no verdict, no reputation)")
    execution_error_share: float | None = Field(description="execution_errors / runs; null without runs")
    unsafe_runs: int = Field(description="quality runs judged unsafe_for_production")
    last_run_at: datetime | None = Field(description="the latest finalized run of the window")
    top_failure: str | None = Field(description=TOP_FAILURE)


class ActivityDay(BaseModel):
    day: date
    runs: int
    execution_errors: int
    unsafe_runs: int
    mean_trust: float | None = Field(description="of the day's quality runs; null when all were execution errors")


class IdentityRow(BaseModel):
    identity: str
    overall: float | None
    categories: Categories
    confidence: float
    events: int
    trend_7d: float | None
    trend_30d: float | None
    runs: int = Field(description="finalized runs of the 90-day window, execution errors included")
    execution_errors: int
    execution_error_share: float | None = Field(description="execution_errors / runs; null without runs")
    unsafe_runs: int = Field(description="quality runs judged unsafe_for_production")
    last_run_at: datetime | None
    top_failure: str | None = Field(description=TOP_FAILURE)
    last_30_days: list[ActivityDay] = Field(description="the days of the last 30 with finalized runs, oldest first")
    computed_at: datetime


class IdentityList(BaseModel):
    identities: list[IdentityRow]
    computed_at: datetime | None
    next_cursor: str | None = Field(description="the next page's `cursor`; null on the last page")


class HistoryDay(BaseModel):
    day: date
    runs: int
    mean_trust: float | None
    reputation: float | None
    confidence: float


class History(BaseModel):
    identity: str
    days: list[HistoryDay]


class KeyCreate(Strict):
    tenant: Identifier | None = Field(default=None, description="the caller's own tenant when absent")
    scopes: list[Scope] = Field(min_length=1, max_length=len(SCOPES))
    name: str = Field(default="", max_length=200)

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"tenant": "acme", "scopes": ["ingest", "read"], "name": "ci"}]}
    )


class KeyCreated(BaseModel):
    id: str
    key: str
    tenant: str
    scopes: list[str]
    name: str


class KeyInfo(BaseModel):
    id: str
    tenant: str
    scopes: list[str]
    name: str
    created_at: datetime
    revoked_at: datetime | None


class KeyList(BaseModel):
    keys: list[KeyInfo]
