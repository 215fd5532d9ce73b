"""The schema on a ClickHouse cluster (SPEC §14, docs/cluster.md): every migration rendered for
REPUTE_CLICKHOUSE_CLUSTER, read back statement by statement. No cluster is needed: the statements are
rendered as `repute migrate --print` shows them, and the embedded engine's parser checks each one."""

import re

import pytest
from typer.testing import CliRunner

from service.cli import app
from service.errors import MigrationError
from service.settings import Settings
from service.store.client import Store
from service.store.cluster import UndecidedTable, for_cluster, mutable
from service.store.migrate import every_statement

CLUSTER = "repute"
SERVER = "http://clickhouse.invalid:8123/repute"
# SPEC §14's sharding keys, for the tables it names.
SPEC_SHARDING = {
    "reputation_events": "cityHash64(tenant, identity)",
    "reputation_daily_sources": "cityHash64(tenant, identity)",
    "runs": "cityHash64(tenant, run_id)",
    "run_events": "cityHash64(tenant, run_id)",
    "run_failures": "cityHash64(tenant, run_id)",
}
SHARD_PATH = "'/clickhouse/tables/{shard}/{database}/{table}', '{replica}'"
EVERYWHERE_PATH = "'/clickhouse/tables/all/{database}/{table}', '{replica}'"

_TABLE = re.compile(r"^CREATE TABLE IF NOT EXISTS (\w+)( ON CLUSTER (\w+))?")
_ENGINE = re.compile(r"^ENGINE = (\w+(\(.*\))?)$", re.MULTILINE)
_VIEW = re.compile(r"^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) ON CLUSTER \w+\s+(REFRESH [^\n]*\s+)?TO (\w+) AS")
_SOURCES = re.compile(r"\b(?:FROM|JOIN)\s+(\w+)")


def _statements(cluster: str | None) -> list[str]:
    settings = Settings(clickhouse_url=SERVER, cluster=cluster)
    return [statement for statement in every_statement(settings) if not statement.startswith("--")]


def _tables(statements: list[str]) -> dict[str, str]:
    """Each created table's engine clause (name and arguments), by name."""
    tables = {}
    for statement in statements:
        if match := _TABLE.match(statement):
            engine = _ENGINE.search(statement)
            assert engine is not None, statement
            tables[match.group(1)] = engine.group(1)
    return tables


@pytest.fixture(scope="module")
def cluster_statements() -> list[str]:
    return _statements(CLUSTER)


def test_every_table_is_replicated_and_every_sharded_one_has_its_distributed_table(
    cluster_statements: list[str],
) -> None:
    one_machine = _tables(_statements(None))
    on_cluster = _tables(cluster_statements)
    for table in one_machine:
        if (distributed := on_cluster.get(table, "")).startswith("Distributed("):
            storage = on_cluster[f"{table}_local"]
            assert distributed.startswith(f"Distributed({CLUSTER}, 'repute', {table}_local, cityHash64(tenant, ")
            assert storage.startswith("Replicated") and SHARD_PATH in storage, (table, storage)
        else:
            assert on_cluster[table].startswith("Replicated") and EVERYWHERE_PATH in on_cluster[table], table
    for table, key in SPEC_SHARDING.items():
        assert on_cluster[table] == f"Distributed({CLUSTER}, 'repute', {table}_local, {key})"
    # The engine's arguments of the single-machine table follow the Keeper path and replica.
    assert on_cluster["runs_local"] == f"ReplicatedReplacingMergeTree({SHARD_PATH}, version)"
    assert on_cluster["api_keys"] == f"ReplicatedReplacingMergeTree({EVERYWHERE_PATH}, version)"
    assert set(on_cluster) == set(one_machine) | {f"{t}_local" for t, e in on_cluster.items() if "Distributed" in e}


