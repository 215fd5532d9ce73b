"""A stored run: a row per version of the `runs` table (open, then finalized; ReplacingMergeTree by
`version`), and the part of it that lists show.

The column lists of every query and insert derive from the fields here: `RUN_COLUMNS` (a whole row) and
`SUMMARY_COLUMNS` (a list's row, which the runs table's newest-first projections must hold whole, else
the engine skips them silently: tests/test_model_columns.py checks). Adding a column to runs:
CONTRIBUTING.md. The six dimension scores are columns named after the detector registry's dimensions
(`service.diagnosis.DIMENSIONS`).
"""

import threading
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any

from service.diagnosis import DIMENSIONS
from service.vocab import RunKind, RunStatus


@dataclass(slots=True)
class RunRecord:
    tenant: str
    run_id: str
    identity: str
    created_at: datetime
    run_at: datetime
    version: int = 0
    kind: str = RunKind.RUN
    suite: str = ""
    task_id: str = ""
    trial: int | None = None
    metadata: str = "{}"  # canonical JSON text
    started_at: datetime | None = None
    ended_at: datetime | None = None
    finalized_at: datetime | None = None
    status: str = RunStatus.OPEN
    execution_status: str = ""
    failure_stage: str = ""
    failure_reason_code: str = ""
    failure_message: str = ""
    score: float = 0.0
    caller_score: float | None = None  # the caller's execution score, when it decided the outcome (0015)
    trust_score: int | None = None
    readiness: str = ""
    primary_failure: str = ""
    primary_impact: int = 0  # the primary cause's impact score, 0 without one (0021)
    dimension_scores: dict[str, int] = field(default_factory=dict)
    session_composite: float | None = None
    session_performance: str = ""  # canonical JSON text, "" when the run is not a session
    event_count: int = 0
    tool_calls: int = 0
    errors: int = 0
    total_tokens: int = 0
    diagnosis: str = ""  # the canonical diagnosis JSON
    diagnosis_hash: str = ""
    content_hash: str = ""  # of the events it was finalized from (service.model.content_hash)
    profile: str = ""  # the diagnosis profile the run names itself (SPEC §3.1), '' when none
    parent_run_id: str = ""  # the run this one is part of (SPEC §3.5), '' when none (0017)

    @property
    def finalized(self) -> bool:
        return self.status == RunStatus.FINALIZED

    def with_version(self, version: int, **changes: Any) -> "RunRecord":
        return replace(self, version=version, **changes)


@dataclass(frozen=True, slots=True)
class RunSummary:
    """What a list shows of a run's latest version (the runs list, a suite's runs, the rebuild's walk)."""

    run_id: str
    identity: str
    created_at: datetime
    run_at: datetime
    kind: str
    suite: str
    task_id: str
    trial: int | None
    finalized_at: datetime | None
    status: str
    execution_status: str
    failure_stage: str
    failure_reason_code: str
    score: float
    trust_score: int | None
    readiness: str
    primary_failure: str
    session_composite: float | None
    event_count: int
    tool_calls: int
    errors: int
    total_tokens: int
    parent_run_id: str

    @property
    def finalized(self) -> bool:
        return self.status == RunStatus.FINALIZED


# A run as a reader sees it: a whole stored version, or a list's row of one.
RunView = RunRecord | RunSummary

_SCALAR_FIELDS = tuple(f.name for f in fields(RunRecord) if f.name != "dimension_scores")
RUN_COLUMNS: tuple[str, ...] = _SCALAR_FIELDS + DIMENSIONS
SUMMARY_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(RunSummary))


def summary_of(record: RunRecord) -> RunSummary:
    return RunSummary(**{name: getattr(record, name) for name in SUMMARY_COLUMNS})


_version_lock = threading.Lock()
_last_version = 0


def next_version(now: datetime) -> int:
    """Strictly increasing row versions within the process (microseconds, bumped on ties)."""
    global _last_version
    with _version_lock:
        _last_version = max(_last_version + 1, int(now.timestamp() * 1_000_000))
        return _last_version
