"""Grafana provisioning generated from sql/ (SPEC §12): every panel runs a named query of sql/ and every
provisioned alert rule runs a rule of sql/alerts/. Their query parameters become the ClickHouse plugin's
macros and the dashboards' template variables, so Grafana runs the very text the service and the tests run.

`python -m service.codegen` rewrites grafana/dashboards/*.json and grafana/provisioning/alerting/repute.json
with the other generated files; a test fails when those files are not what this module renders.
"""

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from service.alerts.rules import RULES, Rule
from service.reputation import model
from service.settings import Settings
from service.store.queries import source
from service.vocab import DEFAULT_TENANT

GRAFANA_DIR = Path(__file__).resolve().parents[1] / "grafana"
DASHBOARDS_DIR = GRAFANA_DIR / "dashboards"
ALERTING_FILE = GRAFANA_DIR / "provisioning" / "alerting" / "repute.json"
DATASOURCE = {"type": "grafana-clickhouse-datasource", "uid": "repute-clickhouse"}
EXPRESSIONS = {"type": "__expr__", "uid": "__expr__"}
CONTACT_POINT = "repute-webhook"
ALERT_TENANT = DEFAULT_TENANT  # Grafana alert rules cannot use dashboard variables: they watch this tenant
_PARAMETER = re.compile(r"\{(\w+):[^{}]+\}")
Literal = bool | int | float | str

# A panel's query parameters as Grafana writes them: the plugin's macros and the dashboards' variables.
PANEL_VALUES = {
    "tenant": "${tenant:sqlstring}",
    "identities": "[${identity:sqlstring}]",
    "since": "$__fromTime",
    "until": "$__toTime",
    "now": "$__toTime",
    "bucket_seconds": "$__interval_s",
}


def sql_literal(value: Literal) -> str:
    """A fixed panel argument or a threshold as ClickHouse literal text (provisioning files hold SQL text)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def render(sql: str, values: Mapping[str, str]) -> str:
    """Replaces every {name:Type} query parameter by its Grafana text; each parameter needs one."""

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise KeyError(f"no Grafana text for the query parameter {name!r}")
        return values[name]

    return _PARAMETER.sub(substitute, sql).strip()


def named_query(name: str, fixed: Mapping[str, Literal] | None = None) -> str:
    """sql/<name>.sql for a panel; `fixed` gives parameters one value in this panel."""
    return render(source(name), {**PANEL_VALUES, **{k: sql_literal(v) for k, v in (fixed or {}).items()}})


def rule_query(rule: Rule, values: Mapping[str, str]) -> str:
    """sql/alerts/<rule>.sql with the default thresholds of Settings written in."""
    thresholds = {name: sql_literal(value) for name, value in rule.thresholds(Settings.model_construct()).items()}
    return render(source(f"alerts/{rule.name}"), {**values, **thresholds})


def firing_alerts_query() -> str:
    """Every rule at the end of the dashboard's time range, one row per firing alert."""
    return "\nUNION ALL\n".join(f"SELECT * FROM (\n{rule_query(rule, PANEL_VALUES)}\n)" for rule in RULES)


@dataclass(frozen=True)
class Panel:
    title: str
    sql: str
    kind: str = "table"
    width: int = 24
    height: int = 9
    description: str = ""
    unit: str | None = None
    stacked: bool = False
    min_interval: str | None = None

    @property
    def timeseries(self) -> bool:
        return self.kind == "timeseries"

    def to_json(self, panel_id: int, x: int, y: int) -> dict[str, Any]:
        target = {
            "refId": "A",
            "datasource": DATASOURCE,
            "editorType": "sql",
            "format": 0 if self.timeseries else 1,
            "queryType": "timeseries" if self.timeseries else "table",
            "rawSql": self.sql,
        }
        custom = {"drawStyle": "bars", "fillOpacity": 80, "stacking": {"mode": "normal", "group": "A"}}
        defaults: dict[str, Any] = {"custom": custom if self.stacked else {}}
        if self.unit:
            defaults["unit"] = self.unit
        found = {
            "id": panel_id,
            "type": self.kind,
            "title": self.title,
            "description": self.description,
            "datasource": DATASOURCE,
            "gridPos": {"x": x, "y": y, "w": self.width, "h": self.height},
            "targets": [target],
            "fieldConfig": {"defaults": defaults, "overrides": []},
            "options": {},
        }
        if self.min_interval:
            found["interval"] = self.min_interval
        return found


