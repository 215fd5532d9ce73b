"""Idempotency keys are scoped by tenant and identity (security): an event id used before by another
tenant, or by the same tenant for another identity, never makes a posted event vanish, and an event
reported stored is stored."""

import threading
import uuid
from datetime import UTC, datetime

from service.reputation.model import ReputationEvent
from service.store import reputation as reputation_store
from service.store.client import Store

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _payment(event_id: uuid.UUID, identity: str, delta: float) -> ReputationEvent:
    return ReputationEvent(
        event_id, NOW, identity, "economic", "payment_completed", delta, reference_type="transaction"
    )


def _stored(store: Store, tenant: str, identity: str) -> list[tuple]:
    result = store.client.query(
        "SELECT event_id, score_delta FROM reputation_events"
        " WHERE tenant = {tenant:String} AND identity = {identity:String} ORDER BY event_id",
        parameters={"tenant": tenant, "identity": identity},
    )
    return result.result_rows


def test_an_id_reused_by_another_tenant_is_stored_for_it_and_changes_nothing_of_the_first(store: Store) -> None:
    tenant_a, tenant_b = f"a_{uuid.uuid4().hex[:8]}", f"b_{uuid.uuid4().hex[:8]}"
    shared_id = uuid.uuid4()
    alice = _payment(shared_id, "alice-agent", 1.0)
    assert reputation_store.insert_signals(store, tenant_a, "key-of-a", [alice], NOW).stored == (alice,)
    before = reputation_store.identity_reputation(store, tenant_a, "alice-agent", NOW.date())

    bob = _payment(shared_id, "bob-agent", -1.0)
    outcome = reputation_store.insert_signals(store, tenant_b, "key-of-b", [bob], NOW)
    assert outcome.stored == (bob,) and outcome.duplicates == ()

    assert _stored(store, tenant_b, "bob-agent") == [(shared_id, -1.0)]
    bob = reputation_store.identity_reputation(store, tenant_b, "bob-agent", NOW.date())
    assert bob is not None and bob["economic"] == 0.0
    assert _stored(store, tenant_a, "alice-agent") == [(shared_id, 1.0)]
    assert reputation_store.identity_reputation(store, tenant_a, "alice-agent", NOW.date()) == before


def test_an_id_reused_for_another_identity_of_the_same_tenant_is_stored(store: Store, tenant: str) -> None:
    shared_id = uuid.uuid4()
    alice, bob = _payment(shared_id, "alice-agent", 1.0), _payment(shared_id, "bob-agent", -1.0)
    assert reputation_store.insert_signals(store, tenant, "key-1", [alice], NOW).stored == (alice,)
    assert reputation_store.insert_signals(store, tenant, "key-1", [bob], NOW).stored == (bob,)
    assert _stored(store, tenant, "alice-agent") == [(shared_id, 1.0)]
    assert _stored(store, tenant, "bob-agent") == [(shared_id, -1.0)]


def test_a_repeated_id_for_the_same_identity_is_a_duplicate(store: Store, tenant: str) -> None:
    event_id = uuid.uuid4()
    first, again = _payment(event_id, "alice-agent", 1.0), _payment(event_id, "alice-agent", -1.0)
    assert reputation_store.insert_signals(store, tenant, "key-1", [first], NOW).stored == (first,)
    outcome = reputation_store.insert_signals(store, tenant, "key-1", [again], NOW)
    assert outcome.stored == () and outcome.duplicates == (again,)
    assert _stored(store, tenant, "alice-agent") == [(event_id, 1.0)]


def test_a_run_event_id_reused_by_another_tenant_is_stored(store: Store) -> None:
    tenant_a, tenant_b = f"a_{uuid.uuid4().hex[:8]}", f"b_{uuid.uuid4().hex[:8]}"
    shared_id = uuid.uuid4()
    assert len(reputation_store.insert_events(store, tenant_a, [_payment(shared_id, "alice-agent", 1.0)])) == 1
    assert len(reputation_store.insert_events(store, tenant_b, [_payment(shared_id, "alice-agent", -1.0)])) == 1
    assert _stored(store, tenant_b, "alice-agent") == [(shared_id, -1.0)]
    assert _stored(store, tenant_a, "alice-agent") == [(shared_id, 1.0)]


def test_a_tenants_inserts_never_wait_behind_another_tenants(embedded_store: Store) -> None:
    """The lock that makes the id check and the cap one step with the insert is the tenant's own."""
    tenant_a, tenant_b = f"a_{uuid.uuid4().hex[:8]}", f"b_{uuid.uuid4().hex[:8]}"
    insert = reputation_store.insert_signals
    with reputation_store.INSERTS.holding([(tenant_a,)]):  # tenant A is busy inserting
        waiting = threading.Thread(
            target=insert, args=(embedded_store, tenant_a, "key-a", [_payment(uuid.uuid4(), "x", 1)], NOW)
        )
        waiting.start()
        other = threading.Thread(
            target=insert, args=(embedded_store, tenant_b, "key-b", [_payment(uuid.uuid4(), "y", 1)], NOW)
        )
        other.start()
        other.join(timeout=120)
        assert not other.is_alive(), "tenant B's insert waited for tenant A's lock"
        assert waiting.is_alive()  # A's second insert cannot pass A's lock while it is held
    waiting.join(timeout=120)
    assert not waiting.is_alive()
    assert len(_stored(embedded_store, tenant_a, "x")) == len(_stored(embedded_store, tenant_b, "y")) == 1
