"""Sources, credibility and the daily cap (SPEC §7.1) through the store functions, and migration 0006
keeping the meaning of the events stored before it."""

import math
import uuid
from datetime import UTC, datetime, time, timedelta

import pytest

from service.reputation.model import ReputationEvent, event_uuid
from service.store import migrate as migrations
from service.store import reputation as reputation_store
from service.store import writer
from service.store.client import Store
from tests.reputation_oracle import Model, assert_matches, reputation
from tests.reputation_seed import assert_store_matches, random_events, raw, store_posted

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _payment(identity: str, i: int, at: datetime = NOW, delta: float = 1.0) -> ReputationEvent:
    return ReputationEvent(
        event_uuid(identity, str(i)), at, identity, "economic", "payment_completed", delta, reference_type="transaction"
    )


def _reports(store: Store, tenant: str, identities: list[str], days: list) -> dict:
    return {(i, d): reputation_store.identity_reputation(store, tenant, i, d) for i in identities for d in days}


def _fleet(store: Store, tenant: str) -> dict:
    reputation_store.refresh_scores(store)
    rows = reputation_store.list_identities(store, tenant, limit=1000)
    return {row["identity"]: {k: v for k, v in row.items() if k != "computed_at"} for row in rows}


def test_credibility_zero_removes_a_source_from_every_day_at_once_and_one_restores_it(
    store: Store, tenant: str
) -> None:
    today = datetime.now(UTC).date()
    posted = random_events(tenant, today, seed=11)
    store_posted(store, tenant, posted, today)
    identities = sorted({e.identity for _, e in posted})
    days = [today, today - timedelta(days=7), today - timedelta(days=45), today - timedelta(days=100)]
    before, fleet_before = _reports(store, tenant, identities, days), _fleet(store, tenant)

    reputation_store.set_credibility(store, tenant, "key-a", 0.0, datetime.now(UTC))
    without_a = [e for e in raw(posted, today) if e["source"] != "key-a"]
    for (identity, day), actual in _reports(store, tenant, identities, days).items():
        expected = reputation(without_a, identity, day, Model())
        if actual is None:
            assert expected["overall"] is None and expected["events"] == 0
        else:
            assert_matches(actual, expected, f"{identity} as of {day} without key-a")
    fleet_without_a = _fleet(store, tenant)
    for identity, row in fleet_without_a.items():
        assert_matches(row, reputation(without_a, identity, today, Model()), f"fleet {identity} without key-a")
    assert fleet_without_a != fleet_before

    reputation_store.set_credibility(store, tenant, "key-a", 1.0, datetime.now(UTC))
    assert _reports(store, tenant, identities, days) == before
    assert _fleet(store, tenant) == fleet_before


def test_a_source_gets_its_daily_cap_across_batches_and_its_own_allowance(store: Store, tenant: str) -> None:
    insert = reputation_store.insert_signals
    first = insert(store, tenant, "key-a", [_payment("alice", i) for i in range(60)], NOW)
    second = insert(store, tenant, "key-a", [_payment("alice", i) for i in range(60, 120)], NOW)
    other_source = insert(store, tenant, "key-b", [_payment("alice", i) for i in range(200, 230)], NOW)
    next_day = insert(store, tenant, "key-a", [_payment("alice", i) for i in range(300, 310)], NOW + timedelta(days=1))
    assert (len(first.stored), len(first.capped)) == (60, 0)
    assert (len(second.stored), len(second.capped)) == (60, 20)
    assert second.capped == second.stored[40:]
    assert (len(other_source.stored), len(other_source.capped)) == (30, 0)
    assert (len(next_day.stored), len(next_day.capped)) == (10, 0)  # arrived the next day: its own allowance
    report = reputation_store.identity_reputation(store, tenant, "alice", NOW.date())
    assert report is not None and report["events"] == 100 + 30 + 10


