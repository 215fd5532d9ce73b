"""Reputation use cases: figures rounded to vocab.REPORTED_DECIMALS from exact values (SPEC §7), posted
signals recorded with the posting key as their source, and sources' credibility (SPEC §7.1)."""

from datetime import UTC, datetime

import pytest

from service.errors import FieldError
from service.reputation.model import ReputationEvent, event_uuid
from service.services.keys import Principal, create_key
from service.services.reputation import fleet, post_signals, reputation_report, set_source_credibility, sources
from service.store import reputation as reputation_store
from service.store.client import Store
from service.vocab import SCOPES

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
    (row,) = fleet(store, tenant, datetime.now(UTC), limit=10)["identities"]
    assert row["categories"]["task_quality"] == 89.0 and row["overall"] == report["overall"]


def test_posted_signals_carry_the_posting_key_and_report_what_was_stored(store: Store, tenant: str) -> None:
    signals = [
        {"identity": "alice", "category": "economic", "event_type": "payment_completed", "score_delta": 1,
         "timestamp": NOW, "reference_id": f"tx-{i}", "source": "chosen-by-the-client"}
        for i in range(101)
    ]  # fmt: skip
    poster = Principal("key-1", tenant, frozenset({"ingest"}))
    answer = post_signals(store, poster, signals, NOW)
    assert (answer["accepted"], answer["duplicates"], answer["capped"]) == (101, 0, 1)
    again = post_signals(store, poster, signals[:3], NOW)
    assert (again["accepted"], again["duplicates"], again["capped"]) == (0, 3, 0)
    assert sources(store, tenant) == {"sources": [{"source": "key-1", "credibility": 1.0, "updated_at": None}]}


def test_a_source_credibility_out_of_range_names_the_field(store: Store, tenant: str) -> None:
    source = create_key(store, tenant, ["ingest"], "signals", NOW).key_id
    admin = Principal("admin", tenant, frozenset(SCOPES))
    with pytest.raises(FieldError) as raised:
        set_source_credibility(store, admin, source, 2.0, NOW)
    assert raised.value.field == "credibility"
    assert set_source_credibility(store, admin, source, 0.0, NOW)["credibility"] == 0.0
