"""The Grafana provisioning (SPEC §12): generated from sql/ and current; every panel, variable and alert
query runs on a store seeded by `repute demo`, with the ClickHouse plugin's macros and the dashboards'
variables expanded as Grafana would; and the compose stack and the provisioning files agree."""

import json
import re
import shutil
import subprocess
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from service.grafana import ALERTING_FILE, DASHBOARDS_DIR, rendered
from service.services.demo import identity_names
from service.store.client import Store

ROOT = Path(__file__).resolve().parents[1]
PROVISIONING = ROOT / "grafana" / "provisioning"
DASHBOARDS = sorted(DASHBOARDS_DIR.glob("*.json"))
PANEL_COLUMNS = {
    "Trust over time": ("time", "identity", "trust"),
    "Runs by readiness": ("time", "readiness", "runs"),
    "Dimension scores": (
        "identity", "runs", "trust", "unsafe_runs", "loop_control", "memory_integrity", "tool_output_utilization",
        "context_health", "cost_efficiency", "skill_adherence",
    ),
    "Alerts firing": ("alert", "severity", "subject", "value", "baseline", "message"),
    "Reputation": (
        "identity", "as_of", "computed_at", "overall", "task_quality", "economic", "identity_hygiene", "confidence",
        "events", "positive_events", "negative_events", "failures", "score_7d_ago", "score_30d_ago", "trend_7d",
        "trend_30d", "runs", "execution_errors", "execution_error_share", "unsafe_runs", "last_run_at",
        "primary_failures", "primary_impacts",
    ),
    "Fleet mean trust": ("time", "mean_trust"),
    "Failures over time": ("time", "failure_type", "runs"),
    "Failures by type": ("failure_type", "runs", "identities", "critical", "high", "medium", "primary", "mean_impact"),
    "Execution errors over time": ("time", "cause", "runs"),
    "By stage and reason": ("stage", "reason", "runs", "identities", "share_of_runs", "first_seen", "last_seen"),
    "Runs": (
        "run_at", "run_id", "identity", "suite", "task_id", "execution_status", "trust_score", "readiness",
        "primary_failure", "failure_stage", "failure_reason_code", "tool_calls", "errors", "total_tokens",
    ),
}  # fmt: skip
ALERT_RULE_COLUMNS = ("alert", "severity", "subject", "firing")


def _sqlstring(values: list[str]) -> str:
    """Grafana's `sqlstring` variable format: each value quoted, quotes doubled, joined by commas."""
    return ",".join("'" + value.replace("'", "''") + "'" for value in values)


class GrafanaStandIn:
    """Expands what Grafana and its ClickHouse plugin expand before a query reaches ClickHouse."""

    def __init__(self, start: datetime, end: datetime, interval_seconds: int, variables: dict[str, list[str]]):
        self.start, self.end = int(start.timestamp()), int(end.timestamp())
        self.interval = interval_seconds
        self.variables = variables

    def expand(self, sql: str) -> str:
        sql = re.sub(r"\$\{(\w+):sqlstring\}", lambda m: _sqlstring(self.variables[m[1]]), sql)
        sql = re.sub(r"\$__timeFilter\((\w+)\)", lambda m: self._time_filter(m[1]), sql)
        sql = re.sub(r"\$__timeInterval\((\w+)\)", lambda m: self._bucket(m[1]), sql)
        sql = sql.replace("$__fromTime", f"toDateTime({self.start})").replace("$__toTime", f"toDateTime({self.end})")
        sql = sql.replace("$__interval_s", str(self.interval))
        assert "$" not in sql, f"a macro or variable the stand-in does not know: {sql}"
        return sql

    def _time_filter(self, column: str) -> str:
        return f"{column} >= toDateTime({self.start}) AND {column} <= toDateTime({self.end})"

    def _bucket(self, column: str) -> str:
        return f"toStartOfInterval(toDateTime({column}), INTERVAL {self.interval} second)"


def _columns(store: Store, sql: str) -> tuple[str, ...]:
    return tuple(row[0] for row in store.client.query(f"DESCRIBE TABLE ({sql})").result_rows)


def _rows(store: Store, sql: str) -> list[tuple]:
    return store.client.query(sql).result_rows


def _load(path: Path) -> Any:
    return json.loads(path.read_text()) if path.suffix == ".json" else yaml.safe_load(path.read_text())