@dataclass(frozen=True)
class Dashboard:
    uid: str
    title: str
    description: str
    panels: tuple[Panel, ...]
    by_identity: bool = True  # has the identity variable

    def variables(self) -> list[dict[str, Any]]:
        tenant = {
            "type": "textbox",
            "name": "tenant",
            "label": "Tenant",
            "query": DEFAULT_TENANT,
            "current": {"text": DEFAULT_TENANT, "value": DEFAULT_TENANT},
            "options": [{"selected": True, "text": DEFAULT_TENANT, "value": DEFAULT_TENANT}],
        }
        identity = {
            "type": "query",
            "name": "identity",
            "label": "Identity",
            "datasource": DATASOURCE,
            "query": named_query("dashboards/identities"),
            "definition": named_query("dashboards/identities"),
            "refresh": 2,
            "multi": True,
            "includeAll": True,
            "sort": 1,
            "current": {"text": ["All"], "value": ["$__all"]},
            "options": [],
        }
        return [tenant, identity] if self.by_identity else [tenant]

    def to_json(self) -> dict[str, Any]:
        return {
            "uid": self.uid,
            "title": self.title,
            "description": self.description,
            "tags": ["repute"],
            "editable": False,
            "timezone": "utc",
            "schemaVersion": 39,
            "version": 1,
            "refresh": "1m",
            "time": {"from": "now-30d", "to": "now"},
            "links": [{"type": "dashboards", "tags": ["repute"], "asDropdown": False, "title": "Repute"}],
            "templating": {"list": self.variables()},
            "annotations": {"list": []},
            "panels": _laid_out(self.panels),
        }


def _laid_out(panels: tuple[Panel, ...]) -> list[dict[str, Any]]:
    """Left to right, then down: a panel that does not fit the 24 columns starts a new row."""
    found, x, y, row_height = [], 0, 0, 0
    for panel_id, panel in enumerate(panels, start=1):
        if x + panel.width > 24:
            x, y, row_height = 0, y + row_height, 0
        found.append(panel.to_json(panel_id, x, y))
        x, row_height = x + panel.width, max(row_height, panel.height)
    return found


def dashboards() -> list[Dashboard]:
    stacked_counts: dict[str, Any] = {"kind": "timeseries", "stacked": True, "min_interval": "1h"}
    return [
        Dashboard("repute-agent-health", "Repute: agent health", "Trust and verdicts of the chosen identities.", (
            Panel("Trust over time", named_query("dashboards/trust_over_time"), "timeseries", height=10,
                  min_interval="6h", description="Mean trust of quality runs per identity (no execution errors)."),
            Panel("Runs by readiness", named_query("dashboards/readiness_over_time"), width=12, **stacked_counts),
            Panel("Dimension scores", named_query("dashboards/dimension_scores"), width=12,
                  description="Per identity over the range: runs, mean trust, unsafe verdicts, the six dimensions."),
        )),
        Dashboard("repute-fleet", "Repute: fleet reputation", "Every identity's 90-day reputation.", (
            Panel("Alerts firing", firing_alerts_query(), height=6,
                  description="sql/alerts/ evaluated at the end of the time range, with the default thresholds."),
            Panel("Reputation", named_query("identities_list", {"sort": "overall", "descending": False,
                  "min_confidence": 0.0, "prefix": "", "q": "", "limit": 10_000, "offset": 0,
                  "window_days": model.WINDOW_DAYS}),
                  height=12,
                  description="Overall and per category (0..100), confidence, 7 and 30 day trends, and the runs"
                  " of the 90 days: execution errors and their share, unsafe verdicts, the last run, and per failure"
                  " type the runs it was the primary failure of and their summed impact; worst first."),
            Panel("Fleet mean trust", named_query("dashboards/fleet_trust"), "timeseries", min_interval="6h"),
        ), by_identity=False),
        Dashboard("repute-failures", "Repute: failure taxonomy", "Detected failure modes over time.", (
            Panel("Failures over time", named_query("dashboards/failures_over_time"),
                  description="Runs showing each failure type.", **stacked_counts),
            Panel("Failures by type", named_query("dashboards/failures_by_type")),
        )),
        Dashboard("repute-execution-errors", "Repute: execution errors", "Infrastructure, not agents.", (
            Panel("Execution errors over time", named_query("dashboards/execution_errors_over_time"),
                  description="Runs that failed at a stage, by stage/reason.", **stacked_counts),
            Panel("By stage and reason", named_query("dashboards/execution_errors_by_cause")),
        )),
        Dashboard("repute-runs", "Repute: run explorer", "Finalized runs, newest first.", (
            Panel("Runs", named_query("dashboards/run_explorer"), height=20),
        )),
    ]  # fmt: skip


