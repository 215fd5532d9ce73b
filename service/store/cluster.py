"""The schema on a ClickHouse cluster (REPUTE_CLICKHOUSE_CLUSTER, SPEC §14): how each migration statement,
written once for one machine, renders for a cluster of shards and replicas.

One naming scheme keeps the service's SQL the same on both deployments: on a cluster a sharded table's
rows live in `<table>_local` on every shard (a Replicated engine, one Keeper path per shard), and
`<table>` is the Distributed table in front of them, which the service, the alerts and Grafana read and
write. The small tables every shard reads whole are replicated to every node instead (one Keeper path
for the cluster) and keep their names. Why each table is laid out as it is: docs/cluster.md.

Statements are rewritten by kind:
- CREATE TABLE: the Replicated engine gets its Keeper path and replica; a sharded table is created as
  `<table>_local` with a Distributed `<table>` in front (sharding key below).
- REPLACE TABLE ... AS SELECT * FROM itself (a change of a key column's type): a sharded table's storage is
  replaced on every node from its own rows (a Keeper path of its own: the replaced table's is still in use
  while the statement runs), and its Distributed table made again in front of it, with its new columns.
- ALTER TABLE of a sharded table: to its storage; a change of columns to the Distributed table too (it
  has the same columns), anything else (settings, indexes) to the storage only.
- CREATE MATERIALIZED VIEW: it runs on every shard over the shard's own rows, so it reads and writes the
  storage tables (an incremental view folds the rows a shard receives into the same shard's table: both
  must be sharded by the same key). A refreshable view APPENDs (a replacing refresh cannot swap a
  Replicated table outside a Replicated database); its target collapses versions, so reads are the same.
- CREATE VIEW: as written, over the Distributed tables, for every reader; a view that a refreshable view
  reads (SHARD_VIEWS) also gets a twin `<view>_local` over the shard's own rows.
Anything else (INSERT ... SELECT of a data migration, DROP VIEW) goes through the Distributed tables.
"""

import re
from collections.abc import Callable

from service.errors import MigrationError

LOCAL_SUFFIX = "_local"

# Sharded tables and their sharding keys. A reputation event, its identity's daily sums, its runs' figures
# (identity_run_days) and its fleet row live on one shard (an identity's read and its refresh stay on it); a
# run's versions, raw events and failures on one shard (FINAL and LIMIT 1 BY collapse a run's versions shard
# by shard). Sessions' records and traces' spans go by the id the run is later made from.
SHARDING_KEYS: dict[str, str] = {
    "reputation_events": "cityHash64(tenant, identity)",
    "reputation_daily": "cityHash64(tenant, identity)",
    "reputation_daily_sources": "cityHash64(tenant, identity)",
    "reputation_daily_types": "cityHash64(tenant, identity)",
    "reputation_scores": "cityHash64(tenant, identity)",
    "identity_run_days": "cityHash64(tenant, identity)",
    "runs": "cityHash64(tenant, run_id)",
    "run_events": "cityHash64(tenant, run_id)",
    "run_failures": "cityHash64(tenant, run_id)",
    "trace_spans": "cityHash64(tenant, run_id)",
    "spans": "cityHash64(tenant, trace_id)",
    "session_records": "cityHash64(tenant, session_id)",
}
# Small tables every node holds whole: settings every shard's reads weigh with (credibility, the
# half-life), keys checked on every request, alert transitions, profiles, the migrations applied, the
# requests for a refresh of every identity.
REPLICATED_EVERYWHERE = frozenset(
    {
        "schema_migrations",
        "schema_definitions",
        "api_keys",
        "alert_state",
        "source_credibility",
        "reputation_model",
        "diagnosis_profiles",
        "fleet_refresh_requests",
    }
)
# Views that a refreshable view reads: each shard computes over its own rows.
SHARD_VIEWS = frozenset({"reputation_at"})