def test_a_day_of_arrival_keeps_its_allowance_when_the_next_days_signals_are_written_first(
    store: Store, tenant: str
) -> None:
    """A request that arrived just before midnight can be written after one that arrived just after it (the
    write pool queues requests; each keeps its arrival): its day's count holds that day's arrivals only.
    Broken on purpose: the arrival day's window `start + timedelta(days=1)` → `days=2` (the next day's 100
    count against the day before, and its 10 are capped)."""
    insert = reputation_store.insert_signals
    midnight = datetime.combine(NOW.date() + timedelta(days=1), time(), UTC)
    after = insert(store, tenant, "key-a", [_payment("alice", i) for i in range(100)], midnight + timedelta(seconds=1))
    before = insert(
        store, tenant, "key-a", [_payment("alice", i) for i in range(100, 110)], midnight - timedelta(seconds=1)
    )
    assert (len(after.capped), len(before.stored), len(before.capped)) == (0, 10, 0)


def test_backdated_signals_share_the_cap_of_their_day_of_arrival(store: Store, tenant: str) -> None:
    """SPEC §7.1 "Time": the cap counts per UTC day of arrival, so spreading timestamps over past days
    cannot multiply it. Fails with a cap per timestamp day (as before issue #28): 5 signals a day over 30
    days were all counted."""
    insert = reputation_store.insert_signals
    spread = [_payment("alice", i, NOW - timedelta(days=i % 30)) for i in range(150)]
    outcome = insert(store, tenant, "key-a", spread, NOW)
    assert (len(outcome.stored), outcome.capped) == (150, outcome.stored[100:])
    older = [_payment("alice", i, NOW - timedelta(days=45)) for i in range(200, 205)]  # a day without any
    assert insert(store, tenant, "key-a", older, NOW + timedelta(hours=3)).capped == tuple(older)
    report = reputation_store.identity_reputation(store, tenant, "alice", NOW.date())
    assert report is not None and report["events"] == 100


def test_the_runs_own_events_are_never_capped(store: Store, tenant: str) -> None:
    runs = [
        ReputationEvent(
            event_uuid(tenant, f"run-{i}"), NOW, "alice", "task_quality", "run_trust", 0.5, reference_type="run"
        )
        for i in range(150)
    ]
    assert len(reputation_store.insert_events(store, tenant, runs)) == 150
    report = reputation_store.identity_reputation(store, tenant, "alice", NOW.date())
    assert report is not None and report["events"] == 150


@pytest.mark.parametrize("source", ["repute", "legacy", ""])
def test_a_posted_signal_cannot_take_a_reserved_source(store: Store, tenant: str, source: str) -> None:
    with pytest.raises(ValueError, match="source"):
        reputation_store.insert_signals(store, tenant, source, [_payment("alice", 1)], NOW)


def test_insert_outcome_tells_stored_from_duplicate(store: Store, tenant: str) -> None:
    batch = [_payment("alice", 1), _payment("alice", 2), _payment("alice", 1, delta=-1.0), _payment("bob", 1)]
    outcome = reputation_store.insert_signals(store, tenant, "key-a", batch, NOW)
    assert outcome.stored == (batch[0], batch[1], batch[3]) and outcome.duplicates == (batch[2],)
    again = reputation_store.insert_signals(store, tenant, "key-b", batch, NOW)
    assert again.stored == () and again.duplicates == tuple(batch)


@pytest.mark.parametrize("credibility", [-0.1, 1.5, math.nan, math.inf])
def test_credibility_outside_zero_one_is_refused(store: Store, tenant: str, credibility: float) -> None:
    with pytest.raises(ValueError, match="credibility"):
        reputation_store.set_credibility(store, tenant, "key-a", credibility, NOW)


def test_sources_list_the_seen_and_the_set(store: Store, tenant: str) -> None:
    reputation_store.insert_events(
        store,
        tenant,
        [ReputationEvent(uuid.uuid4(), NOW, "alice", "task_quality", "run_trust", 1.0, reference_type="run")],
    )
    reputation_store.insert_signals(store, tenant, "key-a", [_payment("alice", 1)], NOW)
    reputation_store.set_credibility(store, tenant, "key-z", 0.2, NOW)
    reputation_store.set_credibility(store, tenant, "key-z", 0.3, NOW + timedelta(seconds=1))
    reputation_store.set_credibility(store, f"other_{tenant}", "key-a", 0.0, NOW)
    assert reputation_store.list_sources(store, tenant) == [
        {"source": "key-a", "credibility": 1.0, "updated_at": None},
        {"source": "key-z", "credibility": 0.3, "updated_at": NOW + timedelta(seconds=1)},
        {"source": "repute", "credibility": 1.0, "updated_at": None},
    ]


