"""The service's vocabulary: the names and values that the engine, the store, the API, the CLI, the UI
and Grafana share. Each lives here once; the UI's copy is generated from this module (`python -m
service.codegen`), and a test fails while a generated file is stale.

Pure constants: importing this module touches nothing else, so the diagnosis engine may use it.
The failure types and score dimensions are not here: they come from the detector registry
(`service.diagnosis.detectors.ALL_DETECTORS`), so adding a detector adds them.
"""

from datetime import UTC, datetime
from enum import StrEnum


class Readiness(StrEnum):
    """A run's verdict (SPEC §4), from the best to the worst."""

    READY = "ready_for_runtime"
    REVIEW = "review_recommended"
    UNSAFE = "unsafe_for_production"


class ExecutionStatus(StrEnum):
    """How a finalized run ended (SPEC §6)."""

    OK = "ok"
    QUALITY_FAILURE = "quality_failure"
    EXECUTION_ERROR = "execution_error"


class RunStatus(StrEnum):
    OPEN = "open"
    FINALIZED = "finalized"


class RunKind(StrEnum):
    """Where a run came from: sent as run events, built from OTLP log records, or from OTLP spans."""

    RUN = "run"
    SESSION = "session"
    TRACE = "trace"


class InputKind(StrEnum):
    """How a run reached Repute, as diagnosis profiles name it (SPEC §4.1): posted as run events (POST
    /v1/sessions, the batch, or streamed through /v1/runs), from OTLP logs, or from OTLP traces."""

    SESSION = "session"
    OTLP_LOGS = "otlp_logs"
    OTLP_TRACES = "otlp_traces"


INPUT_OF_KIND: dict[str, InputKind] = {
    RunKind.RUN: InputKind.SESSION,
    RunKind.SESSION: InputKind.OTLP_LOGS,
    RunKind.TRACE: InputKind.OTLP_TRACES,
}


class Scope(StrEnum):
    INGEST = "ingest"
    READ = "read"
    ADMIN = "admin"


SCOPES: tuple[str, ...] = tuple(scope.value for scope in Scope)


class IdentitySort(StrEnum):
    """The orders of the fleet list (GET /v1/identities?sort=)."""

    OVERALL = "overall"
    CONFIDENCE = "confidence"
    TREND_7D = "trend_7d"
    TREND_30D = "trend_30d"
    EVENTS = "events"
    IDENTITY = "identity"
    RUNS = "runs"
    EXECUTION_ERRORS = "execution_errors"
    EXECUTION_ERROR_SHARE = "execution_error_share"
    UNSAFE_RUNS = "unsafe_runs"
    LAST_RUN_AT = "last_run_at"


IDENTITY_SORTS: tuple[str, ...] = tuple(sort.value for sort in IdentitySort)


class Category(StrEnum):
    """Reputation categories (SPEC §7)."""

    TASK_QUALITY = "task_quality"
    ECONOMIC = "economic"
    IDENTITY_HYGIENE = "identity_hygiene"


CATEGORIES: tuple[str, ...] = tuple(category.value for category in Category)

# Stages of a harness at which a run can fail for reasons that are not the agent's (SPEC §6).
STAGES: tuple[str, ...] = ("setup", "repo_setup", "agent", "evaluator", "teardown")
# Open-ended: any other reason code is accepted as given.
KNOWN_REASON_CODES: tuple[str, ...] = (
    "provider_error", "template_error", "script_error", "clone_error", "evaluator_error", "budget_exceeded",
    "toolchain_missing",
)  # fmt: skip
# The longest error text a run keeps (SPEC §3.4: at most 1,000 characters): an error span's message, a log
# record's error texts, an execution error's message when the service writes one. Longer ones are cut.
MESSAGE_CHARS = 1000

# The operator tenant: it owns the first-start admin key and manages every tenant's keys.
DEFAULT_TENANT = "default"
# Files in the data directory.
ADMIN_KEY_FILE = "admin.key"
SERVER_FILE = "server.json"

# Times the service accepts anywhere a client sends one. Reputation days are ClickHouse `Date`
# (1970-01-01 .. 2149-06-06) and windows reach 119 days back from a day, so a run's time must lie in
# [EARLIEST, LATEST) for everything derived from it to be storable.
EARLIEST = datetime(1970, 5, 1, tzinfo=UTC)
LATEST = datetime(2149, 1, 1, tzinfo=UTC)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
EARLIEST_MS = int((EARLIEST - _EPOCH).total_seconds() * 1000)
LATEST_MS = int((LATEST - _EPOCH).total_seconds() * 1000)
TIME_RULE = f"between {EARLIEST:%Y-%m-%d} and {LATEST:%Y-%m-%d}"

# Reported reputation figures are rounded to this many decimals (SPEC §7); exact values stay internal.
REPORTED_DECIMALS = 9
