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
