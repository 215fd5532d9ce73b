"""Reputation in ClickHouse equals a brute-force recomputation from the raw events (SPEC §7, §7.1), with
sources, their credibility, the daily cap and decay, for the single-identity read and the fleet view."""

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from service.reputation.model import REPUTE_SOURCE
from service.store import reputation as reputation_store
from service.store.client import Store
from tests.reputation_oracle import assert_matches, reputation
from tests.reputation_seed import BURSTS, MODELS, arrival, model_in_force, random_events, seed, store_posted


@pytest.fixture
def store(own_store: Store) -> Store:
    """These tests put a half-life in force, which every read of a store takes: a database of this
    module's own."""
    return own_store


@pytest.fixture
def seeded(store: Store, tenant: str) -> tuple[list[dict[str, Any]], date]:
    return seed(store, tenant)


@pytest.mark.parametrize("model_name", MODELS)
def test_identity_reputation_equals_recomputation(store: Store, tenant: str, seeded, model_name: str) -> None:
    events, today = seeded
    model = MODELS[model_name]
    identities = sorted({e["identity"] for e in events})
    with model_in_force(store, tenant, model):
        for as_of in (today, today - timedelta(days=7), today - timedelta(days=45), today - timedelta(days=150)):
            for identity in identities:
                expected = reputation(events, identity, as_of, model)
                actual = reputation_store.identity_reputation(store, tenant, identity, as_of)
                if actual is None:
                    assert expected["events"] == 0 and expected["overall"] is None and not expected["failures"]
                    continue
                assert_matches(actual, expected, f"{model_name}: {identity} as of {as_of}")


@pytest.mark.parametrize("model_name", MODELS)
def test_fleet_scores_after_refresh_equal_recomputation(store: Store, tenant: str, seeded, model_name: str) -> None:
    events, today = seeded
    model = MODELS[model_name]
    with model_in_force(store, tenant, model):
        reputation_store.refresh_scores(store)
        fleet = {row["identity"]: row for row in reputation_store.list_identities(store, tenant, limit=1000)}
    assert fleet, "the refreshable view wrote no rows for the tenant"
    for identity, row in fleet.items():
        assert_matches(row, reputation(events, identity, today, model), f"{model_name}: fleet {identity}")
    with_recent = {e["identity"] for e in events if (today - e["timestamp"].date()).days <= 119 and not e["capped"]}
    assert set(fleet) == with_recent


def test_caps_are_decided_at_insert_and_stored(store: Store, tenant: str, seeded) -> None:
    events, _today = seeded
    result = store.client.query(
        "SELECT identity, event_id, source, capped FROM reputation_events WHERE tenant = {t:String}",
        parameters={"t": tenant},
    )
    stored = {(identity, event_id): (source, bool(capped)) for identity, event_id, source, capped in result.result_rows}
    assert stored == {(e["identity"], e["event_id"]): (e["source"], e["capped"]) for e in events}
    assert sum(1 for e in events if e["capped"]) >= sum(count - 100 for *_, count in BURSTS)  # the seed has caps


def _event_count(store: Store, tenant: str) -> int:
    return store.client.query(
        "SELECT count() FROM reputation_events WHERE tenant = {t:String}", parameters={"t": tenant}
    ).result_rows[0][0]


def test_reinserting_events_changes_nothing(store: Store, tenant: str) -> None:
    today = datetime.now(UTC).date()
    posted = random_events(tenant, today, seed=7)
    store_posted(store, tenant, posted, today)
    before = [reputation_store.identity_reputation(store, tenant, f"agent-{n:02d}", today) for n in range(50)]
    count = _event_count(store, tenant)
    runs_events = [e for s, e in posted if s == REPUTE_SOURCE]
    assert reputation_store.insert_events(store, tenant, runs_events) == ()
    assert reputation_store.insert_events(store, tenant, runs_events[:10] + runs_events[:10]) == ()
    signals = [e for s, e in posted if s == "key-a"]
    outcome = reputation_store.insert_signals(store, tenant, "key-a", signals, arrival(today))
    assert outcome.stored == () and outcome.capped == () and len(outcome.duplicates) == len(signals)
    after = [reputation_store.identity_reputation(store, tenant, f"agent-{n:02d}", today) for n in range(50)]
    assert after == before
    assert count == len(posted) == _event_count(store, tenant)


def test_sort_and_filter_fleet(store: Store, tenant: str, seeded) -> None:
    reputation_store.refresh_scores(store)
    by_overall = reputation_store.list_identities(store, tenant, sort="overall", limit=1000)
    scores = [row["overall"] for row in by_overall if row["overall"] is not None]
    assert scores == sorted(scores, reverse=True)
    assert all(row["computed_at"].tzinfo == UTC for row in by_overall)  # the driver's are naive
    confident = reputation_store.list_identities(store, tenant, min_confidence=0.3, limit=1000)
    assert all(row["confidence"] >= 0.3 for row in confident)
    prefixed = reputation_store.list_identities(store, tenant, prefix="agent-1", limit=1000)
    assert prefixed and all(row["identity"].startswith("agent-1") for row in prefixed)


@pytest.mark.parametrize("model_name", ["flat", "credibility-and-decay"])
def test_identity_read_and_fleet_view_agree_to_the_bit(store: Store, tenant: str, seeded, model_name: str) -> None:
    _events, today = seeded
    with model_in_force(store, tenant, MODELS[model_name]):
        for as_of in (today, today - timedelta(days=30)):
            view = store.client.query(
                "SELECT * FROM reputation_at(as_of = {as_of:Date}) WHERE tenant = {tenant:String}",
                parameters={"as_of": as_of, "tenant": tenant},
            )
            rows = [dict(zip(view.column_names, row, strict=True)) for row in view.result_rows]
            assert len(rows) > 10
            for row in rows:
                read = reputation_store.identity_reputation(store, tenant, row["identity"], as_of)
                assert read == {key: row[key] for key in read}, row["identity"]
