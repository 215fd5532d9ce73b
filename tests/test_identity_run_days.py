"""What an identity's runs say per day (identity_run_days, migrations/0022), read by one agent's report, the
fleet and `/history` without reading `runs`: a retried finalize counts its run once; a store filled before
the table existed gets it from its runs, and reads every reputation figure as before and as the brute-force
oracle computes it; `/history` is each day's reputation and runs, in one read."""

import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import pytest

from service.reputation.model import reported
from service.services import reputation as reputation_service
from service.store import migrate as migrations
from service.store import reputation as reputation_store
from service.store import runs as run_store
from service.store import writer
from service.store.client import Store
from service.store.records import RunRecord
from tests.fleet import FleetWriter, steady_fleet
from tests.reputation_oracle import Model
from tests.reputation_seed import assert_store_matches, rows_close, seed, view_rows
from tests.test_reputation_explain import check_explanations

TENANT, RUNS_TENANT = "t", "t-runs"
NOW = datetime.now(UTC).replace(microsecond=0)


def _loop_run(identity: str) -> dict[str, Any]:
    stamp = (NOW - timedelta(hours=1)).isoformat()
    events = [{"event": "tool_call", "tool": "search", "args": {"q": 1}, "timestamp": stamp} for _ in range(3)]
    return {"run_id": "retried", "identity": identity, "events": events}


@contextmanager
def _merges_stopped(store: Store, table: str) -> Iterator[None]:
    """A merge would fold a run's rows into one; stopped, the reads have to take each run's latest themselves."""
    store.client.command(f"SYSTEM STOP MERGES {table}")
    try:
        yield
    finally:
        store.client.command(f"SYSTEM START MERGES {table}")


