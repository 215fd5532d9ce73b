"""Repeatable definitions: the views whose query is the reputation formula, sql/definitions/<view>.sql, and
the refreshable view that keeps the fleet's table from it (REFRESHED_TABLES).

A numbered migration is applied once and never changes; a definition is (re)created whenever its rendered
text differs from the one it was last created with, as Flyway's repeatable migrations are. Its template's
{{placeholders}} are the model's constants and formula (service/reputation/model.py), what the formula reads
when it runs (READ_TIME_WEIGHTS; BOUND_WEIGHTS for the reads of one tenant's identities) and {{scope}}, which
the view renders as every identity; so a change of the model is an edit of model.py, and the next `repute
migrate` (the service runs it at start) re-creates the view. The reads that run the formula for one identity
render the same templates (`formula_query`). The migration runner applies definitions after the numbered
migrations, from the one that makes their record table (0018) on: before it, what they read may not exist.
"""

import hashlib
from collections.abc import Collection
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
# What the formula weighs the stored sums with, read when a query runs (SPEC §7.1): the half-life in force, and
# per tenant and source the credibility an admin set last (none: the model's default credibility). The view
# (every identity) joins them in.
READ_TIME_WEIGHTS = {
    "half_life_in_force": "ifNull((SELECT argMax(half_life_days, updated_at) FROM reputation_model), 0)",
    "credibilities_join": (
        "LEFT JOIN (SELECT tenant, source, toNullable(argMax(credibility, updated_at)) AS credibility"
        " FROM source_credibility GROUP BY tenant, source) AS known USING (tenant, source)"
    ),
    "credibility": f"ifNull(known.credibility, {formula_sql()['default_credibility']})",
}
# A read of one tenant's identities takes the same values as parameters (`bound_weights`, read by
# sql/formula_weights.sql just before): without the join and the scalar subquery the engine has less to plan
# for each read (bench/README.md, "The runs list without looking up finalized versions, and the per-identity
# reads' planning").
BOUND_WEIGHTS = {
    "half_life_in_force": "{half_life:Float64}",
    "credibilities_join": "",
    "credibility": (
        "transform(source, {credibility_sources:Array(String)}, {credibilities:Array(Float64)},"
        f" {formula_sql()['default_credibility']})"
    ),
}


def bound_weights(store: Store, tenant: str) -> dict[str, object]:
    """The parameters of BOUND_WEIGHTS for a read of the tenant's identities (sql/formula_weights.sql): the
    half-life in force, and the sources whose credibility an admin set with the last one set for each."""
    rows = store.client.query(load("formula_weights"), parameters={"tenant": tenant}).result_rows
    credibilities = {source: value for is_half_life, source, value in rows if not is_half_life}
    return {
        "half_life": next(value for is_half_life, _, value in rows if is_half_life),
        "credibility_sources": list(credibilities),
        "credibilities": list(credibilities.values()),
    }


# How long before a refresh of the fleet table started a write may have arrived and still be unseen by it
# (an insert under way, a signal's arrival): the refresh recomputes the identities written to from this long
# before the last one started, and a read takes an identity's row only when nothing it was computed from was
# written since this long before the refresh (sql/identity_reputation_refreshed.sql).
REFRESH_MARGIN_SECONDS = 300

# The days the formula is computed at (its {{as_of_days}}): the one day of the parameter as_of, or each day of
# the array parameter as_of_days (one identity's history).
ONE_DAY = "[{as_of:Date}]"
EACH_DAY = "{as_of_days:Array(Date)}"


def formula_query(
    name: str, scope: str = EVERY_IDENTITY, days: str = ONE_DAY, weights: dict[str, str] = READ_TIME_WEIGHTS
) -> str:
    """sql/<name>.sql with the model's values rendered in, run for the identities `scope` selects (SQL) on
    `days` (SQL: an array of dates), weighed by `weights` (READ_TIME_WEIGHTS, or BOUND_WEIGHTS for a read of
    one tenant's identities)."""
    values = {"scope": scope, "as_of_days": days, "refresh_margin_seconds": str(REFRESH_MARGIN_SECONDS)}
    return render(load(name), {**formula_sql(), **weights, **values})


# The refreshable materialized views among the definitions, and the table each one refreshes. Such a view
# cannot be replaced in place: it is dropped and created again (its first refresh runs at once).
REFRESHED_TABLES = {"reputation_scores_mv": "reputation_scores"}
# The migration from which on what a definition reads exists: the daily sums' columns of 0027 (the formula,
# and the fleet table's refresh, which reads it); until it is applied the definition waits (and the views of
# migrations 0002 and 0010 stay).
NEEDS_MIGRATION = {"reputation_at": 27, "reputation_scores_mv": 27}


def _creating(view: str) -> str:
    """What creates the definition `view` (a template for `statements`)."""
    query = formula_query(f"definitions/{view}")
    if view not in REFRESHED_TABLES:
        return f"CREATE OR REPLACE VIEW {view} {{{{on_cluster}}}} AS\n{query}"
    return (
        f"DROP VIEW IF EXISTS {view} {{{{on_cluster}}}};\n"
        f"CREATE MATERIALIZED VIEW IF NOT EXISTS {view} {{{{on_cluster}}}}\n"
        f"REFRESH EVERY {{{{reputation_refresh_seconds}}}} SECOND TO {REFRESHED_TABLES[view]} AS\n{query}"
    )


@dataclass(frozen=True)
class Definition:
    view: str
    statements: tuple[str, ...]  # what creates the view on this deployment (one machine, or a cluster), rendered now

    @property
    def needs_migration(self) -> int:
        return NEEDS_MIGRATION[self.view]

    @property
    def checksum(self) -> str:
        return hashlib.sha256(";\n".join(self.statements).encode()).hexdigest()


def definitions(settings: Settings, database: str) -> list[Definition]:
    """Each sql/definitions/<view>.sql as the statements that create the view for these settings."""
    views = sorted(entry.name.removesuffix(".sql") for entry in DEFINITIONS.iterdir() if entry.name.endswith(".sql"))
    return [Definition(view, tuple(statements(_creating(view), settings, database))) for view in views]


def _recorded(store: Store) -> dict[str, str] | None:
    """The checksum each definition was last created with; None before their record table exists."""
    if not store.client.query("EXISTS TABLE schema_definitions").result_rows[0][0]:
        return None
    rows = store.client.query("SELECT name, checksum FROM schema_definitions FINAL").result_rows
    return {name: checksum for name, checksum in rows}


def apply_definitions(store: Store, migrated: Collection[int]) -> list[str]:
    """(Re)creates each definition whose rendered text changed since it was last created, once the migration
    it needs is among those `migrated` (versions); returns their names (definitions/<view>)."""
    recorded = _recorded(store)
    if recorded is None:
        return []
    applied = []
    for definition in definitions(store.settings, store.database):
        if recorded.get(definition.view) == definition.checksum or definition.needs_migration not in migrated:
            continue
        for statement in definition.statements:
            store.client.command(statement)
        writer.schema_record(store, "schema_definitions", [definition.view, definition.checksum], ("name", "checksum"))
        applied.append(f"definitions/{definition.view}")
    return applied
