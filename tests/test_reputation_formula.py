"""One reputation formula (issue #29): service/reputation/model.py is its one source. A model changed there
alone changes the view reputation_at (and so the fleet table), the API's one-identity read and the explanation
alike, as the brute-force recomputation with the same model says; a store migrated from main, whose view was
the one of migration 0010, reads as before (to 1e-9) and exactly as a fresh store; and the same events read to
the same bits however the parts hold their daily sums."""

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from service.reputation import model
from service.services.reputation import explain
from service.store import migrate as migrations
from service.store import reputation as reputation_store
from service.store.client import Store
from tests.reputation_oracle import (
    Model,
    assert_matches,
    reference_key,
    reference_points,
    reputation,
    type_contributions,
)
from tests.reputation_seed import (
    Posted,
    model_in_force,
    random_events,
    rows_close,
    seed,
    store_posted,
    view_rows,
)

TENANT = "t"
# Another model, given to the service (model.py) and to the recomputation alike.
OTHER = {"CATEGORY_WEIGHTS": {"task_quality": 0.2, "economic": 0.5, "identity_hygiene": 0.3}, "WINDOW_DAYS": 60,
         "FULL_CONFIDENCE_EVENTS": 40}  # fmt: skip
ORACLE = Model(weights=OTHER["CATEGORY_WEIGHTS"], window_days=60, full_confidence_events=40)


@pytest.fixture
def under_another_model(fresh_database: Store, monkeypatch: pytest.MonkeyPatch) -> tuple[list[dict[str, Any]], date]:
    """A store of its own with the seeded events, migrated, then the model changed in model.py alone."""
    definitions = ["definitions/reputation_at", "definitions/reputation_scores_mv"]
    assert migrations.migrate(fresh_database)[-2:] == definitions
    events, today = seed(fresh_database, TENANT)
    for name, value in OTHER.items():
        monkeypatch.setattr(model, name, value)
    assert migrations.migrate(fresh_database) == definitions  # the views follow, re-created once
    assert migrations.migrate(fresh_database) == []
    return events, today


def _check_reads(store: Store, events: list[dict[str, Any]], identities: list[str], days: list[date]) -> None:
    for as_of in days:
        for identity in identities:
            expected = reputation(events, identity, as_of, ORACLE)
            actual = reputation_store.identity_reputation(store, TENANT, identity, as_of)
            if actual is None:
                assert expected["events"] == 0 and expected["overall"] is None, (identity, as_of)
            else:
                assert_matches(actual, expected, f"{identity} as of {as_of}")


def _check_fleet(store: Store, events: list[dict[str, Any]], today: date) -> None:
    reputation_store.refresh_scores(store)
    fleet = reputation_store.list_identities(store, TENANT, limit=1000)
    assert fleet
    for row in fleet:
        assert_matches(row, reputation(events, row["identity"], today, ORACLE), f"fleet {row['identity']}")


def _check_explanations(store: Store, events: list[dict[str, Any]], identities: list[str], today: date) -> None:
    for identity in identities:
        explanation = explain(store, TENANT, identity, today)
        assert explanation is not None and explanation["window_days"] == 60
        for window, offset in (("current", 0), ("7d_ago", 7)):
            expected = type_contributions(events, identity, today - timedelta(days=offset), ORACLE)
            shown = {
                (category, event_type): windows[window]
                for category, part in explanation["categories"].items()
                for event_type, windows in part["event_types"].items()
                if windows[window]["events"]
            }
            assert shown.keys() == expected.keys(), (identity, window)
            for key, (count, moved, weighed) in expected.items():
                assert shown[key]["events"] == count, (identity, window, key)
                assert abs(shown[key]["weighted_delta"] - moved) <= 1e-9 and abs(shown[key]["weight"] - weighed) <= 1e-9
        points = reference_points(events, identity, today, ORACLE)  # weighed by the other model's categories
        for reference in explanation["top_references"]:
            assert abs(reference["points"] - points[reference_key(reference)]) <= 1e-6, (identity, reference)


def test_a_model_changed_in_model_py_alone_changes_the_view_the_read_and_the_explanation(
    fresh_database: Store, under_another_model: tuple[list[dict[str, Any]], date]
) -> None:
    store, (events, today) = fresh_database, under_another_model
    identities = sorted({e["identity"] for e in events})
    assert any(
        reputation(events, identity, today, ORACLE)["overall"] != reputation(events, identity, today)["overall"]
        for identity in identities
    ), "the other model must change the figures of these events"
    _check_reads(store, events, identities, [today, today - timedelta(days=7), today - timedelta(days=45)])
    _check_fleet(store, events, today)
    _check_explanations(store, events, ["agent-00", "agent-07", "agent-33"], today)


