"""Retractions (migrations/0010): a row with sign -1 takes the event it retracts out of every figure, the
single-identity read, the fleet view and the explanation alike, equal to a brute-force recomputation from
the raw events with their sign; and the migration keeps every figure stored before it."""

import random
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from service.reputation.model import REPUTE_SOURCE, ReputationEvent
from service.reputation.rebuild import retraction
from service.services.reputation import explain
from service.store import migrate as migrations
from service.store import reputation as reputation_store
from service.store import writer
from service.store.client import Store
from tests.reputation_oracle import Model, assert_matches, reference_moves, reputation, type_contributions
from tests.reputation_seed import assert_store_matches, random_events, raw, store_posted

DAILY = (
    "SELECT identity, category, day, source, sum(weighted_sum), sum(weight_sum), sum(events), sum(positive_events),"
    " sum(negative_events), sumMap(failures) FROM reputation_daily_sources WHERE tenant = {t:String}"
    " GROUP BY identity, category, day, source ORDER BY identity, category, day, source"
)


def _retracted_rows(posted: list[tuple[str, ReputationEvent]], share: float, seed: int) -> list[ReputationEvent]:
    """Retractions of a random share of the runs' own events (the only ones a rebuild retracts)."""
    rng = random.Random(seed)
    return [retraction(event) for source, event in posted if source == REPUTE_SOURCE and rng.random() < share]


def test_a_retraction_takes_its_event_out_of_every_figure(store: Store, tenant: str) -> None:
    today = datetime.now(UTC).date()
    posted = random_events(tenant, today, seed=11)
    store_posted(store, tenant, posted, today)
    retractions = _retracted_rows(posted, 0.4, seed=12)
    assert len(reputation_store.insert_events(store, tenant, retractions)) == len(retractions)
    events = raw(posted, today) + raw([(REPUTE_SOURCE, r) for r in retractions], today)
    assert all(e["sign"] == -1 for e in events[len(posted) :])

    for as_of in (today, today - timedelta(days=30)):
        assert_store_matches(store, tenant, events, as_of, "retracted")
    reputation_store.refresh_scores(store)
    for row in reputation_store.list_identities(store, tenant, limit=1000):
        assert_matches(row, reputation(events, row["identity"], today), f"fleet {row['identity']}")
    for identity in sorted({e["identity"] for e in events})[:5]:
        explanation = explain(store, tenant, identity, today)
        assert explanation is not None
        expected_types = type_contributions(events, identity, today, Model())
        shown = {
            (category, event_type): windows["current"]["events"]
            for category, part in explanation["categories"].items()
            for event_type, windows in part["event_types"].items()
            if windows["current"]["events"]
        }
        assert shown == {key: count for key, (count, _, _) in expected_types.items()}
        moves = reference_moves(events, identity, today, Model())
        for reference in explanation["top_references"]:
            assert abs(reference["weighted_delta"] - moves[reference["reference_id"]]) <= 1e-9


def test_retracting_every_event_of_an_identity_leaves_nothing_counted(store: Store, tenant: str) -> None:
    now = datetime.now(UTC)
    kinds = [("run_trust", 0.3, 1.0), ("failure.cost_explosion", -0.15, 0.0), ("run_trust", -1.0, 1.0)]
    events = [
        ReputationEvent(
            uuid.UUID(int=i + 1),
            now - timedelta(days=i),
            "agent-z",
            "task_quality",
            event_type,
            delta,
            weight=weight,
            reference_type="run",
            reference_id=f"run-{i}",
        )
        for i, (event_type, delta, weight) in enumerate(kinds)
    ]
    reputation_store.insert_events(store, tenant, events)
    reputation_store.insert_events(store, tenant, [retraction(e) for e in events])
    report = reputation_store.identity_reputation(store, tenant, "agent-z", now.date())
    assert report is not None and report["overall"] is None and report["task_quality"] is None
    assert (report["events"], report["positive_events"], report["negative_events"]) == (0, 0, 0)
    assert report["failures"] == {} and report["confidence"] == 0
    explanation = explain(store, tenant, "agent-z", now.date())
    assert explanation is not None and explanation["top_references"] == []
    assert all(not part["event_types"] for part in explanation["categories"].values())


@pytest.fixture
def before_0010(fresh_database: Store, monkeypatch: pytest.MonkeyPatch) -> Store:
    every_migration = migrations.discover()
    monkeypatch.setattr(migrations, "discover", lambda *_args: [m for m in every_migration if m.version < 10])
    migrations.migrate(fresh_database)
    monkeypatch.setattr(migrations, "discover", lambda *_args: every_migration)
    return fresh_database


def test_migration_0010_keeps_every_stored_figure_and_stops_feeding_the_old_daily_table(before_0010: Store) -> None:
    store, tenant, today = before_0010, "t", datetime.now(UTC).date()
    posted = random_events(tenant, today, seed=5)
    events = raw(posted, today)
    columns = writer.REPUTATION_COLUMNS[:-1]  # before 0010: no sign
    store.client.insert(
        "reputation_events",
        [[tenant, *(e[c] for c in columns[1:])] for e in events],
        column_names=columns,
    )
    daily_before = store.client.query(DAILY, parameters={"t": tenant}).result_rows
    old_daily = "SELECT count(), sum(events) FROM reputation_daily"
    old_before = store.client.query(old_daily).result_rows
    assert old_before[0][0] > 0  # 0002's view fed it until now

    assert migrations.migrate(store)[0] == "0010_reputation_retractions"  # then the later ones
    assert store.client.query(DAILY, parameters={"t": tenant}).result_rows == daily_before
    assert store.client.query("SELECT DISTINCT sign FROM reputation_events").result_rows == [(1,)]
    assert_store_matches(store, tenant, events, today, "after 0010")

    later = replace(posted[0][1], event_id=uuid.UUID(int=99), timestamp=datetime.now(UTC))
    reputation_store.insert_events(store, tenant, [later, retraction(later)])
    assert store.client.query(old_daily).result_rows == old_before  # kept, no longer fed
    views = store.client.query(
        "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine = 'MaterializedView'"
        " ORDER BY name"
    ).result_rows
    assert views == [("reputation_daily_types_mv",), ("reputation_scores_mv",)]  # one daily view (0027)
