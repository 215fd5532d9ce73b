"""The stored run as one typed record, and its mapping to the `runs` table's columns.

A run is a row per version (open, then finalized; ReplacingMergeTree by `version`). Adding a column is
one field here plus a migration that adds it. The six dimension scores are columns named after the
detector registry's dimensions (`service.diagnosis.DIMENSIONS`): a new detector's dimension needs
`ALTER TABLE runs ADD COLUMN <dimension> UInt8` in a new migration (tests/test_registry.py says so).
"""

import threading
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any

from service.diagnosis import DIMENSIONS
from service.store.rows import as_utc
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
    dimension_scores: dict[str, int] = field(default_factory=dict)
    session_composite: float | None = None
    session_performance: str = ""  # canonical JSON text, "" when the run is not a session
    event_count: int = 0
    tool_calls: int = 0
    errors: int = 0
    total_tokens: int = 0
    diagnosis: str = ""  # the canonical diagnosis JSON
    diagnosis_hash: str = ""
    content_hash: str = ""  # of the events it was finalized from (service.services.runs.content_hash)
    profile: str = ""  # the diagnosis profile the run names itself (SPEC §3.1), '' when none
    parent_run_id: str = ""  # the run this one is part of (SPEC §3.5), '' when none (0017)

    @property
    def finalized(self) -> bool:
        return self.status == RunStatus.FINALIZED

    def with_version(self, version: int, **changes: Any) -> "RunRecord":
        return replace(self, version=version, **changes)


_SCALAR_FIELDS = tuple(f.name for f in fields(RunRecord) if f.name != "dimension_scores")
RUN_COLUMNS: tuple[str, ...] = _SCALAR_FIELDS + DIMENSIONS
_TIME_FIELDS = ("created_at", "started_at", "ended_at", "run_at", "finalized_at")


def run_row(record: RunRecord) -> list[Any]:
    """The record's values in RUN_COLUMNS order (a missing dimension score is 0: an open run has none)."""
    scores = record.dimension_scores
    return [getattr(record, name) for name in _SCALAR_FIELDS] + [scores.get(name, 0) for name in DIMENSIONS]


def run_record(row: dict[str, Any]) -> RunRecord:
    """A record from a row of (some of) RUN_COLUMNS; the columns a query left out keep their defaults."""
    values = {name: row[name] for name in _SCALAR_FIELDS if name in row}
    for name in _TIME_FIELDS:
        if name in values:
            values[name] = as_utc(values[name])
    scores = {name: row[name] for name in DIMENSIONS if name in row}
    values.setdefault("tenant", "")
    return RunRecord(**values, dimension_scores=scores)


_version_lock = threading.Lock()
_last_version = 0


def next_version(now: datetime) -> int:
    """Strictly increasing row versions within the process (microseconds, bumped on ties)."""
    global _last_version
    with _version_lock:
        _last_version = max(_last_version + 1, int(now.timestamp() * 1_000_000))
        return _last_version
