"""`repute demo`: a fleet through the real pipeline in which the alerts find the degrading agent and the
infrastructure incident, the same every time for the same seed."""

from datetime import UTC
from pathlib import Path

from service.alerts import evaluate
from service.services.demo import INCIDENT, DemoOptions, seed_demo
from service.settings import Settings
from service.store.client import Store
from tests.fleet import NOW

SMALL = DemoOptions(days=14, identities=4, seed=3)


# The latest version of each run: runs is a ReplacingMergeTree, whose physical rows depend on merges.
LATEST_RUNS = (
    "SELECT run_id, identity, run_at, execution_status, failure_stage, trust_score, readiness FROM runs"
    " WHERE tenant = {tenant:String} ORDER BY run_id, version DESC LIMIT 1 BY run_id"
)


def _runs(store: Store, tenant: str) -> list[tuple]:
    return store.client.query(LATEST_RUNS, parameters={"tenant": tenant}).result_rows


def test_the_alerts_find_the_degrading_agent_and_the_incident(embedded_store: Store, demo_fleet: tuple) -> None:
    degrading, now = demo_fleet
    fired = {(a.alert, a.subject) for a in evaluate(embedded_store, "default", Settings(data_dir=Path("x")), now)}
    assert ("identity_score_drop", degrading) in fired
    assert ("execution_error_surge", "/".join(INCIDENT)) in fired
    assert not any(alert == "identity_score_drop" and subject != degrading for alert, subject in fired)


def test_the_demo_spans_its_days_and_identities(embedded_store: Store, demo_fleet: tuple) -> None:
    _, now = demo_fleet
    (identities, days, errors, stages, latest), = embedded_store.client.query(
        "SELECT uniqExact(identity), uniqExact(toDate(run_at)), countIf(execution_status = 'execution_error'),"
        " uniqExactIf(failure_stage, execution_status = 'execution_error'), max(run_at)"
        f" FROM ({LATEST_RUNS}) WHERE run_id LIKE 'demo7-%'", parameters={"tenant": "default"}
    ).result_rows  # fmt: skip
    assert identities == 12 and days in (21, 22)
    assert errors > 20 and stages >= 2  # the incident and the trickle of other stages
    assert latest.replace(tzinfo=UTC) <= now


def test_the_same_seed_gives_the_same_fleet_and_stores_nothing_twice(embedded_store: Store, tenant: str) -> None:
    first = seed_demo(embedded_store, tenant, SMALL, NOW, 0.8)
    again = seed_demo(embedded_store, tenant, SMALL, NOW, 0.8)
    assert first.stored == first.runs > 0 and again.stored == 0
    twin = f"{tenant}-twin"
    seed_demo(embedded_store, twin, SMALL, NOW, 0.8)
    assert _runs(embedded_store, tenant) == _runs(embedded_store, twin)
    other = seed_demo(embedded_store, f"{tenant}-other", DemoOptions(days=14, identities=4, seed=4), NOW, 0.8)
    assert _runs(embedded_store, f"{tenant}-other") != _runs(embedded_store, tenant) and other.runs > 0


def test_no_run_ends_after_now(embedded_store: Store, tenant: str) -> None:
    seed_demo(embedded_store, tenant, SMALL, NOW, 0.8)
    latest = max(row[2] for row in _runs(embedded_store, tenant))
    assert latest.replace(tzinfo=UTC) <= NOW