# What every statement runs with on a cluster (docs/cluster.md says what each guarantee needs of them): an
# INSERT into a Distributed table returns once each shard has stored its rows (not once they are queued on
# the node that took it), on a majority of the shard's replicas (with two replicas, both), so any replica
# a later read reaches has them; an IN (subquery) over a Distributed table inside a distributed query reads
# the subquery once and sends its result to the shards.
CLIENT_SETTINGS: dict[str, object] = {
    "distributed_foreground_insert": 1,
    "insert_quorum": "auto",
    "distributed_product_mode": "global",
}

SHARD_PATH = "/clickhouse/tables/{shard}/{database}/{table}"
EVERYWHERE_PATH = "/clickhouse/tables/all/{database}/{table}"

_CREATE_TABLE = re.compile(r"^CREATE TABLE IF NOT EXISTS (\w+) ON CLUSTER (\S+)", re.IGNORECASE)
_ENGINE = re.compile(r"ENGINE = (Replicated\w*MergeTree)(?:\(([^()]*)\))?")
_REPLACE_TABLE = re.compile(r"^REPLACE TABLE (\w+) ON CLUSTER (\S+)", re.IGNORECASE)
_ALTER_TABLE = re.compile(r"^ALTER TABLE (\w+) (ON CLUSTER \S+)", re.IGNORECASE)
_ALTER_ACTION = re.compile(
    r"\b(ADD|MODIFY|DROP|RENAME|CLEAR|COMMENT|MATERIALIZE)\s+(COLUMN|INDEX|SETTING|TTL|PROJECTION|CONSTRAINT)\b"
)
_MATERIALIZED_VIEW = re.compile(
    r"^(CREATE MATERIALIZED VIEW IF NOT EXISTS \w+ ON CLUSTER \S+\s+)(REFRESH EVERY \d+ \w+\s+)?TO (\w+)(\s+AS\s+)",
    re.IGNORECASE,
)
_VIEW = re.compile(r"^(CREATE (?:OR REPLACE )?VIEW (?:IF NOT EXISTS )?)(\w+)( ON CLUSTER )", re.IGNORECASE)
_SOURCE = re.compile(r"\b(FROM|JOIN)\s+(\w+)\b", re.IGNORECASE)


class UndecidedTable(MigrationError):
    def __init__(self, table: str) -> None:
        super().__init__(
            f"table {table} has no layout on a cluster: add it to SHARDING_KEYS or REPLICATED_EVERYWHERE"
            " (service/store/cluster.py)"
        )


def local_name(table: str) -> str:
    return table + LOCAL_SUFFIX


def storage(table: str) -> str:
    """The table holding a shard's rows of `table` on a cluster."""
    return local_name(table) if table in SHARDING_KEYS else table


def mutable(table: str, cluster: str | None) -> str:
    """What a mutation (DELETE, ALTER ... UPDATE) names to reach `table`'s rows: the table, or on a cluster
    its storage on every node (a Distributed table takes no mutation)."""
    return f"{storage(table)} ON CLUSTER {cluster}" if cluster else table


def _replicated_engine(statement: str, table: str, path: str | None = None) -> str:
    path = path or (SHARD_PATH if table in SHARDING_KEYS else EVERYWHERE_PATH)

    def with_path(match: re.Match[str]) -> str:
        arguments = ", ".join(part for part in (f"'{path}'", "'{replica}'", match.group(2)) if part)
        return f"ENGINE = {match.group(1)}({arguments})"

    replicated, count = _ENGINE.subn(with_path, statement, count=1)
    if count != 1:
        raise MigrationError(f"table {table}: no Replicated MergeTree engine to place on the cluster")
    return replicated


def _create_table(statement: str, database: str) -> list[str]:
    match = _CREATE_TABLE.match(statement)
    assert match is not None
    table, cluster = match.group(1), match.group(2)
    if table not in SHARDING_KEYS and table not in REPLICATED_EVERYWHERE:
        raise UndecidedTable(table)
    replicated = _replicated_engine(statement, table)
    if table not in SHARDING_KEYS:
        return [replicated]
    local = local_name(table)
    distributed = (
        f"CREATE TABLE IF NOT EXISTS {table} ON CLUSTER {cluster} AS {local}\n"
        f"ENGINE = Distributed({cluster}, '{database}', {local}, {SHARDING_KEYS[table]})"
    )
    return [replicated.replace(f" {table} ON CLUSTER", f" {local} ON CLUSTER", 1), distributed]


