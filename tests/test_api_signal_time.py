"""A posted signal's timestamp (SPEC §7.1 "Time"): at most REPUTE_SIGNAL_MAX_AGE_DAYS before its arrival
and 5 minutes after it, else a 422 naming the field and nothing of the request is stored; a key with the
admin scope may post older signals (imports), never later ones. Each refusal fails without the bounds of
service.services.reputation (before issue #28 any storable timestamp was taken)."""

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from service.errors import FieldError
from service.services.keys import Principal
from service.services.reputation import post_signals
from service.store.client import Store


def _signal(before_now: timedelta, n: int = 0) -> dict[str, Any]:
    at = datetime.now(UTC) - before_now
    return {"identity": "agent-t", "category": "economic", "event_type": "payment_completed", "score_delta": 1,
            "timestamp": at.isoformat(), "reference_id": f"tx-{n}"}  # fmt: skip


def _refused_field(response: httpx.Response) -> str:
    assert response.status_code == 422, response.text
    return response.json()["errors"][0]["field"]


def _events(client: httpx.Client) -> int:
    return client.get("/v1/identities/agent-t/reputation").json()["events"]


def test_an_ingest_key_posts_signals_of_the_last_days_only(make_client, tenant: str) -> None:
    poster, reader = make_client(tenant, ("ingest",)), make_client(tenant, ("read",))
    within = [_signal(timedelta(days=6, hours=23), 0), _signal(-timedelta(minutes=4), 1)]
    assert poster.post("/v1/reputation-events", json=within).json()["accepted"] == 2

    too_old = poster.post("/v1/reputation-events", json=[_signal(timedelta(hours=1), 2), _signal(timedelta(days=8), 3)])
    assert _refused_field(too_old) == "events[1].timestamp"
    assert "REPUTE_SIGNAL_MAX_AGE_DAYS" in too_old.json()["detail"] and "admin" in too_old.json()["detail"]
    too_late = poster.post("/v1/reputation-events", json=[_signal(-timedelta(minutes=6), 4)])
    assert _refused_field(too_late) == "events[0].timestamp"
    assert too_late.json()["detail"].endswith("timestamp is more than 5 minutes after the signal's arrival")
    assert _events(reader) == 2  # neither refused request stored anything, its valid signal included


def test_an_admin_key_may_import_older_signals_but_not_later_ones(make_client, tenant: str) -> None:
    admin = make_client(tenant)
    assert admin.post("/v1/reputation-events", json=[_signal(timedelta(days=60))]).json()["accepted"] == 1
    assert _refused_field(admin.post("/v1/reputation-events", json=[_signal(-timedelta(minutes=6))])) == (
        "events[0].timestamp"
    )
    assert admin.get("/v1/identities/agent-t/reputation").json()["events"] == 1


def test_the_age_limit_is_the_setting(embedded_store: Store, tenant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        embedded_store, "settings", embedded_store.settings.model_copy(update={"signal_max_age_days": 1})
    )
    poster, now = Principal("key-t", tenant, frozenset({"ingest"})), datetime.now(UTC)

    def aged(hours: int) -> dict[str, Any]:
        return {**_signal(timedelta()), "timestamp": now - timedelta(hours=hours)}  # as the API hands it over

    with pytest.raises(FieldError) as refused:
        post_signals(embedded_store, poster, [aged(25)], now)
    assert refused.value.field == "events[0].timestamp"
    assert post_signals(embedded_store, poster, [aged(23)], now)["accepted"] == 1
