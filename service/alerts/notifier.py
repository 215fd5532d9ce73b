"""The background evaluator (SPEC §11): evaluates the rules for every active tenant, records each change of
an alert (it starts firing, it resolves) in ClickHouse before telling anyone, then POSTs the recorded
changes to the webhook in order, each once. While the webhook fails, delivery backs off exponentially and
the changes wait in ClickHouse, so none is lost across a restart.

Several processes evaluating the same store record the same transitions (same keys, so they collapse);
each notification carries an `id` so a receiver can drop the rare duplicate delivery.
"""

import http.client
import logging
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Any

import orjson

from service import __version__
from service.alerts.rules import Alert, evaluate
from service.periodic import Periodic
from service.settings import Settings
from service.store import alerts as alert_store
from service.store import writer
from service.store.client import Store
from service.store.rows import as_utc

log = logging.getLogger("repute.alerts")

FIRING = "firing"
RESOLVED = "resolved"
RETRY_BASE_SECONDS = 5.0
RETRY_MAX_SECONDS = 300.0
POST_TIMEOUT_SECONDS = 10.0
# Tenants without reputation evidence in the windows the rules read (90 + 30 days) have nothing to fire.
ACTIVE_DAYS = 120


class DeliveryFailed(RuntimeError):
    pass


@dataclass(frozen=True)
class Transition:
    """A change of one alert, as recorded and as notified."""

    tenant: str
    alert_key: str
    seq: int
    status: str
    alert: str
    severity: str
    subject: str
    value: float
    baseline: float | None
    message: str
    changed_at: datetime

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> "Transition":
        fields = {name: row[name] for name in cls.__dataclass_fields__}
        return cls(**{**fields, "changed_at": as_utc(row["changed_at"])})

    def row(self, notified: bool) -> dict[str, Any]:
        return {**self.__dict__, "notified": int(notified)}

    def payload(self) -> dict[str, Any]:
        return {
            "id": f"{self.tenant}/{self.alert_key}/{self.seq}",
            "status": self.status,
            "tenant": self.tenant,
            "alert": self.alert,
            "severity": self.severity,
            "subject": self.subject,
            "value": self.value,
            "baseline": self.baseline,
            "message": self.message,
            "changed_at": self.changed_at.isoformat(),
        }


def changes(tenant: str, firing: Sequence[Alert], last: Mapping[str, Transition], now: datetime) -> list[Transition]:
    """Transitions from the last recorded status of each alert to what fires now."""
    firing_by_key = {alert.key: alert for alert in firing}
    started = [
        Transition(tenant, key, _next_seq(last.get(key)), FIRING, alert.alert, alert.severity, alert.subject,
                   alert.value, alert.baseline, alert.message, now)
        for key, alert in firing_by_key.items()
        if key not in last or last[key].status == RESOLVED
    ]  # fmt: skip
    resolved = [
        replace(previous, seq=previous.seq + 1, status=RESOLVED, changed_at=now)
        for key, previous in last.items()
        if previous.status == FIRING and key not in firing_by_key
    ]
    return started + resolved


def _next_seq(previous: Transition | None) -> int:
    return 0 if previous is None else previous.seq + 1


def post_json(url: str, payload: Mapping[str, Any]) -> None:
    """POSTs one notification; any answer but 2xx (or no answer) is a DeliveryFailed."""
    request = urllib.request.Request(
        url,
        data=orjson.dumps(payload),
        headers={"Content-Type": "application/json", "User-Agent": f"repute/{__version__}"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=POST_TIMEOUT_SECONDS) as response:
            response.read()
    except (OSError, http.client.HTTPException) as exc:  # URLError and HTTPError are OSErrors
        raise DeliveryFailed(f"webhook {url}: {exc}") from exc


class AlertNotifier:
    """One evaluation and delivery pass per `tick(now)`; the clock is the caller's."""

    def __init__(
        self,
        store: Callable[[], Store],
        settings: Settings,
        tenants: Sequence[str] | None = None,
        post: Callable[[str, Mapping[str, Any]], None] = post_json,
    ) -> None:
        if not settings.alert_webhook_url:
            raise ValueError("the alert notifier needs REPUTE_ALERT_WEBHOOK_URL")
        self.store = store
        self.settings = settings
        self.url = settings.alert_webhook_url
        self.tenants = tenants
        self.post = post
        self.failures = 0
        self.retry_at: datetime | None = None

    def tick(self, now: datetime) -> None:
        store = self.store()
        tenants = self.tenants if self.tenants is not None else alert_store.active_tenants(store, _active_since(now))
        for tenant in tenants:
            self.record(store, tenant, now)
        if tenants:
            self.deliver(store, tenants, now)

    def record(self, store: Store, tenant: str, now: datetime) -> None:
        last = {row["alert_key"]: Transition.from_row(row) for row in alert_store.last_transitions(store, tenant)}
        transitions = changes(tenant, evaluate(store, tenant, self.settings, now), last, now)
        writer.alert_transitions(store, [t.row(notified=False) for t in transitions])

    def deliver(self, store: Store, tenants: Sequence[str], now: datetime) -> None:
        if self.retry_at is not None and now < self.retry_at:
            return
        for row in alert_store.pending_transitions(store, tenants):
            transition = Transition.from_row(row)
            try:
                self.post(self.url, transition.payload())
            except DeliveryFailed as exc:
                self._back_off(now, exc)
                return
            writer.alert_transitions(store, [transition.row(notified=True)])
        self.failures = 0
        self.retry_at = None

    def _back_off(self, now: datetime, exc: DeliveryFailed) -> None:
        self.failures += 1
        delay = min(RETRY_MAX_SECONDS, RETRY_BASE_SECONDS * 2 ** (self.failures - 1))
        self.retry_at = now + timedelta(seconds=delay)
        log.warning("%s; retrying in %.0f s", exc, delay)

    def seconds_to_next_tick(self, now: datetime) -> float:
        interval = self.settings.alert_interval_seconds
        if self.retry_at is None:
            return interval
        return max(0.0, min(interval, (self.retry_at - now).total_seconds()))


def _active_since(now: datetime) -> date:
    return (now - timedelta(days=ACTIVE_DAYS)).date()


def start_background_evaluator(store: Callable[[], Store], settings: Settings) -> Periodic | None:
    """Starts the evaluator when a webhook is configured (the server's lifespan calls this): it runs
    every `alert_interval_seconds`, sooner while retrying a delivery."""
    if not settings.alert_webhook_url:
        return None
    notifier = AlertNotifier(store, settings)
    return Periodic("repute-alerts", notifier.tick, notifier.seconds_to_next_tick).start()