def test_a_finalize_retried_after_its_run_row_failed_counts_its_run_once(
    make_client: Callable[[str], httpx.Client], embedded_store: Store, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run row cannot be written: the run stays unfinalized with its figures by day written, and the
    retry writes them again. Broken on purpose: sql/identity_activity.sql counting rows, not runs (its
    argMax per run dropped) → 2 runs; the finalize no longer handing the rows to writer.run_days → 0."""
    identity = f"retried-{uuid.uuid4().hex[:8]}"
    real = writer.runs

    def failing(*_: object) -> None:
        raise RuntimeError("the run row could not be written")

    with _merges_stopped(embedded_store, "identity_run_days"):
        monkeypatch.setattr(writer, "runs", failing)
        with make_client(tenant) as failed, pytest.raises(httpx.HTTPError):
            failed.post("/v1/sessions", json=_loop_run(identity)).raise_for_status()
        monkeypatch.setattr(writer, "runs", real)
        client = make_client(tenant)
        assert client.post("/v1/sessions", json=_loop_run(identity)).status_code == 201
        report = client.get(f"/v1/identities/{identity}/reputation").json()
        run = client.get("/v1/runs/retried").json()
    assert (report["runs"], report["execution_errors"]) == (1, 0)
    assert report["unsafe_runs"] == (run["readiness_level"] == "unsafe_for_production")
    assert report["last_run_at"] == run["run_at"]


def _expected_days(records: list[RunRecord], first: date, last: date) -> dict[str, dict[date, dict[str, Any]]]:
    """What sql/identity_days.sql should say, per identity and day, of the runs written (brute force)."""
    days: dict[str, dict[date, list[RunRecord]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        if first <= record.run_at.date() <= last:
            days[record.identity][record.run_at.date()].append(record)
    return {identity: {day: _figures(runs) for day, runs in by_day.items()} for identity, by_day in days.items()}


def _figures(runs: list[RunRecord]) -> dict[str, Any]:
    quality = [r for r in runs if r.execution_status != "execution_error"]
    return {
        "runs": len(runs),
        "execution_errors": len(runs) - len(quality),
        "unsafe_runs": sum(r.readiness == "unsafe_for_production" for r in quality),
        "mean_trust": sum(r.trust_score or 0 for r in quality) / len(quality) if quality else None,
    }


def _expected_window(records: list[RunRecord], identity: str, first: date, last: date) -> dict[str, Any] | None:
    """What sql/identity_activity.sql should say of one identity's runs written (brute force)."""
    runs = [r for r in records if r.identity == identity and first <= r.run_at.date() <= last]
    if not runs:
        return None
    figures = _figures(runs)
    quality = [r for r in runs if r.execution_status != "execution_error"]
    return {
        "runs": figures["runs"],
        "execution_errors": figures["execution_errors"],
        "unsafe_runs": figures["unsafe_runs"],
        "last_run_at": max(r.run_at for r in runs),
        "primary_failures": dict(Counter(r.primary_failure for r in quality if r.primary_failure)),
    }


def _days(store: Store, identities: list[str], first: date, last: date) -> dict[str, dict[date, dict[str, Any]]]:
    read = reputation_store.identity_days(store, RUNS_TENANT, identities, first, last)
    return {
        identity: {row["day"]: {k: v for k, v in row.items() if k != "day"} for row in days}
        for identity, days in read.items()
        if days
    }


def _window(store: Store, identity: str, first: date, last: date) -> dict[str, Any] | None:
    read = reputation_store.identity_activity(store, RUNS_TENANT, identity, first, last)
    return None if read is None else {k: v for k, v in read.items() if k != "primary_impacts"}


def test_a_store_filled_before_the_table_reads_as_before_and_as_the_oracle(
    fresh_database: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migrations 0022-0024 on a store an earlier release filled (no figures by day, the daily sums and events
    in granules of 8,192, the fleet refreshed whole): its runs' figures come from its runs, and each reputation
    figure and explanation reads as the oracle says, and the view reputation_at as the filling release's did
    (this release's own reads need 0027's daily sums, so the figures before are read by that view).
    Broken on purpose:
    0022's INSERT left out (no figures: the runs read 0), or 0024's copy of reputation_events filtered
    (`WHERE capped = 0`: the capped part of an explanation, and the caps, gone)."""
    store, every_migration = fresh_database, migrations.discover()
    # every migration but 0022-0024 (the later ones add columns the writes of this release need), 0026, which
    # asks 0023's table for a full refresh, and 0027, which completes 0024's daily sums
    earlier = [m for m in every_migration if m.version not in (22, 23, 24, 26, 27)]
    monkeypatch.setattr(migrations, "discover", lambda *_args: earlier)
    migrations.migrate(store)
    events, today = seed(store, TENANT)
    fleet = FleetWriter(store, RUNS_TENANT)
    with monkeypatch.context() as before_0022:
        before_0022.setattr(writer, "run_days", lambda *_: None)  # the earlier release wrote none
        steady_fleet(fleet, now=NOW)
    days = [today, today - timedelta(days=30)]
    before = view_rows(store, TENANT, days)  # the view of the release that filled the store

    monkeypatch.setattr(migrations, "discover", lambda *_args: every_migration)
    assert migrations.migrate(store)[:3] == [
        "0022_identity_run_days",
        "0023_incremental_fleet",
        "0024_identity_granules",
    ]
    assert_store_matches(store, TENANT, events, today, "after")
    rows_close(view_rows(store, TENANT, days), before)
    assert len(before) > 10
    check_explanations(store, TENANT, events, today, Model())  # from the new daily sums per type

    first, last = today - timedelta(days=89), today
    written = _stored_runs(store, RUNS_TENANT)
    identities = sorted({r.identity for r in written})
    assert _days(store, identities, first, last) == _expected_days(written, first, last)
    for identity in [*identities, "no-such-agent"]:
        assert _window(store, identity, first, last) == _expected_window(written, identity, first, last)
    reputation_store.refresh_scores(store)
    for row in reputation_store.list_identities(store, RUNS_TENANT, limit=100):
        window = _expected_window(written, row["identity"], first, last)
        assert window is not None
        assert (row["runs"], row["unsafe_runs"]) == (window["runs"], window["unsafe_runs"])
        assert row["last_run_at"] == window["last_run_at"]


def _stored_runs(store: Store, tenant: str) -> list[RunRecord]:
    """The tenant's runs, each as its latest version."""
    ids = [row[0] for row in store.client.query(
        "SELECT DISTINCT run_id FROM runs WHERE tenant = {t:String}", parameters={"t": tenant}
    ).result_rows]  # fmt: skip
    return list(run_store.get_runs(store, tenant, ids).values())


def test_history_is_each_days_reputation_and_quality_runs(embedded_store: Store, tenant: str) -> None:
    """One read for all its days: each day's reputation as identity_reputation reads it alone, and the day's
    quality runs and their mean trust. Broken on purpose: the formula's windows ending at the last day asked
    for every day (`as_of` from arrayMax(as_of_days)), or the history's runs counting execution errors."""
    _events, today = seed(embedded_store, tenant)
    steady_fleet(FleetWriter(embedded_store, tenant), range(0, 40, 3), now=NOW)
    identity = "agent-01"  # seeded events, and fleet runs with an execution error each day
    history = reputation_service.history(embedded_store, tenant, identity, 45, today)
    assert history is not None and [day["day"] for day in history["days"]] == [
        today - timedelta(days=44 - n) for n in range(45)
    ]
    runs = _expected_days(_stored_runs(embedded_store, tenant), today - timedelta(days=44), today)[identity]
    assert len(runs) > 10
    for day in history["days"]:
        alone = reputation_store.identity_reputation(embedded_store, tenant, identity, day["day"])
        assert day["reputation"] == (None if alone is None else reported(alone["overall"])), day["day"]
        assert day["confidence"] == (0.0 if alone is None else reported(alone["confidence"])), day["day"]
        expected = runs.get(day["day"], {"runs": 0, "execution_errors": 0, "mean_trust": None})
        assert day["runs"] == expected["runs"] - expected["execution_errors"], day["day"]
        assert day["mean_trust"] == reported(expected["mean_trust"]), day["day"]
