"""Reputation in ClickHouse equals a brute-force recomputation from the raw events (SPEC §7)."""

import random
from datetime import UTC, date, datetime, timedelta

import pytest

from service.reputation.model import ReputationEvent, event_uuid
from service.store import reputation as reputation_store
from service.store.client import Store
from tests.reputation_oracle import assert_matches, reputation

FAILURE_TYPES = ("infinite_tool_loop", "cost_explosion", "skill_failure")


def _random_events(tenant: str, today: date, seed: int) -> list[ReputationEvent]:
    rng = random.Random(seed)
    events = []
    for n in range(50):
        identity = f"agent-{n:02d}"
        for i in range(rng.randint(0, 60)):
            day = today - timedelta(days=rng.randint(0, 199))
            at = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(seconds=rng.randint(0, 86_399))
            kind = rng.random()
            if kind < 0.5:
                category, event_type, delta, weight = "task_quality", "run_trust", rng.uniform(-1, 1), 1.0
            elif kind < 0.65:
                category, event_type = "task_quality", f"failure.{rng.choice(FAILURE_TYPES)}"
                delta, weight = -rng.uniform(0, 0.3), 0.0
            elif kind < 0.85:
                category = "economic"
                event_type, delta = rng.choice([("payment_completed", 1.0), ("payment_failed", -1.0)])
                weight = rng.choice([0.5, 1.0, 2.0])
            else:
                category = "identity_hygiene"
                event_type, delta = rng.choice([("key_rotated", 1.0), ("credential_leaked", -1.0)])
                weight = 1.0
            events.append(
                ReputationEvent(
                    event_id=event_uuid(tenant, identity, str(i)),
                    timestamp=at,
                    identity=identity,
                    category=category,
                    event_type=event_type,
                    score_delta=delta,
                    confidence=rng.choice([1.0, 1.0, 0.5, rng.random()]),
                    weight=weight,
                )
            )
    return events


def _as_dicts(events: list[ReputationEvent]) -> list[dict]:
    return [e.__dict__ for e in events]


@pytest.fixture
def seeded(store: Store, tenant: str) -> tuple[list[ReputationEvent], date]:
    today = datetime.now(UTC).date()
    events = _random_events(tenant, today, seed=7)
    for start in range(0, len(events), 500):
        reputation_store.insert_events(store, tenant, events[start : start + 500])
    return events, today


def test_identity_reputation_equals_recomputation(store: Store, tenant: str, seeded) -> None:
    events, today = seeded
    raw = _as_dicts(events)
    identities = sorted({e.identity for e in events})
    for as_of in (today, today - timedelta(days=7), today - timedelta(days=45), today - timedelta(days=150)):
        for identity in identities:
            expected = reputation(raw, identity, as_of)
            actual = reputation_store.identity_reputation(store, tenant, identity, as_of)
            if actual is None:
                assert expected["events"] == 0 and expected["overall"] is None and not expected["failures"]
                continue
            assert_matches(actual, expected, f"{identity} as of {as_of}")


def test_fleet_scores_after_refresh_equal_recomputation(store: Store, tenant: str, seeded) -> None:
    events, today = seeded
    raw = _as_dicts(events)
    reputation_store.refresh_scores(store)
    fleet = {row["identity"]: row for row in reputation_store.list_identities(store, tenant, limit=1000)}
    assert fleet, "the refreshable view wrote no rows for the tenant"
    for identity, row in fleet.items():
        assert_matches(row, reputation(raw, identity, today), f"fleet {identity}")
    with_recent = {e.identity for e in events if (today - e.timestamp.date()).days <= 119}
    assert set(fleet) == with_recent


def test_reinserting_events_changes_nothing(store: Store, tenant: str, seeded) -> None:
    events, today = seeded
    before = [reputation_store.identity_reputation(store, tenant, f"agent-{n:02d}", today) for n in range(50)]
    count = store.client.query(
        "SELECT count() FROM reputation_events WHERE tenant = {t:String}", parameters={"t": tenant}
    ).result_rows[0][0]
    assert reputation_store.insert_events(store, tenant, events) == 0
    assert reputation_store.insert_events(store, tenant, events[:10] + events[:10]) == 0
    after = [reputation_store.identity_reputation(store, tenant, f"agent-{n:02d}", today) for n in range(50)]
    assert after == before
    assert count == len(events)
    assert (
        store.client.query(
            "SELECT count() FROM reputation_events WHERE tenant = {t:String}", parameters={"t": tenant}
        ).result_rows[0][0]
        == count
    )


def test_sort_and_filter_fleet(store: Store, tenant: str, seeded) -> None:
    reputation_store.refresh_scores(store)
    by_overall = reputation_store.list_identities(store, tenant, sort="overall", limit=1000)
    scores = [row["overall"] for row in by_overall if row["overall"] is not None]
    assert scores == sorted(scores, reverse=True)
    confident = reputation_store.list_identities(store, tenant, min_confidence=0.3, limit=1000)
    assert all(row["confidence"] >= 0.3 for row in confident)
    prefixed = reputation_store.list_identities(store, tenant, prefix="agent-1", limit=1000)
    assert prefixed and all(row["identity"].startswith("agent-1") for row in prefixed)


def test_identity_read_and_fleet_view_agree_to_the_bit(store: Store, tenant: str, seeded) -> None:
    _events, today = seeded
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
