"""The migration runner on the real store: files read from the package, checksums of applied files verified."""

import random
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from service.diagnosis import parse_run
from service.services.inputs import materials_of
from service.services.receivers.whole import ingest_each
from service.settings import Settings
from service.store import runs as run_store
from service.store.client import Store
from service.store.migrate import AppliedMigrationChanged, NoMigrationsFound, discover, migrate, pending
from service.store.queries import QUERIES, load, source
from service.store.records import RUN_COLUMNS, RunRecord, run_row
from service.store.templates import render, split_statements, template_values
from service.testing.factory import make_session


def _copy_of_the_migrations(target: Path) -> list[Path]:
    target.mkdir()
    copies = []
    for migration in discover():
        copy = target / migration.file_name
        copy.write_text(migration.sql)
        copies.append(copy)
    return copies


def test_the_packaged_migrations_are_all_applied(embedded_store: Store) -> None:
    assert discover() and pending(embedded_store) == []


@pytest.mark.parametrize("content", [None, {}, {"README.md": "no SQL here"}])
def test_finding_no_migration_is_an_error(embedded_store: Store, tmp_path: Path, content: dict | None) -> None:
    source = tmp_path / "migrations"
    if content is not None:
        source.mkdir()
        for name, text in content.items():
            (source / name).write_text(text)
    with pytest.raises(NoMigrationsFound, match="no migration files"):
        migrate(embedded_store, source)


def test_an_applied_migration_changed_since_is_an_error_naming_it(embedded_store: Store, tmp_path: Path) -> None:
    copies = _copy_of_the_migrations(tmp_path / "migrations")
    assert migrate(embedded_store, tmp_path / "migrations") == []  # same content elsewhere: nothing to do
    edited = copies[1]
    edited.write_text(edited.read_text() + "\n-- edited after it was applied\n")
    with pytest.raises(AppliedMigrationChanged, match=edited.name) as raised:
        migrate(embedded_store, tmp_path / "migrations")
    assert raised.value.file_name == edited.name


@pytest.mark.parametrize("name", ["../pyproject", "/etc/passwd", "alerts/../../migrations/0001_runs", "Alerts\\x"])
def test_query_names_stay_inside_sql(name: str) -> None:
    with pytest.raises(ValueError, match="not a query name"):
        load(name)


def test_queries_load_by_name_with_their_folder() -> None:
    assert "SELECT" in load("alerts/unsafe_share") and "SELECT" in load("runs_list")


def test_queries_are_sent_without_their_whole_line_comments() -> None:
    """The service sends each query without its comment lines (the engine parses every character of every
    statement); the file, which Grafana's panels show, keeps them."""
    name = "identity_explain"
    assert QUERIES.joinpath(f"{name}.sql").read_text(encoding="utf-8") == source(name)
    written = source(name).splitlines()
    assert any(line.lstrip().startswith("--") for line in written)
    assert load(name).splitlines() == [line for line in written if not line.lstrip().startswith("--")]


# The tables every single finalize writes a part to (sorted).
FINALIZE_TABLES = ["reputation_daily_types", "reputation_events", "run_events", "run_failures", "runs"]


def test_the_tables_every_finalize_writes_to_merge_small_parts_less_eagerly(embedded_store: Store) -> None:
    """migrations/0011: a single run's parts are not merged into the big part at once (issue #14)."""
    rows = embedded_store.client.query(
        "SELECT name, engine_full FROM system.tables"
        " WHERE database = currentDatabase() AND name IN {tables:Array(String)}",
        parameters={"tables": FINALIZE_TABLES},
    ).result_rows
    assert sorted(name for name, engine in rows if "merge_selector_base = 10" in engine) == FINALIZE_TABLES


def test_inserts_ask_for_the_column_types_again_after_a_migration(fresh_database: Store, tmp_path: Path) -> None:
    """Store.insert remembers a table's column types after its first insert (no DESCRIBE before each
    insert); applying a migration forgets them, so an insert after a schema change uses the new types."""
    store = fresh_database
    source = tmp_path / "migrations"
    _copy_of_the_migrations(source)
    migrate(store, source)
    store.client.command("CREATE TABLE typed (id UInt32, label UInt8) ENGINE = MergeTree ORDER BY id")
    store.insert("typed", [[1, 7]], ["id", "label"])
    (source / "9999_typed_label.sql").write_text("ALTER TABLE typed MODIFY COLUMN label String;")
    store.client.command("ALTER TABLE typed MODIFY COLUMN label String")  # behind the store's back
    with pytest.raises(Exception):  # noqa: B017 - still sent as UInt8: the types were remembered
        store.insert("typed", [[2, "seven"]], ["id", "label"])
    assert migrate(store, source) == ["9999_typed_label"]
    store.insert("typed", [[2, "seven"]], ["id", "label"])
    assert store.client.query("SELECT id, label FROM typed ORDER BY id").result_rows == [(1, "7"), (2, "seven")]


