"""Applies migrations/NNNN_*.sql in order, once each, recording them in schema_migrations.

Every statement is `IF NOT EXISTS`, so two processes migrating at once, or a run cut short and
repeated, converge on the same schema; the record table collapses duplicate rows by version.

The files ship inside the package (service/migrations) and are read through importlib.resources. Each
applied file is recorded with the checksum of its template (before settings are rendered in, so changing
a setting such as a TTL does not look like an edited file); an applied file whose content has changed
since stops the migration: a schema change belongs in a new file.
"""

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable

from service.errors import MigrationError
from service.settings import Settings
from service.store import writer
from service.store.client import Store, create_database, database_of
from service.store.definitions import apply_definitions, definitions
from service.store.templates import statements

MIGRATIONS: Traversable = files("service") / "migrations"
_FILE_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


class NoMigrationsFound(MigrationError):
    def __init__(self, source: Traversable) -> None:
        super().__init__(f"no migration files (NNNN_name.sql) found in {source}: the installation is incomplete")


class AppliedMigrationChanged(MigrationError):
    def __init__(self, file_name: str) -> None:
        super().__init__(
            f"migration {file_name} was changed after it was applied: restore it and put the change in a new migration"
        )
        self.file_name = file_name


_RECORD_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations {{on_cluster}}
(
    version    UInt32,
    name       String,
    checksum   String,
    applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = {{replicated}}ReplacingMergeTree(applied_at)
ORDER BY version;
"""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str  # the template as written, with {{placeholders}}

    @property
    def file_name(self) -> str:
        return f"{self.name}.sql"

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def _record_table(settings: Settings, database: str) -> list[str]:
    return statements(_RECORD_TABLE, settings, database)


def _sql_files(source: Traversable) -> list[Traversable]:
    if not source.is_dir():
        return []
    return sorted((entry for entry in source.iterdir() if entry.name.endswith(".sql")), key=lambda entry: entry.name)


def discover(source: Traversable = MIGRATIONS) -> list[Migration]:
    found = _sql_files(source)
    if not found:
        raise NoMigrationsFound(source)
    migrations = []
    for file in found:
        match = _FILE_NAME.match(file.name)
        if not match:
            raise MigrationError(f"migration file name must look like 0001_name.sql: {file.name}")
        migrations.append(Migration(int(match.group(1)), file.name.removesuffix(".sql"), file.read_text("utf-8")))
    versions = [m.version for m in migrations]
    if len(set(versions)) != len(versions):
        raise MigrationError("two migration files share a version number")
    return migrations


def _recorded_checksums(store: Store) -> dict[int, str]:
    """The checksum recorded for each applied version."""
    rows = store.client.query("SELECT version, checksum FROM schema_migrations FINAL").result_rows
    return {version: checksum for version, checksum in rows}


def _verify_unchanged(migrations: list[Migration], recorded: dict[int, str]) -> None:
    for migration in migrations:
        if migration.version in recorded and recorded[migration.version] != migration.checksum:
            raise AppliedMigrationChanged(migration.file_name)


def migrate(store: Store, source: Traversable = MIGRATIONS) -> list[str]:
    """Applies pending migrations, then re-creates the repeatable definitions whose rendered text changed
    (service/store/definitions.py); returns the names applied (empty when up to date)."""
    migrations = discover(source)
    client = store.client
    for statement in _record_table(store.settings, store.database):
        client.command(statement)
    recorded = _recorded_checksums(store)
    _verify_unchanged(migrations, recorded)
    applied = []
    for migration in migrations:
        if migration.version in recorded:
            continue
        for statement in statements(migration.sql, store.settings, store.database):
            client.command(statement)
        writer.schema_record(
            store, "schema_migrations", [migration.version, migration.name, migration.checksum],
            ("version", "name", "checksum"),
        )  # fmt: skip
        applied.append(migration.name)
    applied += apply_definitions(store, {*recorded, *(m.version for m in migrations if m.name in applied)})
    if applied:
        store.forget_column_types()
    return applied


def every_statement(settings: Settings, source: Traversable = MIGRATIONS) -> Iterator[str]:
    """The whole schema as `repute migrate` would create it for these settings, from nothing: the database,
    the record table and every migration's statements, each file's introduced by a comment naming it.
    Nothing is opened or applied, so a cluster's DDL can be reviewed where no cluster exists."""
    database = database_of(settings)
    yield create_database(database, settings.cluster)
    yield from _record_table(settings, database)
    for migration in discover(source):
        yield f"-- {migration.file_name}"
        yield from statements(migration.sql, settings, database)
    for definition in definitions(settings, database):
        yield f"-- definitions/{definition.view}.sql"
        yield from definition.statements


def pending(store: Store, source: Traversable = MIGRATIONS) -> list[str]:
    done = _recorded_checksums(store)
    return [m.name for m in discover(source) if m.version not in done]
