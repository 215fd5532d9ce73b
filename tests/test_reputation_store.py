"""Reputation in ClickHouse equals a brute-force recomputation from the raw events (SPEC §7, §7.1), with
sources, their credibility, the daily cap and decay, for the single-identity read and the fleet view."""

import random
from collections.abc import Iterator
from dataclasses import asdict
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from service.reputation.model import REPUTE_SOURCE, ReputationEvent, event_uuid
from service.settings import Settings
from service.store import reputation as reputation_store
from service.store.client import Store
from tests.reputation_oracle import Model, apply_caps, assert_matches, reputation

FAILURE_TYPES = ("infinite_tool_loop", "cost_explosion", "skill_failure")
SIGNAL_SOURCES = ("key-a", "key-b")
# A burst past the daily cap: (identity, source, days ago, events).
BURSTS = (("agent-00", "key-a", 3, 130), ("agent-01", "key-b", 40, 104))
MODELS = {
    "flat": Model(),
    "credibility": Model({"key-a": 0.5, "key-b": 0.0}),
    "decay": Model(half_life=7.5),
    "credibility-and-decay": Model({"key-a": 0.25, "legacy": 0.5}, half_life=30.0),
}
Posted = tuple[str, ReputationEvent]


def _at(day: date, rng: random.Random) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(seconds=rng.randint(0, 86_399))


def _random_event(rng: random.Random, tenant: str, identity: str, i: int, today: date) -> Posted:
    at = _at(today - timedelta(days=rng.randint(0, 199)), rng)
    kind = rng.random()
    source = rng.choice(SIGNAL_SOURCES)
    if kind < 0.5:
        source, category, event_type, delta, weight = (
            REPUTE_SOURCE,
            "task_quality",
            "run_trust",
            rng.uniform(-1, 1),
            1.0,
        )
    elif kind < 0.65:
        source, category, event_type = REPUTE_SOURCE, "task_quality", f"failure.{rng.choice(FAILURE_TYPES)}"
        delta, weight = -rng.uniform(0, 0.3), 0.0
    elif kind < 0.85:
        category = "economic"
        event_type, delta = rng.choice([("payment_completed", 1.0), ("payment_failed", -1.0)])
        weight = rng.choice([0.5, 1.0, 2.0])
    else:
        category = "identity_hygiene"
        event_type, delta = rng.choice([("key_rotated", 1.0), ("credential_leaked", -1.0)])
        weight = 1.0
    event = ReputationEvent(
        event_id=event_uuid(tenant, identity, str(i)),
        timestamp=at,
        identity=identity,
        category=category,
        event_type=event_type,
        score_delta=delta,
        confidence=rng.choice([1.0, 1.0, 0.5, rng.random()]),
        weight=weight,
        reference_type="run" if source == REPUTE_SOURCE else "transaction",
        reference_id=f"ref-{identity}-{i}",
    )
    return source, event


def _bursts(rng: random.Random, tenant: str, today: date) -> list[Posted]:
    posted = []
    for identity, source, days_ago, count in BURSTS:
        day = today - timedelta(days=days_ago)
        for i in range(count):
            delta = rng.choice([1.0, -1.0])
            event = ReputationEvent(
                event_uuid(tenant, identity, source, str(i)), _at(day, rng), identity, "economic",
                "payment_completed" if delta > 0 else "payment_failed", delta, reference_type="transaction",
                reference_id=f"tx-{source}-{i}",
            )  # fmt: skip
            posted.append((source, event))
    return posted


def _random_events(tenant: str, today: date, seed: int) -> list[Posted]:
    rng = random.Random(seed)
    posted = [
        _random_event(rng, tenant, f"agent-{n:02d}", i, today) for n in range(50) for i in range(rng.randint(0, 60))
    ]
    return posted + _bursts(rng, tenant, today)


def store_posted(store: Store, tenant: str, posted: list[Posted]) -> None:
    """Stores each source's events in their order, in batches, as the pipeline and the API would."""
    for source in sorted({s for s, _ in posted}):
        events = [e for s, e in posted if s == source]
        for start in range(0, len(events), 200):
            batch = events[start : start + 200]
            if source == REPUTE_SOURCE:
                reputation_store.insert_events(store, tenant, batch)
            else:
                reputation_store.insert_signals(store, tenant, source, batch)


def raw(posted: list[Posted], cap: int = 100) -> list[dict[str, Any]]:
    return apply_caps([{**asdict(e), "source": s} for s, e in posted], cap)


