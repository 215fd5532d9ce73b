"""Reputation responses report figures rounded to vocab.REPORTED_DECIMALS (SPEC §7), from exact values."""

from datetime import UTC, datetime

from service.reputation.model import ReputationEvent, event_uuid
from service.reputation.report import fleet, reputation_report
from service.store import reputation as reputation_store
from service.store.client import Store

NOW = datetime.now(UTC)
DELTAS = (0.78, 0.78, 0.78, 0.1, 0.7)  # their mean lands a float ulp away from 89 or 74 on 0..100


def _run_events(tenant: str) -> list[ReputationEvent]:
    return [
        ReputationEvent(
            event_uuid(tenant, str(i)), NOW, "alice", "task_quality", "run_trust", delta, reference_type="run"
        )
        for i, delta in enumerate(DELTAS[:3])
    ] + [
        ReputationEvent(event_uuid(tenant, "e", str(i)), NOW, "alice", "economic", "payment_completed", delta)
        for i, delta in enumerate(DELTAS[3:])
    ]


def test_reported_scores_are_rounded_from_exact_values(store: Store, tenant: str) -> None:
    reputation_store.insert_events(store, tenant, _run_events(tenant))
    exact = reputation_store.identity_reputation(store, tenant, "alice", NOW.date())
    report = reputation_report(store, tenant, "alice", NOW.date())
    assert exact is not None and report is not None
    assert exact["task_quality"] != 89.0, "the example no longer shows the float noise it is about"
    assert report["categories"]["task_quality"] == 89.0
    assert report["categories"]["economic"] == 70.0
    assert report["overall"] == round(exact["overall"], 9) != exact["overall"]
    assert report["confidence"] == 0.05

    reputation_store.refresh_scores(store)
    (row,) = fleet(store, tenant)["identities"]
    assert row["categories"]["task_quality"] == 89.0 and row["overall"] == report["overall"]
