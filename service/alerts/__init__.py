"""Fleet degradation alerts (SPEC §11): SQL rules in sql/alerts/, evaluated on demand and by a notifier."""

from service.alerts.rules import RULES, Alert, Rule, evaluate, report

__all__ = ["RULES", "Alert", "Rule", "evaluate", "report"]