@pytest.fixture
def seeded(store: Store, tenant: str) -> tuple[list[dict[str, Any]], date]:
    today = datetime.now(UTC).date()
    posted = _random_events(tenant, today, seed=7)
    store_posted(store, tenant, posted)
    return raw(posted), today


def put_model_in_force(store: Store, tenant: str, model: Model) -> None:
    now = datetime.now(UTC)
    for source, credibility in model.credibility.items():
        reputation_store.set_credibility(store, tenant, source, credibility, now)
    reputation_store.sync_half_life(store, Settings(reputation_half_life_days=model.half_life))


@pytest.fixture
def half_life_restored(store: Store) -> Iterator[None]:
    """The half-life is global to the store: put the flat model back for the other tests."""
    yield
    reputation_store.sync_half_life(store, Settings(reputation_half_life_days=None))


@pytest.mark.parametrize("model_name", MODELS)
def test_identity_reputation_equals_recomputation(
    store: Store, tenant: str, seeded, half_life_restored, model_name: str
) -> None:
    events, today = seeded
    model = MODELS[model_name]
    put_model_in_force(store, tenant, model)
    identities = sorted({e["identity"] for e in events})
    for as_of in (today, today - timedelta(days=7), today - timedelta(days=45), today - timedelta(days=150)):
        for identity in identities:
            expected = reputation(events, identity, as_of, model)
            actual = reputation_store.identity_reputation(store, tenant, identity, as_of)
            if actual is None:
                assert expected["events"] == 0 and expected["overall"] is None and not expected["failures"]
                continue
            assert_matches(actual, expected, f"{model_name}: {identity} as of {as_of}")


@pytest.mark.parametrize("model_name", MODELS)
def test_fleet_scores_after_refresh_equal_recomputation(
    store: Store, tenant: str, seeded, half_life_restored, model_name: str
) -> None:
    events, today = seeded
    model = MODELS[model_name]
    put_model_in_force(store, tenant, model)
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
    expected = {(e["identity"], e["event_id"]): (e["source"], e["capped"]) for e in events}
    assert stored == expected
    assert sum(1 for e in events if e["capped"]) == sum(count - 100 for *_, count in BURSTS)


def test_reinserting_events_changes_nothing(store: Store, tenant: str) -> None:
    today = datetime.now(UTC).date()
    posted = _random_events(tenant, today, seed=7)
    store_posted(store, tenant, posted)
    before = [reputation_store.identity_reputation(store, tenant, f"agent-{n:02d}", today) for n in range(50)]
    count = _event_count(store, tenant)
    runs_events = [e for s, e in posted if s == REPUTE_SOURCE]
    assert reputation_store.insert_events(store, tenant, runs_events) == 0
    assert reputation_store.insert_events(store, tenant, runs_events[:10] + runs_events[:10]) == 0
    signals = [e for s, e in posted if s == "key-a"]
    outcome = reputation_store.insert_signals(store, tenant, "key-a", signals)
    assert outcome.stored == () and outcome.capped == () and len(outcome.duplicates) == len(signals)
    after = [reputation_store.identity_reputation(store, tenant, f"agent-{n:02d}", today) for n in range(50)]
    assert after == before
    assert count == len(posted) == _event_count(store, tenant)


def _event_count(store: Store, tenant: str) -> int:
    return store.client.query(
        "SELECT count() FROM reputation_events WHERE tenant = {t:String}", parameters={"t": tenant}
    ).result_rows[0][0]


def test_sort_and_filter_fleet(store: Store, tenant: str, seeded) -> None:
    reputation_store.refresh_scores(store)
    by_overall = reputation_store.list_identities(store, tenant, sort="overall", limit=1000)
    scores = [row["overall"] for row in by_overall if row["overall"] is not None]
    assert scores == sorted(scores, reverse=True)
    confident = reputation_store.list_identities(store, tenant, min_confidence=0.3, limit=1000)
    assert all(row["confidence"] >= 0.3 for row in confident)
    prefixed = reputation_store.list_identities(store, tenant, prefix="agent-1", limit=1000)
    assert prefixed and all(row["identity"].startswith("agent-1") for row in prefixed)


@pytest.mark.parametrize("model_name", ["flat", "credibility-and-decay"])
def test_identity_read_and_fleet_view_agree_to_the_bit(
    store: Store, tenant: str, seeded, half_life_restored, model_name: str
) -> None:
    _events, today = seeded
    put_model_in_force(store, tenant, MODELS[model_name])
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
