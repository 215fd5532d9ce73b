"""Applies migrations/NNNN_*.sql in order, once each, recording them in schema_migrations.

Every statement is `IF NOT EXISTS`, so two processes migrating at once, or a run cut short and
repeated, converge on the same schema; the record table collapses duplicate rows by version.
"""

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from service.settings import Settings
from service.store.client import Store

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"
_FILE_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")

_RECORD_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations {on_cluster}
(
    version    UInt32,
    name       String,
    checksum   String,
    applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = {replicated}ReplacingMergeTree(applied_at)
ORDER BY version
"""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def template_values(settings: Settings) -> dict[str, str]:
    return {
        "on_cluster": f"ON CLUSTER {settings.cluster}" if settings.cluster else "",
        "replicated": "Replicated" if settings.cluster else "",
        "run_events_ttl_days": str(int(settings.run_events_ttl_days)),
        "reputation_refresh_seconds": str(int(settings.reputation_refresh_seconds)),
        "reputation_half_life_days": repr(float(settings.reputation_half_life_days or 0)),
    }


def render(sql: str, values: dict[str, str]) -> str:
    def substitute(match: re.Match[str]) -> str:
        return values[match.group(1)]

    return _PLACEHOLDER.sub(substitute, sql)


def split_statements(sql: str) -> list[str]:
    """Statements end with `;` at the end of a line; comment-only chunks are dropped."""
    chunks = re.split(r";\s*$", sql, flags=re.MULTILINE)
    statements = []
    for chunk in chunks:
        code = "\n".join(line for line in chunk.splitlines() if not line.strip().startswith("--")).strip()
        if code:
            statements.append(code)
    return statements


def discover(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    migrations = []
    for path in sorted(directory.glob("*.sql")):
        match = _FILE_NAME.match(path.name)
        if not match:
            raise ValueError(f"migration file name must look like 0001_name.sql: {path.name}")
        migrations.append(Migration(int(match.group(1)), path.stem, path.read_text()))
    versions = [m.version for m in migrations]
    if len(set(versions)) != len(versions):
        raise ValueError("two migration files share a version number")
    return migrations


def applied_versions(store: Store) -> set[int]:
    rows = store.client.query("SELECT version FROM schema_migrations FINAL").result_rows
    return {row[0] for row in rows}


def migrate(store: Store) -> list[str]:
    """Applies pending migrations; returns the names applied (empty when up to date)."""
    values = template_values(store.settings)
    client = store.client
    client.command(_RECORD_TABLE.format(**values))
    done = applied_versions(store)
    applied = []
    for migration in discover():
        if migration.version in done:
            continue
        for statement in split_statements(render(migration.sql, values)):
            client.command(statement)
        client.insert(
            "schema_migrations",
            [[migration.version, migration.name, migration.checksum]],
            column_names=["version", "name", "checksum"],
        )
        applied.append(migration.name)
    return applied


def pending(store: Store) -> list[str]:
    done = applied_versions(store)
    return [m.name for m in discover() if m.version not in done]