def _replace_table(statement: str, database: str) -> list[str]:
    match = _REPLACE_TABLE.match(statement)
    assert match is not None
    table, cluster = match.group(1), match.group(2)
    if table not in SHARDING_KEYS:
        return [_replicated_engine(statement, table)]
    local = local_name(table)
    replaced = _replicated_engine(statement, table, SHARD_PATH + "/{uuid}")
    replaced = replaced.replace(f" {table} ON CLUSTER", f" {local} ON CLUSTER", 1)
    replaced = re.sub(rf"\bFROM {table}\s*$", f"FROM {local}", replaced)
    distributed = (
        f"CREATE OR REPLACE TABLE {table} ON CLUSTER {cluster} AS {local}\n"
        f"ENGINE = Distributed({cluster}, '{database}', {local}, {SHARDING_KEYS[table]})"
    )
    return [replaced, distributed]


def _alter_table(statement: str) -> list[str]:
    match = _ALTER_TABLE.match(statement)
    assert match is not None
    table = match.group(1)
    if table not in SHARDING_KEYS:
        return [statement]
    on_storage = f"ALTER TABLE {local_name(table)} {match.group(2)}" + statement[match.end() :]
    objects = {found.group(2).upper() for found in _ALTER_ACTION.finditer(statement[match.end() :])}
    if objects == {"COLUMN"}:
        return [on_storage, statement]  # the Distributed table has the storage's columns
    if "COLUMN" in objects:
        raise MigrationError(f"ALTER TABLE {table}: put column changes and other changes in separate statements")
    return [on_storage]


def _shard_sources(select: str) -> str:
    """The query over the shard's own rows: sharded tables and SHARD_VIEWS read as their local twins."""

    def local(match: re.Match[str]) -> str:
        name = match.group(2)
        if name in SHARDING_KEYS or name in SHARD_VIEWS:
            return f"{match.group(1)} {local_name(name)}"
        return match.group(0)

    return _SOURCE.sub(local, select)


def _sharding_key_of(table: str) -> str | None:
    return SHARDING_KEYS.get(table)


def _materialized_view(statement: str) -> list[str]:
    match = _MATERIALIZED_VIEW.match(statement)
    if match is None:
        raise MigrationError(f"a materialized view must name its target (TO table): {statement.splitlines()[0]}")
    head, refresh, target, as_ = match.groups()
    select = statement[match.end() :]
    if refresh is None:
        sources = {found.group(2) for found in _SOURCE.finditer(select)}
        if any(_sharding_key_of(source) != _sharding_key_of(target) for source in sources):
            raise MigrationError(f"materialized view to {target}: its source and target must be sharded alike")
        return [f"{head}TO {storage(target)}{as_}{_shard_sources(select)}"]
    return [f"{head}{refresh.rstrip()} APPEND\nTO {storage(target)}{as_}{_shard_sources(select)}"]


def _view(statement: str) -> list[str]:
    match = _VIEW.match(statement)
    assert match is not None
    view = match.group(2)
    if view not in SHARD_VIEWS:
        return [statement]
    twin = f"{match.group(1)}{local_name(view)}{match.group(3)}" + _shard_sources(statement[match.end() :])
    return [statement, twin]


_RENDERERS: list[tuple[re.Pattern[str], Callable[[str, str], list[str]]]] = [
    (_CREATE_TABLE, _create_table),
    (_REPLACE_TABLE, _replace_table),
    (_ALTER_TABLE, lambda statement, _: _alter_table(statement)),
    (re.compile(r"^CREATE MATERIALIZED VIEW", re.IGNORECASE), lambda statement, _: _materialized_view(statement)),
    (_VIEW, lambda statement, _: _view(statement)),
]


def for_cluster(statement: str, database: str) -> list[str]:
    """The statements that carry out `statement` (rendered with ON CLUSTER and Replicated engines) on the
    cluster, in order."""
    for pattern, render in _RENDERERS:
        if pattern.match(statement):
            return render(statement, database)
    return [statement]
