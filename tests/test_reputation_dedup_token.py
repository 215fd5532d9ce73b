"""The insert deduplication token of reputation_events, on its own: the layer that holds when the id check
cannot (a retry racing from another process, which does not share the tenant's insert lock). The daily
aggregates fold every inserted block in their materialized view, so a block that reached them twice would
count twice forever; these tests write one block twice below the id check and read what the service reads.

The second block holds the same events in another order (a client resending a batch, two processes
building it): ClickHouse's own deduplication by the block's content hash would drop a byte-identical
repeat even without a token, so only the token, made of the sorted (identity, id) pairs, holds here."""

import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from service.reputation.model import ReputationEvent
from service.store import reputation as reputation_store
from service.store.client import Store

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
SOURCE = "key-dedup"


def _block(identity: str) -> list[ReputationEvent]:
    """Two payments and a chargeback of one identity: economic (1 + 1 + -1) / 3 → 66.67."""
    deltas = (1.0, 1.0, -1.0)
    return [ReputationEvent(uuid.uuid4(), NOW, identity, "economic", "payment_completed", delta) for delta in deltas]


def _write_below_the_id_check(store: Store, tenant: str, block: list[ReputationEvent]) -> None:
    """The statement `insert_signals` ends with, without the look-up of stored ids before it."""
    reputation_store._write(store, tenant, SOURCE, block, capped=set(), cap=None)


def _stored_ids(store: Store, tenant: str, identity: str) -> list[uuid.UUID]:
    """reputation_events is a plain MergeTree (no merge ever collapses its rows): its rows are what was stored."""
    result = store.client.query(
        "SELECT event_id FROM reputation_events WHERE tenant = {tenant:String} AND identity = {identity:String}",
        parameters={"tenant": tenant, "identity": identity},
    )
    return [row[0] for row in result.result_rows]


def _assert_counted_once(store: Store, tenant: str, identity: str, block: list[ReputationEvent]) -> None:
    assert sorted(_stored_ids(store, tenant, identity)) == sorted(e.event_id for e in block)
    reputation = reputation_store.identity_reputation(store, tenant, identity, NOW.date())
    assert reputation is not None
    assert (reputation["events"], reputation["positive_events"], reputation["negative_events"]) == (3, 2, 1)
    assert abs(reputation["economic"] - 50 * (1 + 1 / 3)) < 1e-9


def test_a_block_written_twice_is_stored_and_counted_once(store: Store, tenant: str) -> None:
    """Broken on purpose: `insert_deduplication_token` removed from `_write`'s settings
    (service/store/reputation.py) → the second block is stored, the aggregates count 6 events and this
    test fails."""
    block = _block("agent-retried")
    _write_below_the_id_check(store, tenant, block)
    _write_below_the_id_check(store, tenant, block[::-1])
    _assert_counted_once(store, tenant, "agent-retried", block)


def test_the_same_block_from_two_writers_at_once_is_counted_once(store: Store, tenant: str) -> None:
    """Two writers that both passed the id check (two processes) insert the same block at the same time.

    Broken on purpose: the deduplication token removed → this test fails."""
    block = _block("agent-raced")
    with ThreadPoolExecutor(2) as writers:
        for done in [writers.submit(_write_below_the_id_check, store, tenant, each) for each in (block, block[::-1])]:
            done.result()
    _assert_counted_once(store, tenant, "agent-raced", block)


def test_the_token_is_the_tenants_own(store: Store, tenant: str) -> None:
    """The same block (same identity, same ids) from another tenant is that tenant's, and is stored.

    Broken on purpose: the tenant left out of `_deduplication_token` → the second tenant's block is
    dropped as a duplicate and this test fails."""
    block = _block("agent-shared")
    other = f"{tenant}_other"
    _write_below_the_id_check(store, tenant, block)
    _write_below_the_id_check(store, other, block)
    for each in (tenant, other):
        _assert_counted_once(store, each, "agent-shared", block)
