"""The stored run (service.model) and the rows of the `runs` table: a record's values in column order, and
a record or a list's summary from a row read back."""

from typing import Any

from service.diagnosis import DIMENSIONS
from service.model import RUN_COLUMNS, SUMMARY_COLUMNS, RunRecord, RunSummary, next_version
from service.model.record import summary_of
from service.store.rows import as_utc

__all__ = ["RUN_COLUMNS", "SUMMARY_COLUMNS", "RunRecord", "RunSummary", "next_version", "run_record", "run_row",
           "summary_of", "summary_row"]  # fmt: skip

_SCALAR_COLUMNS = tuple(name for name in RUN_COLUMNS if name not in DIMENSIONS)
_TIME_FIELDS = ("created_at", "started_at", "ended_at", "run_at", "finalized_at")
_SUMMARY_TIME_FIELDS = tuple(name for name in _TIME_FIELDS if name in SUMMARY_COLUMNS)


def run_row(record: RunRecord) -> list[Any]:
    """The record's values in RUN_COLUMNS order (a missing dimension score is 0: an open run has none)."""
    scores = record.dimension_scores
    return [getattr(record, name) for name in _SCALAR_COLUMNS] + [scores.get(name, 0) for name in DIMENSIONS]


def run_record(row: dict[str, Any]) -> RunRecord:
    """A whole record from a row of every one of RUN_COLUMNS. A row missing one is a query's mistake, never
    a default: a record whose content_hash read as '' would silently skip the repost check."""
    missing = [name for name in RUN_COLUMNS if name not in row]
    if missing:
        raise ValueError(f"a runs query left out {', '.join(missing)}: read RUN_COLUMNS, or a RunSummary")
    values = {name: row[name] for name in _SCALAR_COLUMNS}
    for name in _TIME_FIELDS:
        values[name] = as_utc(values[name])
    return RunRecord(**values, dimension_scores={name: row[name] for name in DIMENSIONS})


def summary_row(row: dict[str, Any]) -> RunSummary:
    """A list's row (every one of SUMMARY_COLUMNS; others are ignored)."""
    values = {name: row[name] for name in SUMMARY_COLUMNS}
    for name in _SUMMARY_TIME_FIELDS:
        values[name] = as_utc(values[name])
    return RunSummary(**values)
