"""A seeded tenant for the reputation tests: 50 identities with 200 days of random run events and posted
signals from two sources, plus bursts past the daily cap; and the scoring models the tests put in force."""

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from service.reputation.model import REPUTE_SOURCE, ReputationEvent, event_uuid
from service.settings import Settings
from service.store import reputation as reputation_store
from service.store.client import Store
from tests.reputation_oracle import Model, apply_caps, assert_close, assert_matches, reputation

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


def random_events(tenant: str, today: date, seed: int) -> list[Posted]:
    rng = random.Random(seed)
    posted = [
        _random_event(rng, tenant, f"agent-{n:02d}", i, today) for n in range(50) for i in range(rng.randint(0, 60))
    ]
    return posted + _bursts(rng, tenant, today)


def arrival(today: date) -> datetime:
    """When the seeded signals arrive: all on `today`, so each source's daily cap counts all of an
    identity's signals together (SPEC §7.1: per day of arrival, whatever the timestamps)."""
    return datetime.combine(today, time(12), UTC)


def store_posted(store: Store, tenant: str, posted: list[Posted], today: date) -> None:
    """Stores each source's events in their order, in batches, as the pipeline and the API would; the
    signals arriving on `today`."""
    for source in sorted({s for s, _ in posted}):
        events = [e for s, e in posted if s == source]
        for start in range(0, len(events), 200):
            batch = events[start : start + 200]
            if source == REPUTE_SOURCE:
                reputation_store.insert_events(store, tenant, batch)
            else:
                reputation_store.insert_signals(store, tenant, source, batch, arrival(today))


def raw(posted: list[Posted], today: date, cap: int = 100) -> list[dict[str, Any]]:
    """The events as rows, capped as `store_posted` stores them on `today`."""
    return apply_caps([{**asdict(e), "source": s, "arrived_at": arrival(today)} for s, e in posted], cap)


def seed(store: Store, tenant: str) -> tuple[list[dict[str, Any]], date]:
    """Stores the random events for today; returns them as raw rows (caps applied) and today."""
    today = datetime.now(UTC).date()
    posted = random_events(tenant, today, seed=7)
    store_posted(store, tenant, posted, today)
    return raw(posted, today), today


@contextmanager
def model_in_force(store: Store, tenant: str, model: Model) -> Iterator[None]:
    """The model's credibilities for the tenant and its half-life for the store, which every read of the
    store takes (so a test module doing this has a store of its own: `own_store`); the flat model is put
    back on exit for the module's next test."""
    now = datetime.now(UTC)
    for source, credibility in model.credibility.items():
        reputation_store.set_credibility(store, tenant, source, credibility, now)
    reputation_store.sync_half_life(store, Settings(reputation_half_life_days=model.half_life))
    try:
        yield
    finally:
        reputation_store.sync_half_life(store, Settings(reputation_half_life_days=None))


def assert_store_matches(
    store: Store, tenant: str, events: list[dict[str, Any]], as_of: date, context: str, model: Model | None = None
) -> None:
    """Every identity of `events` reads from the store as the brute-force recomputation says (no row
    where it counts nothing)."""
    model = model or Model()
    for identity in sorted({e["identity"] for e in events}):
        expected = reputation(events, identity, as_of, model)
        actual = reputation_store.identity_reputation(store, tenant, identity, as_of)
        if actual is None:
            assert expected["events"] == 0 and expected["overall"] is None and not expected["failures"], identity
        else:
            assert_matches(actual, expected, f"{context}: {identity} as of {as_of}")


_VIEW_ROWS = "SELECT * FROM reputation_at(as_of = {as_of:Date}) WHERE tenant = {tenant:String} ORDER BY identity"


def view_rows(store: Store, tenant: str, days: list[date]) -> list[tuple]:
    """The rows of the view reputation_at for the tenant on each day, as whatever release made the view reads."""
    parameters = [{"as_of": as_of, "tenant": tenant} for as_of in days]
    return [row for each in parameters for row in store.client.query(_VIEW_ROWS, parameters=each).result_rows]


def rows_close(actual: list[tuple], expected: list[tuple]) -> None:
    """The same rows, floats to 1e-9: migration 0010's view rounded a float product of each day's sums, today's
    multiplies them by an exact factor (sql/definitions/reputation_at.sql), which may change a figure's last bits."""
    assert_close([list(row) for row in actual], [list(row) for row in expected])