def test_the_provisioning_is_what_sql_renders() -> None:
    """Regenerate with `python -m service.codegen` after changing sql/ or service/grafana.py."""
    for path, content in rendered().items():
        assert path.exists() and path.read_text() == content, f"{path} is stale: run python -m service.codegen"
    assert set(DASHBOARDS) == {p for p in rendered() if p.parent == DASHBOARDS_DIR}


@pytest.fixture(scope="module")
def grafana(embedded_store: Store, demo_fleet: tuple) -> GrafanaStandIn:
    """Grafana over the last 30 days of the demo fleet, every identity selected."""
    _, now = demo_fleet
    probe = GrafanaStandIn(now - timedelta(days=30), now, 3600, {"tenant": ["default"]})
    dashboard = _load(DASHBOARDS_DIR / "repute-agent-health.json")
    (identity,) = [v for v in dashboard["templating"]["list"] if v["name"] == "identity"]
    identities = [row[0] for row in _rows(embedded_store, probe.expand(identity["query"]))]
    assert set(identity_names(12)) <= set(identities)  # the demo's; other writers of `default` may add theirs
    return GrafanaStandIn(now - timedelta(days=30), now, 3600, {"tenant": ["default"], "identity": identities})


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.stem)
def test_every_panel_runs_and_returns_its_columns(embedded_store: Store, grafana: GrafanaStandIn, path: Path) -> None:
    for panel in _load(path)["panels"]:
        (target,) = panel["targets"]
        sql = grafana.expand(target["rawSql"])
        expected = PANEL_COLUMNS[panel["title"]]
        assert _columns(embedded_store, sql) == expected, panel["title"]
        assert _rows(embedded_store, sql), f"{panel['title']} shows nothing on the demo fleet"
        if panel["type"] == "timeseries":
            assert expected[0] == "time" and target["format"] == 0


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.stem)
def test_every_variable_query_runs(embedded_store: Store, grafana: GrafanaStandIn, path: Path) -> None:
    dashboard = _load(path)
    names = [v["name"] for v in dashboard["templating"]["list"]]
    assert names[0] == "tenant" and dashboard["templating"]["list"][0]["query"] == "default"
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            assert _columns(embedded_store, grafana.expand(variable["query"])) == ("identity",)
    uses_identity = any("${identity" in p["targets"][0]["rawSql"] for p in dashboard["panels"])
    assert uses_identity == ("identity" in names)


def test_every_alert_rule_runs(embedded_store: Store, grafana: GrafanaStandIn, demo_fleet: tuple) -> None:
    degrading, _ = demo_fleet
    firing = {}
    for group in _load(ALERTING_FILE)["groups"]:
        for rule in group["rules"]:
            query = next(d for d in rule["data"] if d["refId"] == "A")
            sql = grafana.expand(query["model"]["rawSql"])
            assert _columns(embedded_store, sql) == ALERT_RULE_COLUMNS, rule["title"]
            firing[rule["uid"]] = {row[2] for row in _rows(embedded_store, sql)}
    assert degrading in firing["repute-identity-score-drop"]
    assert firing["repute-execution-error-surge"] == {"agent/provider_error"}


# --- the compose stack and the provisioning agree -------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return _load(ROOT / "docker-compose.yml")


@pytest.fixture(scope="module")
def datasource() -> dict[str, Any]:
    (found,) = _load(PROVISIONING / "datasources" / "clickhouse.yaml")["datasources"]
    return found


def _mounts(service: dict[str, Any]) -> dict[str, str]:
    """Container path -> host path (or volume name) of a service's volumes."""
    return {target: source for source, target, *_ in (v.split(":") for v in service["volumes"])}


def _version(image: str) -> tuple[int, ...]:
    return tuple(int(part) for part in image.rsplit(":", 1)[1].split("."))


def test_clickhouse_is_pinned_healthchecked_persistent_and_unlimited(compose: dict[str, Any]) -> None:
    clickhouse = compose["services"]["clickhouse"]
    assert clickhouse["image"].startswith("clickhouse/clickhouse-server:") and _version(clickhouse["image"]) >= (24, 10)
    assert "SELECT 1" in " ".join(clickhouse["healthcheck"]["test"])
    assert _mounts(clickhouse)["/var/lib/clickhouse"] in compose["volumes"]
    assert clickhouse["ulimits"]["nofile"] == {"soft": 262144, "hard": 262144}