VIEW_TEXT = (
    "SELECT replaceAll(create_table_query, currentDatabase() || '.', '') FROM system.tables"
    " WHERE database = currentDatabase() AND name = 'reputation_at'"
)
WEIGHED = Model({"key-a": 0.25, "legacy": 0.5}, half_life=30.0)


def test_a_store_migrated_from_main_reads_as_before_and_exactly_as_a_fresh_one(
    fresh_database: Store, embedded_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, every_migration = fresh_database, migrations.discover()
    monkeypatch.setattr(migrations, "discover", lambda *_args: [m for m in every_migration if m.version < 18])
    migrations.migrate(store)  # main's schema: reputation_at is the view of migration 0010
    _events, today = seed(store, TENANT)
    days = [today, today - timedelta(days=30), today - timedelta(days=100)]
    flat = view_rows(store, TENANT, days)
    with model_in_force(store, TENANT, WEIGHED):
        weighed = view_rows(store, TENANT, days)

    monkeypatch.setattr(migrations, "discover", lambda *_args: every_migration)
    assert migrations.migrate(store)[-2:] == ["definitions/reputation_at", "definitions/reputation_scores_mv"]
    with model_in_force(store, TENANT, WEIGHED):
        rows_close(view_rows(store, TENANT, days), weighed)
    with model_in_force(store, TENANT, Model(dict.fromkeys(WEIGHED.credibility, 1.0))):
        rows_close(view_rows(store, TENANT, days), flat)
    assert len(flat) > 100
    fresh = embedded_store.client.query(VIEW_TEXT).result_rows
    assert store.client.query(VIEW_TEXT).result_rows == fresh and len(fresh) == 1


def _store_alone(store: Store, tenant: str, posted: list[Posted], today: date) -> None:
    """Each event in an insert of its own: each a part of its own while the merges are stopped."""
    for one in posted:
        store_posted(store, tenant, [one], today)


def test_the_figures_are_the_same_bits_however_the_parts_hold_the_daily_sums(fresh_database: Store) -> None:
    """The same events stored in one insert per source (tenant `whole`) and one event per insert with the merges
    stopped (tenant `split`: a day's sums in many parts) read to the same bits: the view, the one-identity
    read and the explanation, under credibilities and a half-life that make every factor inexact in binary; and
    the explanation's category scores are the read's, to the bit (one arithmetic for both).
    Broken on purpose: the daily sums times the factor as Float64 products (`toFloat64(weighted_sum) *
    toFloat64(factor)` in sql/definitions/reputation_at.sql, or `toFloat64(weighted) * toFloat64(factor)` in
    sql/identity_explain.sql) → this test fails."""
    store = fresh_database
    migrations.migrate(store)
    store.client.command("SYSTEM STOP MERGES reputation_daily_types")
    today = datetime.now(UTC).date()
    chosen = {f"agent-{n:02d}" for n in range(2, 7)}  # none with a burst past the daily cap
    posted = [(source, event) for source, event in random_events("t", today, seed=11) if event.identity in chosen]
    store_posted(store, "whole", posted, today)
    _store_alone(store, "split", posted, today)
    days = [today, today - timedelta(days=20)]
    figures: dict[str, list[Any]] = {}
    for tenant in ("whole", "split"):
        with model_in_force(store, tenant, WEIGHED):
            view = [row[1:] for row in view_rows(store, tenant, days)]
            reads = [
                reputation_store.identity_reputation(store, tenant, identity, today) for identity in sorted(chosen)
            ]
            explained = [explain(store, tenant, identity, today) for identity in sorted(chosen)]
        figures[tenant] = [view, reads, explained]
    assert len(figures["whole"][0]) == len(chosen) * len(days)
    assert figures["split"] == figures["whole"]
    with model_in_force(store, "whole", WEIGHED):
        for identity in sorted(chosen):
            read = reputation_store.identity_reputation(store, "whole", identity, today) or {}
            rows = reputation_store.explanation_rows(store, "whole", identity, today)
            explained = {r["category"]: r["score"] for r in rows if r["part"] == "category" and r["offset_days"] == 0}
            assert explained and explained == {category: read[category] for category in explained}, identity


def test_the_reported_score_is_the_same_in_python_as_in_sql(embedded_store: Store) -> None:
    """An explanation's points are computed in Python from the formula's figures (service.reputation.explain),
    on the scale the SQL reports its scores on: model.reported_score is REPORTED_SCORE_SQL to the bit."""
    scores = [-1.0, -0.37, 0.0, 1e-9, 0.123456789, 2 / 3, 1.0]
    query = f"SELECT arrayMap({model.REPORTED_SCORE_SQL}, {{scores:Array(Float64)}})"
    in_sql = embedded_store.client.query(query, parameters={"scores": scores}).result_rows[0][0]
    assert in_sql == [model.reported_score(score) for score in scores]