def test_materialized_views_fold_each_shards_rows_into_the_same_shards_tables(cluster_statements: list[str]) -> None:
    views = {}
    for statement in cluster_statements:
        if match := _VIEW.match(statement):
            views[match.group(1)] = (match.group(2), match.group(3), set(_SOURCES.findall(statement)))
    assert views["reputation_daily_types_mv"] == (None, "reputation_daily_types_local", {"reputation_events_local"})
    refresh, target, sources = views["reputation_scores_mv"]
    assert refresh.rstrip().endswith("APPEND") and target == "reputation_scores_local"
    # the incremental refresh: the shard's own scores, daily sums (through reputation_at), events and runs'
    # figures, and the settings every node holds
    assert sources == {
        "reputation_at_local", "reputation_scores_local", "reputation_events_local", "identity_run_days_local",
        "activity", "fleet_refresh_requests", "source_credibility", "reputation_model",
    }  # fmt: skip
    # the last of each: the definition's (sql/definitions/reputation_at.sql), after the migrations' views
    twin = [s for s in cluster_statements if s.startswith("CREATE OR REPLACE VIEW reputation_at_local")][-1]
    assert "FROM reputation_daily_types_local" in twin and "FROM source_credibility" in twin
    everyone = [s for s in cluster_statements if s.startswith("CREATE OR REPLACE VIEW reputation_at ")][-1]
    assert "FROM reputation_daily_types\n" in everyone  # the alerts and Grafana read the whole fleet


def test_column_changes_reach_the_distributed_table_and_the_rest_only_the_storage(
    cluster_statements: list[str],
) -> None:
    content_hash = "ADD COLUMN IF NOT EXISTS content_hash String DEFAULT '' AFTER diagnosis_hash"
    assert f"ALTER TABLE runs_local ON CLUSTER repute {content_hash}" in cluster_statements
    assert f"ALTER TABLE runs ON CLUSTER repute {content_hash}" in cluster_statements
    settings = [s for s in cluster_statements if "MODIFY SETTING merge_selector_base" in s]
    assert settings and all(re.match(r"ALTER TABLE \w+_local ", s) for s in settings)
    indexes = [s for s in cluster_statements if "inserted_at_minmax" in s and s.startswith("ALTER")]
    assert len(indexes) == 2 and all(s.startswith("ALTER TABLE reputation_events_local ") for s in indexes)


def test_every_ddl_statement_runs_on_the_whole_cluster_and_the_embedded_only_ones_nowhere(
    cluster_statements: list[str],
) -> None:
    for statement in cluster_statements:
        if not statement.startswith("INSERT"):
            assert f" ON CLUSTER {CLUSTER}" in statement.split("\n")[0], statement[:80]
    assert not any("min_bytes_for_full_part_storage" in s for s in cluster_statements)


def test_every_rendered_statement_parses(cluster_statements: list[str], embedded_store: Store) -> None:
    """The embedded engine's own parser (formatQuery) reads each statement: no syntax slips through."""
    for statement in cluster_statements:
        embedded_store.client.query("SELECT formatQuery({statement:String})", parameters={"statement": statement})


def test_a_table_without_a_layout_or_an_alter_mixing_kinds_is_refused() -> None:
    with pytest.raises(UndecidedTable, match="table nova has no layout on a cluster"):
        for_cluster(
            "CREATE TABLE IF NOT EXISTS nova ON CLUSTER c (a UInt8) ENGINE = ReplicatedMergeTree ORDER BY a", "db"
        )
    with pytest.raises(MigrationError, match="separate statements"):
        for_cluster("ALTER TABLE runs ON CLUSTER c ADD COLUMN x UInt8, MODIFY SETTING merge_selector_base = 5", "db")
    with pytest.raises(MigrationError, match="sharded alike"):
        for_cluster("CREATE MATERIALIZED VIEW IF NOT EXISTS m ON CLUSTER c TO runs AS SELECT * FROM api_keys", "db")


def test_migrate_print_shows_the_cluster_ddl_where_no_cluster_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    from service.settings import get_settings

    monkeypatch.setenv("REPUTE_CLICKHOUSE_URL", SERVER)
    monkeypatch.setenv("REPUTE_CLICKHOUSE_CLUSTER", CLUSTER)
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(app, ["migrate", "--print"])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    assert "-- 0016_spans_by_trace.sql" in result.output
    assert "ENGINE = Distributed(repute, 'repute', runs_local, cityHash64(tenant, run_id));" in result.output


def test_mutations_reach_every_shards_storage(embedded_store: Store) -> None:
    assert mutable("run_failures", CLUSTER) == "run_failures_local ON CLUSTER repute"
    assert mutable("api_keys", CLUSTER) == "api_keys ON CLUSTER repute"
    assert embedded_store.mutable("run_failures") == "run_failures"
