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
