"""Whether a tenant has seen an identity (`identity_exists`): the reputation, explain and history reads answer
404 for an identity of which the tenant has neither a reputation event nor a run, and a report (with no
figures yet) for one it has either of. Broken on purpose: `result_rows[0][0] > 0` → `>= 0` or `> -1`
(every identity is known); the `+` of its two counts → `-` (an identity with an event and no run, or the
other way round, reads unknown)."""

import uuid
from datetime import UTC, datetime

from service.model import RunHeader
from service.reputation.model import ReputationEvent
from service.services.receivers import stream
from service.store import reputation as reputation_store
from service.store.client import Store

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def test_an_identity_is_known_by_an_event_or_a_run_of_the_tenants_own(store: Store, tenant: str) -> None:
    signalled, run_only = "agent-signalled", "agent-with-a-run"
    event = ReputationEvent(uuid.uuid4(), NOW, signalled, "economic", "payment_completed", 1.0)
    reputation_store.insert_signals(store, tenant, "key-known", [event], NOW)
    stream.open_run(store, tenant, RunHeader(run_only), NOW)

    assert reputation_store.identity_exists(store, tenant, signalled)
    assert reputation_store.identity_exists(store, tenant, run_only)
    assert not reputation_store.identity_exists(store, tenant, "agent-never-seen")
    other_tenant = f"{tenant}_other"
    assert not any(reputation_store.identity_exists(store, other_tenant, name) for name in (signalled, run_only))