def test_the_daily_sums_stay_in_compact_parts_past_the_engines_wide_threshold(fresh_database: Store) -> None:
    """Migrations 0012 and 0024: a part of the daily sums (reputation_daily_types since 0027) larger than
    min_bytes_for_wide_part's default (the size from which the engine writes one file per column) is still
    Compact."""
    store = fresh_database
    migrate(store)
    store.client.command(
        "INSERT INTO reputation_daily_types (tenant, identity, category, event_type, day, source, weighted_sum,"
        " events) SELECT 't', concat('agent-', toString(number)), 'economic', 'payment_completed', today(), 'key-a',"
        " 1, 1 FROM numbers(300000)"
    )
    default = store.client.query(
        "SELECT toUInt64(default) FROM system.merge_tree_settings WHERE name = 'min_bytes_for_wide_part'"
    ).result_rows[0][0]
    parts = store.client.query(
        "SELECT part_type, data_uncompressed_bytes FROM system.parts"
        " WHERE database = currentDatabase() AND table = 'reputation_daily_types' AND active"
    ).result_rows
    assert parts and max(size for _, size in parts) > default
    assert {part_type for part_type, _ in parts} == {"Compact"}


def test_a_single_runs_parts_are_packed_in_one_file_on_the_embedded_engine(fresh_database: Store) -> None:
    """Migration 0013: each part a single finalize writes is one archive (data.packed), not a file per
    stream; a part of 10 MiB or more stays Full."""
    store = fresh_database
    migrate(store)
    run = orjson.dumps(make_session(random.Random(3), "packed-1", "agent-p", 50))
    ingest_each(store, "t", materials_of([parse_run(run)], store.settings), datetime.now(UTC), 0.7)
    parts = store.client.query(
        "SELECT table, part_storage_type FROM system.parts"
        " WHERE database = currentDatabase() AND table IN {tables:Array(String)} AND active",
        parameters={"tables": FINALIZE_TABLES},
    ).result_rows
    assert sorted({table for table, _ in parts}) == FINALIZE_TABLES
    assert {storage for _, storage in parts} == {"Packed"}
    store.client.command(
        "INSERT INTO run_events (tenant, run_id, seq, payload, ingested_at)"
        " SELECT 't', 'big', number, repeat('x', 200), now64(3) FROM numbers(100000)"
    )
    storage, size = store.client.query(
        "SELECT part_storage_type, data_uncompressed_bytes FROM system.parts WHERE database = currentDatabase()"
        " AND table = 'run_events' AND active ORDER BY data_uncompressed_bytes DESC LIMIT 1"
    ).result_rows[0]
    assert size >= 10 * 1024 * 1024 and storage == "Full"


def test_a_server_leaves_out_the_lines_marked_embedded_only() -> None:
    """Packed parts are for the embedded engine: on a server migration 0013 runs no statement. On a server
    only the marked line becomes a comment, so each marked line holds a whole statement."""
    marked = [line for migration in discover() for line in migration.sql.splitlines() if "{{embedded_only}}" in line]
    assert marked and all(line.startswith("{{embedded_only}}") and line.rstrip().endswith(";") for line in marked)
    packed = next(migration for migration in discover() if migration.version == 13)
    server = template_values(Settings(clickhouse_url="http://clickhouse:8123/repute"))
    embedded = template_values(Settings(clickhouse_url=None))
    assert split_statements(render(packed.sql, server)) == []
    statements = split_statements(render(packed.sql, embedded))
    assert len(statements) == 7 and all("min_bytes_for_full_part_storage = 10485760" in s for s in statements)


def test_runs_stored_before_0015_read_a_score_that_is_not_their_trust_as_the_callers(
    embedded_store: Store, tenant: str
) -> None:
    """caller_score (migration 0015) of a row written without it: the score when it is not trust / 100 and
    decided a quality outcome, else NULL (the score is the diagnosis's)."""
    now = datetime.now(UTC)
    runs = {
        "given": ("ok", 0.9, 100), "trust": ("ok", 0.83, 83), "failed": ("execution_error", 0.0, 100),
    }  # fmt: skip
    records = [
        RunRecord(tenant, run_id, "agent", now, now, 1, status="finalized", execution_status=status, score=score,
                  trust_score=trust)
        for run_id, (status, score, trust) in runs.items()
    ]  # fmt: skip
    records.append(RunRecord(tenant, "open", "agent", now, now, 1))
    kept = [index for index, name in enumerate(RUN_COLUMNS) if name != "caller_score"]
    rows = [[row[index] for index in kept] for row in map(run_row, records)]
    embedded_store.insert("runs", rows, column_names=[RUN_COLUMNS[index] for index in kept])
    stored = run_store.get_runs(embedded_store, tenant, [*runs, "open"])
    assert {run_id: run.caller_score for run_id, run in stored.items()} == {
        "given": 0.9, "trust": None, "failed": None, "open": None,
    }  # fmt: skip
