"""The explanation of a reputation (SPEC §7.1) equals a brute-force recomputation from raw events, with
credibility, caps and decay, and agrees with the reputation it explains."""

import uuid
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import orjson
import pytest

from service.reputation.model import WINDOW_DAYS, ReputationEvent
from service.services.reputation import explain, reputation_report
from service.store import reputation as reputation_store
from service.store.client import Store
from tests.conftest import FIXTURES
from tests.reputation_oracle import (
    Model,
    capped_by_source,
    reference_key,
    reference_moves,
    reference_points,
    type_contributions,
)
from tests.reputation_seed import MODELS, model_in_force, seed


@pytest.fixture
def store(own_store: Store) -> Store:
    """These tests put a half-life in force, which every read of a store takes: a database of this
    module's own."""
    return own_store


MILLISECOND = timedelta(milliseconds=1)
TOLERANCE = 1e-9  # reported figures are rounded to 9 decimals


@pytest.fixture
def seeded(store: Store, tenant: str) -> tuple[list[dict[str, Any]], date]:
    return seed(store, tenant)


def close(actual: float | None, expected: float | None) -> bool:
    if actual is None or expected is None:
        return actual is expected
    return abs(actual - expected) <= TOLERANCE


def _check_event_types(explanation: dict, events: list, identity: str, as_of, model: Model) -> None:
    for window, offset in (("current", 0), ("7d_ago", 7)):
        expected = type_contributions(events, identity, as_of - timedelta(days=offset), model)
        for category, part in explanation["categories"].items():
            for event_type, windows in part["event_types"].items():
                figures = windows[window]
                count, moved, weighed = expected.pop((category, event_type), (0, 0.0, 0.0))
                assert figures["events"] == count, (identity, window, event_type)
                assert close(figures["weighted_delta"], moved) and close(figures["weight"], weighed)
        assert not expected, f"{identity}: event types missing from the {window} window: {expected}"


def _check_references(explanation: dict, events: list, identity: str, as_of, model: Model) -> None:
    moves = reference_moves(events, identity, as_of, model)
    points = reference_points(events, identity, as_of, model)
    top = explanation["top_references"]
    assert len(top) == min(10, len(moves))
    for reference in top:
        assert close(reference["weighted_delta"], moves[reference_key(reference)])
        assert abs(reference["points"] - points[reference_key(reference)]) <= 1e-6, reference
    shown = [abs(moves[reference_key(r)]) for r in top]
    assert shown == sorted(shown, reverse=True)
    left_out = set(moves) - {reference_key(r) for r in top}
    assert all(abs(moves[reference]) <= shown[-1] + TOLERANCE for reference in left_out)


@pytest.mark.parametrize("model_name", ["flat", "credibility-and-decay"])
def test_explanation_equals_recomputation(store: Store, tenant: str, seeded, model_name: str) -> None:
    events, today = seeded
    model = MODELS[model_name]
    with model_in_force(store, tenant, model):
        check_explanations(store, tenant, events, today, model)


def check_explanations(store: Store, tenant: str, events: list, today: date, model: Model) -> None:
    for as_of in (today, today - timedelta(days=20)):
        for identity in ("agent-00", "agent-01", "agent-07", "agent-33"):
            explanation = explain(store, tenant, identity, as_of)
            assert explanation is not None
            _check_event_types(explanation, events, identity, as_of, model)
            _check_references(explanation, events, identity, as_of, model)
            expected_capped = capped_by_source(events, identity, as_of)
            assert {c["source"]: c["events"] for c in explanation["capped"]} == expected_capped
            report = reputation_report(store, tenant, identity, as_of)
            assert report is not None
            for category, part in explanation["categories"].items():
                assert close(part["score"], report["categories"][category]), (identity, category)


def test_the_cap_shows_in_the_explanation(store: Store, tenant: str, seeded) -> None:
    events, today = seeded
    explanation = explain(store, tenant, "agent-00", today)
    capped = capped_by_source(events, "agent-00", today)
    assert capped["key-a"] >= 30  # the burst of 130 in one day, and the source's other signals that arrived with it
    assert explanation is not None and explanation["capped"] == [{"source": "key-a", "events": capped["key-a"]}]


