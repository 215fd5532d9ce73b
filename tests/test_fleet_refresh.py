"""The fleet table's refresh is incremental (sql/definitions/reputation_scores_mv.sql): it recomputes the
identities written to since its last refresh and keeps every other row, and recomputes every identity when
asked, after a credibility changed, and on a new day. What it keeps is seen by changing an identity's daily
sums behind the refresh's back (a direct write, as a crash repair makes): kept, the row still says what it
said; recomputed, it says what the sums say."""

import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from service.reputation.model import ReputationEvent
from service.store import reputation as reputation_store
from service.store import writer
from service.store.client import Store

HOUR_AGO = datetime.now(UTC) - timedelta(hours=1)


def _signal(identity: str, delta: float, at: datetime) -> ReputationEvent:
    return ReputationEvent(uuid.uuid4(), at, identity, "economic", "payment_completed", delta)


def _overall(store: Store, tenant: str) -> dict[str, float]:
    return {row["identity"]: row["overall"] for row in reputation_store.list_identities(store, tenant, limit=100)}


def _behind_the_refresh(store: Store, tenant: str, identity: str, weighted: int = -5) -> None:
    """A sum added to the identity's economic sums of the day without an event (nothing marks it written);
    each call with a `weighted` of its own (an identical block would be deduplicated)."""
    store.client.insert(
        "reputation_daily_types",
        [[tenant, identity, "economic", "payment_completed", HOUR_AGO.date(), "key-a", Decimal(weighted), Decimal(1),
          1, 1, 0, 1, 1]],
        column_names=["tenant", "identity", "category", "event_type", "day", "source", "weighted_sum", "weight_sum",
                      "events", "weighted_events", "positive_events", "negative_events", "counted_rows"],
    )  # fmt: skip


def _read(store: Store, tenant: str, identity: str) -> float:
    reputation = reputation_store.identity_reputation(store, tenant, identity, datetime.now(UTC).date())
    assert reputation is not None
    return float(reputation["overall"])


def test_a_refresh_recomputes_the_identities_written_to_and_keeps_the_others(
    embedded_store: Store, tenant: str
) -> None:
    """Broken on purpose: the refresh recomputing every identity each time (`everyone` always true) → the
    kept row follows the direct write; recomputing none of them (`changed` empty) → the new signal is not
    seen; a credibility change not asking for everyone → the last assertion fails."""
    store = embedded_store
    # Signals that arrived an hour ago: written long before the next refreshes' window of recent writes.
    reputation_store.insert_signals(store, tenant, "key-a", [_signal("agent-kept", 1.0, HOUR_AGO)], HOUR_AGO)
    reputation_store.insert_signals(store, tenant, "key-a", [_signal("agent-written", 1.0, HOUR_AGO)], HOUR_AGO)
    writer.full_refresh_request(store, datetime.now(UTC))
    reputation_store.refresh_scores(store)
    assert _overall(store, tenant) == {"agent-kept": 100.0, "agent-written": 100.0}

    _behind_the_refresh(store, tenant, "agent-kept")
    now = datetime.now(UTC)
    reputation_store.insert_signals(store, tenant, "key-a", [_signal("agent-written", -1.0, now)], now)
    reputation_store.refresh_scores(store)
    fleet = _overall(store, tenant)
    assert fleet["agent-written"] == _read(store, tenant, "agent-written") == 50.0  # recomputed
    assert fleet["agent-kept"] == 100.0 != _read(store, tenant, "agent-kept")  # kept as it was

    reputation_store.set_credibility(store, tenant, "key-b", 0.5, datetime.now(UTC))  # another source's
    reputation_store.refresh_scores(store)
    assert _overall(store, tenant)["agent-kept"] == _read(store, tenant, "agent-kept") < 100.0  # everyone again


def test_a_request_recomputes_every_identity_once(embedded_store: Store, tenant: str) -> None:
    """After a repair (service.store.reputation.repair_daily_sums asks for it) the next refresh recomputes
    every identity, and the one after it goes back to those written to. Broken on purpose: the request
    compared with the start of the refresh before the last (a request answered twice) → the last assertion."""
    store = embedded_store
    reputation_store.insert_signals(store, tenant, "key-a", [_signal("agent-a", 1.0, HOUR_AGO)], HOUR_AGO)
    writer.full_refresh_request(store, datetime.now(UTC))
    reputation_store.refresh_scores(store)
    _behind_the_refresh(store, tenant, "agent-a")
    writer.full_refresh_request(store, datetime.now(UTC))
    reputation_store.refresh_scores(store)
    repaired = _read(store, tenant, "agent-a")
    assert _overall(store, tenant)["agent-a"] == repaired < 100.0
    _behind_the_refresh(store, tenant, "agent-a", weighted=-7)
    reputation_store.refresh_scores(store)
    assert _overall(store, tenant)["agent-a"] == repaired != _read(store, tenant, "agent-a")
