"""SQL for the alert rules (sql/alerts/) and the alert transitions table (migrations/0004_alert_state)."""

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

from service.store.client import Store
from service.store.queries import load
from service.store.rows import dicts


def run_rule(
    store: Store, rule: str, tenant: str, now: datetime, thresholds: Mapping[str, float | int]
) -> list[dict[str, Any]]:
    """The firing rows of sql/alerts/<rule>.sql for one tenant, evaluated at `now`."""
    parameters = {"tenant": tenant, "now": now, **thresholds}
    return dicts(store.client.query(load(f"alerts/{rule}"), parameters=parameters))


def active_tenants(store: Store, since: date) -> list[str]:
    """Tenants with reputation evidence since the day given, and tenants with alert history."""
    result = store.client.query(
        "SELECT tenant FROM (SELECT tenant FROM reputation_daily_types WHERE day >= {since:Date} GROUP BY tenant"
        " HAVING sum(counted_rows) != 0 UNION DISTINCT SELECT DISTINCT tenant FROM alert_state) ORDER BY tenant",
        parameters={"since": since},
    )
    return [row[0] for row in result.result_rows]


def last_transitions(store: Store, tenant: str) -> list[dict[str, Any]]:
    """The latest transition of each alert key of the tenant (its current status)."""
    result = store.client.query(
        "SELECT * FROM alert_state WHERE tenant = {tenant:String}"
        " ORDER BY alert_key, seq DESC, notified DESC LIMIT 1 BY alert_key",
        parameters={"tenant": tenant},
    )
    return dicts(result)


def pending_transitions(store: Store, tenants: Sequence[str]) -> list[dict[str, Any]]:
    """Transitions not delivered yet, oldest first (per alert key in seq order)."""
    result = store.client.query(
        "SELECT * FROM (SELECT * FROM alert_state WHERE tenant IN {tenants:Array(String)}"
        " ORDER BY tenant, alert_key, seq, notified DESC LIMIT 1 BY tenant, alert_key, seq)"
        " WHERE notified = 0 ORDER BY changed_at, tenant, alert_key, seq",
        parameters={"tenants": list(tenants)},
    )
    return dicts(result)
