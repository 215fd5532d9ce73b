"""The migration runner on the real store: files read from the package, checksums of applied files verified."""

from pathlib import Path

import pytest

from service.store.client import Store
from service.store.migrate import AppliedMigrationChanged, NoMigrationsFound, discover, migrate, pending
from service.store.queries import load


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


def test_the_tables_every_finalize_writes_to_merge_small_parts_less_eagerly(embedded_store: Store) -> None:
    """migrations/0011: a single run's parts are not merged into the big part at once (issue #14)."""
    tables = ["reputation_daily_sources", "reputation_events", "run_events", "run_failures", "runs"]
    rows = embedded_store.client.query(
        "SELECT name, engine_full FROM system.tables"
        " WHERE database = currentDatabase() AND name IN {tables:Array(String)}",
        parameters={"tables": tables},
    ).result_rows
    assert sorted(name for name, engine in rows if "merge_selector_base = 10" in engine) == tables


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
    """Migration 0012: a part of reputation_daily_sources larger than min_bytes_for_wide_part's default
    (the size from which the engine writes one file per column) is still Compact."""
    store = fresh_database
    migrate(store)
    store.client.command(
        "INSERT INTO reputation_daily_sources (tenant, identity, category, day, source, weighted_sum, events)"
        " SELECT 't', concat('agent-', toString(number)), 'economic', today(), 'key-a', 1, 1 FROM numbers(300000)"
    )
    default = store.client.query(
        "SELECT toUInt64(default) FROM system.merge_tree_settings WHERE name = 'min_bytes_for_wide_part'"
    ).result_rows[0][0]
    parts = store.client.query(
        "SELECT part_type, data_uncompressed_bytes FROM system.parts"
        " WHERE database = currentDatabase() AND table = 'reputation_daily_sources' AND active"
    ).result_rows
    assert parts and max(size for _, size in parts) > default
    assert {part_type for part_type, _ in parts} == {"Compact"}