def test_a_read_weighs_by_the_latest_credibility_written_whatever_the_order_of_the_writes(
    store: Store, tenant: str
) -> None:
    reputation_store.insert_signals(store, tenant, "key-a", [_payment("alice", 1, delta=1.0)], NOW)
    reputation_store.insert_signals(store, tenant, "key-b", [_payment("alice", 2, delta=-1.0)], NOW)
    reputation_store.set_credibility(store, tenant, "key-a", 0.2, NOW)
    reputation_store.set_credibility(store, tenant, "key-a", 0.6, NOW + timedelta(seconds=2))
    reputation_store.set_credibility(store, tenant, "key-a", 0.9, NOW + timedelta(seconds=1))  # written last, older
    reputation_store.set_credibility(store, f"other_{tenant}", "key-b", 0.0, NOW + timedelta(seconds=3))
    report = reputation_store.identity_reputation(store, tenant, "alice", NOW.date())
    assert report is not None  # key-a weighs 0.6; key-b 1, as never set for this tenant
    assert report["economic"] == pytest.approx(50 * (1 + (0.6 - 1.0) / (0.6 + 1.0)), abs=1e-9)


def test_migration_0006_keeps_the_meaning_of_stored_events(
    fresh_database: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, tenant, today = fresh_database, "t", datetime.now(UTC).date()
    every_migration = migrations.discover()
    monkeypatch.setattr(migrations, "discover", lambda *_args: [m for m in every_migration if m.version < 6])
    migrations.migrate(store)
    posted = random_events(tenant, today, seed=3)
    old_columns = writer.REPUTATION_COLUMNS[:-3]  # before 0006: no source, no capped (and no sign: 0010)
    store.client.insert(
        "reputation_events",
        [[tenant, *(getattr(e, c) for c in old_columns[1:])] for _, e in posted],
        column_names=old_columns,
    )
    monkeypatch.setattr(migrations, "discover", lambda *_args: every_migration)
    assert "0006_reputation_sources" in migrations.migrate(store)

    sources = store.client.query("SELECT event_id, source FROM reputation_events").result_rows
    expected_source = {e.event_id: ("repute" if s == "repute" else "legacy") for s, e in posted}
    assert dict(sources) == expected_source
    assert_store_matches(store, tenant, raw(posted, today, cap=10**9), today, "after 0006")  # none capped before 0006


def test_an_identity_and_a_source_with_capped_events_only_have_no_reputation(
    store: Store, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no signal counted (a cap of 0), the daily sums hold the capped events' counts only (migration
    0027): the identity has no reputation, no fleet row, and the source is not listed. Broken on purpose: the
    formula's `HAVING sum(counted_rows) != 0` removed (sql/definitions/reputation_at.sql) → the identity
    reads a reputation of nulls; the sources list's removed (sql/sources_list.sql) → the source is listed."""
    monkeypatch.setattr(store, "settings", store.settings.model_copy(update={"signals_per_source_per_day": 0}))
    outcome = reputation_store.insert_signals(store, tenant, "key-z", [_payment("ghost", i) for i in range(3)], NOW)
    assert len(outcome.capped) == 3
    assert reputation_store.identity_reputation(store, tenant, "ghost", NOW.date()) is None
    assert "key-z" not in {row["source"] for row in reputation_store.list_sources(store, tenant)}
    assert "ghost" not in _fleet(store, tenant)
    counted = ReputationEvent(uuid.uuid4(), NOW, "ghost", "task_quality", "run_trust", 0.5, reference_type="run")
    reputation_store.insert_events(store, tenant, [counted])  # a run's own event: never capped
    reputation = reputation_store.identity_reputation(store, tenant, "ghost", NOW.date())
    assert reputation is not None and reputation["events"] == 1
