"""The notifier tells a webhook once when an alert starts firing and once when it resolves, through webhook
outages and restarts (SPEC §11). The test drives `tick(now)` itself: no sleeping, no wall clock."""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

from service.alerts.notifier import AlertNotifier, DeliveryFailed, changes, post_json
from service.alerts.rules import Alert
from service.settings import Settings
from service.store.client import Store
from service.testing.live import free_port
from tests.fleet import NOW, FleetWriter, unsafe_day


class Receiver:
    """A webhook on a loopback port that can be switched down (it then answers 503)."""

    def __init__(self) -> None:
        self.up = True
        self.attempts = 0
        self.received: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.attempts += 1
                if receiver.up:
                    receiver.received.append(orjson.loads(body))
                self.send_response(204 if receiver.up else 503)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"

    @contextmanager
    def running(self) -> Iterator["Receiver"]:
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver().running() as running:
        yield running


def notifier_for(store: Store, tenant: str, url: str) -> AlertNotifier:
    """A fresh notifier, as after a restart: nothing in memory, everything it knows is in ClickHouse."""
    settings = Settings(data_dir=Path("unused"), alert_webhook_url=url)
    return AlertNotifier(lambda: store, settings, tenants=[tenant])


def test_one_firing_and_one_resolved_through_outages_and_a_restart(
    embedded_store: Store, tenant: str, receiver: Receiver
) -> None:
    unsafe_day(FleetWriter(embedded_store, tenant))
    notifier_for(embedded_store, tenant, receiver.url).tick(NOW - timedelta(days=1, hours=1))
    assert receiver.attempts == 0  # healthy before the bad day: nothing to say

    receiver.up = False
    notifier_for(embedded_store, tenant, receiver.url).tick(NOW)  # starts firing; the webhook is down
    restarted = notifier_for(embedded_store, tenant, receiver.url)
    restarted.tick(NOW + timedelta(seconds=30))  # a restart; still down
    assert receiver.attempts == 2 and receiver.received == []

    receiver.up = True
    restarted.tick(NOW + timedelta(minutes=5))
    restarted.tick(NOW + timedelta(minutes=6))  # still firing: nothing new to say
    assert [n["status"] for n in receiver.received] == ["firing"]

    receiver.up = False
    restarted.tick(NOW + timedelta(days=2))  # the bad day has left the 24 h window: resolved; webhook down
    receiver.up = True
    restarted.tick(NOW + timedelta(days=2, minutes=5))
    restarted.tick(NOW + timedelta(days=2, minutes=6))

    firing, resolved = receiver.received
    assert (firing["status"], resolved["status"]) == ("firing", "resolved")
    for notification in (firing, resolved):
        assert (notification["tenant"], notification["alert"]) == (tenant, "unsafe_share")
    assert firing["value"] == pytest.approx(6 / 25)
    assert firing["id"] != resolved["id"]
    assert resolved["changed_at"] > firing["changed_at"]


def test_delivery_backs_off_while_the_webhook_fails(embedded_store: Store, tenant: str, receiver: Receiver) -> None:
    unsafe_day(FleetWriter(embedded_store, tenant))
    notifier = notifier_for(embedded_store, tenant, receiver.url)
    receiver.up = False
    notifier.tick(NOW)
    notifier.tick(NOW + timedelta(seconds=1))  # inside the first backoff: no attempt
    assert receiver.attempts == 1
    assert notifier.seconds_to_next_tick(NOW + timedelta(seconds=1)) == pytest.approx(4)
    notifier.tick(NOW + timedelta(seconds=5))
    assert receiver.attempts == 2
    assert notifier.seconds_to_next_tick(NOW + timedelta(seconds=5)) == pytest.approx(10)  # doubled
    receiver.up = True
    notifier.tick(NOW + timedelta(seconds=15))
    assert [n["status"] for n in receiver.received] == ["firing"]
    assert notifier.seconds_to_next_tick(NOW) == notifier.settings.alert_interval_seconds


def test_an_alert_that_fires_again_is_notified_again() -> None:
    alert = Alert("unsafe_share", "critical", "fleet", 0.3, None, "30% unsafe")
    (first,) = changes("t", [alert], {}, NOW)
    (resolved,) = changes("t", [], {first.alert_key: first}, NOW + timedelta(hours=1))
    (again,) = changes("t", [alert], {first.alert_key: resolved}, NOW + timedelta(hours=2))
    assert [(t.status, t.seq) for t in (first, resolved, again)] == [("firing", 0), ("resolved", 1), ("firing", 2)]
    assert changes("t", [alert], {first.alert_key: again}, NOW + timedelta(hours=3)) == []


def test_an_unreachable_webhook_is_a_delivery_failure() -> None:
    with pytest.raises(DeliveryFailed):
        post_json(f"http://127.0.0.1:{free_port()}/hook", {"status": "firing"})


def test_the_notifier_needs_a_webhook_url(embedded_store: Store) -> None:
    with pytest.raises(ValueError, match="REPUTE_ALERT_WEBHOOK_URL"):
        AlertNotifier(lambda: embedded_store, Settings(data_dir=Path("unused"), alert_webhook_url=None))