def test_the_service_reaches_clickhouse_over_http(compose: dict[str, Any]) -> None:
    services = compose["services"]
    url = urlsplit(services["repute"]["environment"]["REPUTE_CLICKHOUSE_URL"])
    clickhouse_env = services["clickhouse"]["environment"]
    assert (url.scheme, url.hostname, url.port) == ("http", "clickhouse", 8123)
    assert (url.username, url.path.strip("/")) == (clickhouse_env["CLICKHOUSE_USER"], clickhouse_env["CLICKHOUSE_DB"])
    assert url.password == clickhouse_env["CLICKHOUSE_PASSWORD"]
    assert services["repute"]["depends_on"]["clickhouse"]["condition"] == "service_healthy"
    assert services["repute"]["build"] == "." and "8000:8000" in services["repute"]["ports"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert dockerfile.startswith("# ") and "FROM python:3.11-slim" in dockerfile
    # The image runs the installed wheel (which carries migrations/ and sql/), never the sources.
    assert "pip wheel --no-deps --wheel-dir /wheels ." in dockerfile and "pip install /wheels/*.whl" in dockerfile
    assert "PYTHONPATH" not in dockerfile
    assert '"repute", "serve", "--host", "0.0.0.0"' in dockerfile


def test_grafana_reads_clickhouse_as_its_read_only_user(compose: dict[str, Any], datasource: dict[str, Any]) -> None:
    services = compose["services"]
    grafana = services["grafana"]
    assert datasource["type"] in grafana["environment"]["GF_INSTALL_PLUGINS"]
    assert (datasource["jsonData"]["host"], datasource["jsonData"]["port"]) == ("clickhouse", 8123)
    password_variable = datasource["secureJsonData"]["password"].lstrip("$")
    assert grafana["environment"][password_variable] == services["clickhouse"]["environment"][password_variable]
    users_file = ROOT / _mounts(services["clickhouse"])["/etc/clickhouse-server/users.d/grafana-user.xml"]
    users = users_file.read_text()
    assert f"<{datasource['jsonData']['username']}>" in users and f'from_env="{password_variable}"' in users
    assert f"GRANT SELECT ON {datasource['jsonData']['defaultDatabase']}.*" in users
    assert grafana["depends_on"]["clickhouse"]["condition"] == "service_healthy"


def test_grafana_mounts_the_provisioning_and_the_dashboards(compose: dict[str, Any]) -> None:
    grafana = compose["services"]["grafana"]
    mounts = _mounts(grafana)
    assert (ROOT / mounts["/etc/grafana/provisioning"]).resolve() == PROVISIONING
    (provider,) = _load(PROVISIONING / "dashboards" / "repute.yaml")["providers"]
    assert (ROOT / mounts[provider["options"]["path"]]).resolve() == DASHBOARDS_DIR
    home = grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert (DASHBOARDS_DIR / Path(home).relative_to(provider["options"]["path"])).exists()


def test_every_query_uses_the_provisioned_datasource(datasource: dict[str, Any]) -> None:
    uid = datasource["uid"]
    for path in DASHBOARDS:
        dashboard = _load(path)
        for panel in dashboard["panels"]:
            assert panel["datasource"]["uid"] == uid
            assert all(target["datasource"]["uid"] == uid for target in panel["targets"])
        assert all(v["datasource"]["uid"] == uid for v in dashboard["templating"]["list"] if v["type"] == "query")
    for group in _load(ALERTING_FILE)["groups"]:
        for rule in group["rules"]:
            assert {d["datasourceUid"] for d in rule["data"]} == {uid, "__expr__"}


def test_alerts_go_to_the_webhook_contact_point(compose: dict[str, Any]) -> None:
    alerting = _load(ALERTING_FILE)
    (contact_point,) = alerting["contactPoints"]
    (policy,) = alerting["policies"]
    assert policy["receiver"] == contact_point["name"]
    (receiver,) = contact_point["receivers"]
    assert receiver["type"] == "webhook"
    variable = re.fullmatch(r"\$\{(\w+)\}", receiver["settings"]["url"])[1]
    assert variable in compose["services"]["grafana"]["environment"]
    # Grafana expands $NAME in provisioning files: no other `$` may appear in the rules it loads.
    assert ALERTING_FILE.read_text().count("$") == 1


def _compose_plugin() -> bool:
    docker = shutil.which("docker")
    return docker is not None and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _compose_plugin(), reason="the docker compose plugin is not installed")
def test_docker_compose_accepts_the_file() -> None:
    result = subprocess.run(["docker", "compose", "config", "--quiet"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