def test_shares_weigh_the_type_scores_into_the_category_score(store: Store, tenant: str, seeded) -> None:
    _events, today = seeded
    explanation = explain(store, tenant, "agent-07", today)
    assert explanation is not None
    for part in explanation["categories"].values():
        typed = [w["current"] for w in part["event_types"].values() if w["current"]["score"] is not None]
        if part["score"] is not None:
            assert close(sum(w["share"] for w in typed), 1.0)
            assert abs(sum(w["share"] * w["score"] for w in typed) - part["score"]) <= 1e-6


def test_an_unknown_identity_has_no_explanation(store: Store, tenant: str) -> None:
    assert explain(store, tenant, "nobody", date(2026, 11, 20)) is None


def test_a_signal_without_a_reference_is_listed_by_what_it_moved(
    make_client, embedded_store: Store, tenant: str
) -> None:
    """Ten clean runs at +1.0 and one failed payment posted without a reference at -1.0: |δ·c·w| ties, and
    the payment, which took the overall score from 100 to 53.3, comes first by the points it moved."""
    client = make_client(tenant)
    clean = [
        {k: v for k, v in e.items() if k != "timestamp"}
        for e in orjson.loads((FIXTURES / "session_clean.json").read_bytes())["events"]
    ]
    runs = [{"run_id": f"run-{n}", "identity": "agent-payer", "events": clean} for n in range(10)]
    assert client.post("/v1/sessions/batch", json=runs).status_code == 201
    payment = {"identity": "agent-payer", "category": "economic", "event_type": "payment_failed", "score_delta": -1}
    assert client.post("/v1/reputation-events", json=[payment]).status_code == 202
    report = client.get("/v1/identities/agent-payer/reputation").json()
    assert abs(report["overall"] - 160 / 3) < 1e-6  # (0.40·1 + 0.35·(-1)) / 0.75 on 0..100
    top = client.get("/v1/identities/agent-payer/reputation/explain").json()["top_references"]
    assert len(top) == 10 and top[0]["reference_id"] == "" and top[0]["event_type"] == "payment_failed"
    assert top[0]["weighted_delta"] == -1.0 and abs(top[0]["points"] - 50 * 0.35 / 0.75 * -1) < 1e-6
    assert all(r["reference_type"] == "run" and r["event_type"] is None for r in top[1:])
    assert top[0]["primary_failure"] is None and top[0]["parent_run_id"] is None  # no run behind it
    assert all(r["primary_failure"] is None and r["parent_run_id"] is None for r in top[1:])  # clean, top-level
    assert all(abs(r["points"] - 50 * 0.40 / 0.75 / 10) < 1e-6 for r in top[1:])  # each run a tenth of its category


def test_the_references_window_holds_its_first_and_last_millisecond(embedded_store: Store, tenant: str) -> None:
    """Signals at the first millisecond of the window's first day, at the last of as_of, at the last before the
    window and the first after it: the references are the first two. Broken on purpose: the window's start or end one
    millisecond off → a reference gained or lost."""
    as_of = datetime.now(UTC).date()
    first = datetime.combine(as_of - timedelta(days=WINDOW_DAYS - 1), time(), UTC)
    next_day = datetime.combine(as_of + timedelta(days=1), time(), UTC)
    moments = {"first": first, "last": next_day - MILLISECOND, "before": first - MILLISECOND, "after": next_day}
    signals = [
        ReputationEvent(uuid.uuid4(), at, "agent-edges", "economic", "payment_completed", 0.5, reference_type="payment",
                        reference_id=name)
        for name, at in moments.items()
    ]  # fmt: skip
    reputation_store.insert_signals(embedded_store, tenant, "key-a", signals, datetime.now(UTC))
    explanation = explain(embedded_store, tenant, "agent-edges", as_of)
    assert explanation is not None
    assert sorted(r["reference_id"] for r in explanation["top_references"]) == ["first", "last"]
