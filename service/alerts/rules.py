"""The fleet degradation rules (SPEC §11): one SQL file each in sql/alerts/, thresholds from Settings.

The same SQL feeds GET /v1/alerts, `repute alerts`, the background notifier and the Grafana alert rules.
"""

from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from service.settings import Settings
from service.store import alerts as alert_store
from service.store.client import Store

Thresholds = dict[str, float | int]


@dataclass(frozen=True)
class Rule:
    name: str  # sql/alerts/<name>.sql
    thresholds: Callable[[Settings], Thresholds]


RULES: tuple[Rule, ...] = (
    Rule(
        "identity_score_drop",
        lambda s: {"min_drop": s.alert_identity_drop_points, "min_confidence": s.alert_identity_min_confidence},
    ),
    Rule(
        "fleet_trust_drop",
        lambda s: {"min_drop": s.alert_fleet_trust_drop_points, "min_runs": s.alert_fleet_min_runs},
    ),
    Rule("failure_surge", lambda s: {"ratio": s.alert_failure_surge_ratio, "min_runs": s.alert_failure_surge_min_runs}),
    Rule("unsafe_share", lambda s: {"min_share": s.alert_unsafe_share, "min_runs": s.alert_fleet_min_runs}),
    Rule(
        "execution_error_surge",
        lambda s: {"ratio": s.alert_execution_error_surge_ratio, "min_runs": s.alert_execution_error_min_runs},
    ),
)


@dataclass(frozen=True)
class Alert:
    """One firing alert: a row of a rule's SQL."""

    alert: str
    severity: str
    subject: str
    value: float
    baseline: float | None
    message: str

    @property
    def key(self) -> str:
        """Identifies the alert across evaluations: the rule and what it fires about."""
        return f"{self.alert}:{self.subject}"


def evaluate(store: Store, tenant: str, settings: Settings, now: datetime) -> list[Alert]:
    """Every rule for one tenant at `now`: the alerts firing, rule by rule."""
    return [
        Alert(**row)
        for rule in RULES
        for row in alert_store.run_rule(store, rule.name, tenant, now, rule.thresholds(settings))
    ]


def report(store: Store, tenant: str, settings: Settings, now: datetime) -> dict[str, Any]:
    """The alerts firing now, shaped for the API and the CLI."""
    return {"evaluated_at": now, "alerts": [asdict(alert) for alert in evaluate(store, tenant, settings, now)]}
