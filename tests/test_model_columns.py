"""The run model and the schema agree (issue #39): every field of `RunRecord` is a column of `runs`, every
field a list shows (`RunSummary`) is held by both newest-first projections (a projection missing one is
skipped by the engine without a word, and the FINAL scan it removed comes back), and every column list
the writer inserts names columns its table has. Read from the migrated store itself, so a new field
without its migration, or a migration without the field, fails here (CONTRIBUTING.md: adding a field)."""

import re
from dataclasses import fields

import pytest

from service.model import RUN_COLUMNS, SUMMARY_COLUMNS, RunRecord, RunSummary
from service.store import writer
from service.store.client import Store

_SELECT = re.compile(r"^SELECT (.*?) ORDER BY", re.S)
# What each projection holds beyond the model's list row: the key a reader looks the run up by.
PROJECTION_KEYS = {"tenant", "version"}
WRITES = {
    "run_events": writer.RUN_EVENT_COLUMNS,
    "run_failures": writer.FAILURE_COLUMNS,
    "reputation_events": writer.REPUTATION_COLUMNS,
    "spans": writer.SPAN_COLUMNS,
    "session_records": writer.SESSION_RECORD_COLUMNS,
    "api_keys": writer.KEY_COLUMNS,
    "diagnosis_profiles": writer.PROFILE_COLUMNS,
    "alert_state": writer.TRANSITION_COLUMNS,
    "runs": RUN_COLUMNS,
}


def _columns(store: Store, table: str) -> set[str]:
    return {name for name, *_ in store.client.query(f"DESCRIBE TABLE {table}").result_rows}


def missing_from_projection(query: str, wanted: set[str]) -> set[str]:
    """The columns of `wanted` that a projection's SELECT does not hold."""
    match = _SELECT.match(query)
    assert match is not None, query
    return wanted - {column.strip() for column in match.group(1).split(",")}


def test_every_field_of_a_run_is_a_column_of_runs(embedded_store: Store) -> None:
    assert set(RUN_COLUMNS) <= _columns(embedded_store, "runs")


def test_a_list_row_is_part_of_a_record_with_the_same_types() -> None:
    record = {field.name: field.type for field in fields(RunRecord)}
    assert {field.name: field.type for field in fields(RunSummary)}.items() <= record.items()
    assert set(SUMMARY_COLUMNS) <= set(RUN_COLUMNS)


def test_both_newest_first_projections_hold_every_field_a_list_shows(embedded_store: Store) -> None:
    projections = dict(
        embedded_store.client.query(
            "SELECT name, query FROM system.projections WHERE database = currentDatabase() AND table = 'runs'"
        ).result_rows
    )
    assert set(projections) == {"newest_first", "identity_newest_first"}
    for name, query in projections.items():
        assert missing_from_projection(query, set(SUMMARY_COLUMNS) | PROJECTION_KEYS) == set(), name


def test_the_projection_check_sees_a_field_it_lacks() -> None:
    """Broken on purpose: a field added to RunSummary and to no projection."""
    query = "SELECT tenant, run_id, version ORDER BY tenant, run_id"
    assert missing_from_projection(query, {"tenant", "run_id", "version", "cost_usd"}) == {"cost_usd"}


@pytest.mark.parametrize("table", sorted(WRITES))
def test_every_column_the_writer_inserts_exists(embedded_store: Store, table: str) -> None:
    assert set(WRITES[table]) <= _columns(embedded_store, table)


def test_a_record_read_from_a_partial_row_is_refused() -> None:
    """Issue #39: a row missing a column once became a record with that field's default, and a record whose
    content_hash read as '' silently skipped the repost check. Partial rows are RunSummary's."""
    from datetime import UTC, datetime

    from service.store.records import run_record, run_row

    record = RunRecord(tenant="t", run_id="r", identity="i", created_at=datetime.now(UTC), run_at=datetime.now(UTC))
    row = dict(zip(RUN_COLUMNS, run_row(record), strict=True))
    del row["content_hash"]
    with pytest.raises(ValueError, match="left out content_hash"):
        run_record(row)
