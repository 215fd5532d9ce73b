"""Repeatable definitions: the views whose query is the reputation formula, sql/definitions/<view>.sql.

A numbered migration is applied once and never changes; a definition is (re)created whenever its rendered
text differs from the one it was last created with, as Flyway's repeatable migrations are. Its template's
{{placeholders}} are the model's constants and formula (service/reputation/model.py), what the formula reads
when it runs (READ_TIME_WEIGHTS) and {{scope}}, which the view renders as every identity; so a change of the
model is an edit of model.py, and the next `repute migrate` (the service runs it at start) re-creates the
view. The reads that run the formula for one identity render the same templates (`formula_query`). The
migration runner applies definitions after the numbered migrations, from the one that makes their record
table (0018) on: before it, what they read may not exist.
"""

import hashlib
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable

from service.reputation.model import formula_sql
from service.settings import Settings
from service.store import writer
from service.store.client import Store
from service.store.queries import load
from service.store.templates import render, statements

DEFINITIONS: Traversable = files("service") / "sql" / "definitions"
EVERY_IDENTITY = "true"
# What the formula weighs the stored sums with, read when a query runs (SPEC §7.1): the half-life in force,
# and per tenant and source the credibility an admin set last (none: the model's default credibility).
READ_TIME_WEIGHTS = {
    "half_life_in_force": "ifNull((SELECT argMax(half_life_days, updated_at) FROM reputation_model), 0)",
    "credibilities_set": (
        "(SELECT tenant, source, toNullable(argMax(credibility, updated_at)) AS credibility"
        " FROM source_credibility GROUP BY tenant, source)"
    ),
}


def formula_query(name: str, scope: str = EVERY_IDENTITY) -> str:
    """sql/<name>.sql with the model's values rendered in, run for the identities `scope` selects (SQL)."""
    return render(load(name), {**formula_sql(), **READ_TIME_WEIGHTS, "scope": scope})


@dataclass(frozen=True)
class Definition:
    view: str
    statements: tuple[str, ...]  # what creates the view on this deployment (one machine, or a cluster), rendered now

    @property
    def checksum(self) -> str:
        return hashlib.sha256(";\n".join(self.statements).encode()).hexdigest()


def definitions(settings: Settings, database: str) -> list[Definition]:
    """Each sql/definitions/<view>.sql as the statements that create the view for these settings."""
    views = sorted(entry.name.removesuffix(".sql") for entry in DEFINITIONS.iterdir() if entry.name.endswith(".sql"))
    return [
        Definition(
            view,
            tuple(
                statements(
                    f"CREATE OR REPLACE VIEW {view} {{{{on_cluster}}}} AS\n{formula_query(f'definitions/{view}')}",
                    settings,
                    database,
                )
            ),
        )
        for view in views
    ]


def _recorded(store: Store) -> dict[str, str] | None:
    """The checksum each definition was last created with; None before their record table exists."""
    if not store.client.query("EXISTS TABLE schema_definitions").result_rows[0][0]:
        return None
    rows = store.client.query("SELECT name, checksum FROM schema_definitions FINAL").result_rows
    return {name: checksum for name, checksum in rows}


def apply_definitions(store: Store) -> list[str]:
    """(Re)creates each definition whose rendered text changed since it was last created; returns their
    names (definitions/<view>)."""
    recorded = _recorded(store)
    if recorded is None:
        return []
    applied = []
    for definition in definitions(store.settings, store.database):
        if recorded.get(definition.view) == definition.checksum:
            continue
        for statement in definition.statements:
            store.client.command(statement)
        writer.schema_record(store, "schema_definitions", [definition.view, definition.checksum], ("name", "checksum"))
        applied.append(f"definitions/{definition.view}")
    return applied