def alert_rule(rule: Rule) -> dict[str, Any]:
    """One Grafana rule per SQL rule, evaluated now for the operator tenant: each row is an alert instance
    labelled by alert, severity and subject."""
    values = {"tenant": sql_literal(ALERT_TENANT), "now": "now64(3)"}
    query = f"SELECT alert, severity, subject, toFloat64(1) AS firing FROM (\n{rule_query(rule, values)}\n)"
    return {
        "uid": f"repute-{rule.name.replace('_', '-')}",
        "title": f"Repute: {rule.name.replace('_', ' ')}",
        "condition": "B",
        "for": "0s",
        "noDataState": "OK",
        "execErrState": "Error",
        "isPaused": False,
        "labels": {"service": "repute"},
        "annotations": {
            "summary": "{{ .Labels.alert }} on {{ .Labels.subject }} (tenant " + ALERT_TENANT + ")",
            "description": f"sql/alerts/{rule.name}.sql fires; details: GET /v1/alerts or `repute alerts`.",
        },
        "data": [
            {
                "refId": "A",
                "relativeTimeRange": {"from": 600, "to": 0},
                "datasourceUid": DATASOURCE["uid"],
                "model": {"refId": "A", "datasource": DATASOURCE, "editorType": "sql", "format": 1,
                          "queryType": "table", "rawSql": query},
            },
            {
                "refId": "B",
                "relativeTimeRange": {"from": 0, "to": 0},
                "datasourceUid": EXPRESSIONS["uid"],
                "model": {"refId": "B", "datasource": EXPRESSIONS, "type": "threshold", "expression": "A",
                          "conditions": [{"evaluator": {"type": "gt", "params": [0]}}]},
            },
        ],
    }  # fmt: skip


def alerting() -> dict[str, Any]:
    """Alert rules, the webhook contact point and the policy routing every alert to it."""
    return {
        "apiVersion": 1,
        "groups": [
            {"orgId": 1, "name": "repute-fleet", "folder": "Repute", "interval": "1m",
             "rules": [alert_rule(rule) for rule in RULES]},
        ],
        "contactPoints": [
            {"orgId": 1, "name": CONTACT_POINT, "receivers": [
                {"uid": CONTACT_POINT, "type": "webhook", "disableResolveMessage": False,
                 "settings": {"url": "${GRAFANA_ALERT_WEBHOOK_URL}", "httpMethod": "POST"}},
            ]},
        ],
        "policies": [{"orgId": 1, "receiver": CONTACT_POINT, "group_by": ["grafana_folder", "alertname", "subject"]}],
    }  # fmt: skip


def rendered() -> dict[Path, str]:
    """Every generated file and its content."""
    files = {DASHBOARDS_DIR / f"{d.uid}.json": _json(d.to_json()) for d in dashboards()}
    files[ALERTING_FILE] = _json(alerting())
    return files


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
