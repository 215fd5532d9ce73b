"""One identity's reputation is read from the fleet table's row when nothing it was computed from was written
since a margin before the refresh started (sql/identity_reputation_refreshed.sql), else by the formula: the
report is the same either way, and every write the row was computed from makes it stale. The tests pass a
margin of 0 where the writes are over before the refresh starts (nothing under way), and show the default
margin's effect apart."""

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest

from service.reputation.model import ReputationEvent
from service.services import reputation as reputation_service
from service.store import reputation as reputation_store
from service.store import writer
from service.store.client import Store
from service.store.recent_writes import RecentWrites
from tests.conftest import FIXTURES

IDENTITIES = ("agent-clean", "agent-mixed", "agent-signalled")
REFRESHED = reputation_store.refreshed_reputation  # as the service calls it, whatever a test patches in


def _runs(fixture: str, identity: str, count: int) -> list[dict[str, Any]]:
    events = orjson.loads((FIXTURES / fixture).read_bytes())["events"]
    bare = [{k: v for k, v in event.items() if k != "timestamp"} for event in events]
    return [{"run_id": f"{identity}-{fixture[:-5]}-{n}", "identity": identity, "events": bare} for n in range(count)]


def _signal(identity: str, delta: float, days_ago: int = 0) -> ReputationEvent:
    at = datetime.now(UTC) - timedelta(days=days_ago)
    return ReputationEvent(uuid.uuid4(), at, identity, "economic", "payment_completed", delta)


def _fresh(store: Store, tenant: str, identity: str) -> dict[str, Any] | None:
    return REFRESHED(store, tenant, identity, datetime.now(UTC).date(), margin_seconds=0)


@pytest.fixture
def refreshed_tenant(client, embedded_store: Store, tenant: str) -> str:
    """Clean runs; clean, errored and looping runs; signals of two sources (one at half credibility) over
    the window and the trends' days, and one retracted by a rebuild-free negative; then a refresh."""
    runs = (
        _runs("session_clean.json", "agent-clean", 3)
        + _runs("session_clean.json", "agent-mixed", 2) + _runs("session_infra_error.json", "agent-mixed", 2)
        + _runs("session_loop.json", "agent-mixed", 2)
    )  # fmt: skip
    assert client.post("/v1/sessions/batch", json=runs).status_code == 201
    now = datetime.now(UTC)
    signals = [_signal("agent-signalled", delta, days) for delta, days in ((1.0, 0), (-0.5, 3), (0.8, 20), (-1, 40))]
    reputation_store.insert_signals(embedded_store, tenant, "key-a", signals, now)
    reputation_store.insert_signals(embedded_store, tenant, "key-b", [_signal("agent-mixed", 0.6, 2)], now)
    reputation_store.set_credibility(embedded_store, tenant, "key-b", 0.5, now)
    reputation_store.refresh_scores(embedded_store)
    return tenant


def _report(
    store: Store, tenant: str, identity: str, monkeypatch: pytest.MonkeyPatch, refreshed: Callable[..., Any]
) -> dict[str, Any] | None:
    with monkeypatch.context() as patch:
        patch.setattr(reputation_store, "refreshed_reputation", refreshed)
        return reputation_service.reputation_report(store, tenant, identity, datetime.now(UTC).date())


def test_the_report_from_the_fleet_row_is_the_formulas(
    embedded_store: Store, refreshed_tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Broken on purpose: a figure of the row left out or renamed, the runs' figures not read as the window's
    sums (activity() given none), or a column read from the wrong table → the reports differ."""
    store, tenant = embedded_store, refreshed_tenant
    for identity in IDENTITIES:
        assert _fresh(store, tenant, identity) is not None, identity
        by_row = _report(store, tenant, identity, monkeypatch, lambda *args: _fresh(*args[:3]))
        by_formula = _report(store, tenant, identity, monkeypatch, lambda *args: None)
        assert by_row == by_formula, identity
    mixed = _report(store, tenant, "agent-mixed", monkeypatch, lambda *args: _fresh(*args[:3]))
    assert mixed is not None
    assert (mixed["runs"], mixed["execution_errors"], mixed["top_failure"]) == (6, 2, "infinite_tool_loop")
    assert mixed["last_run_at"] is not None and mixed["failures"]


def test_a_signal_since_the_refresh_makes_only_its_identitys_row_stale(
    embedded_store: Store, refreshed_tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A signal of 100 days ago: out of the current window, in the 30-day trend's. Broken on purpose: the daily
    sums' written_at not checked, or checked over another identity's or the current window's days only → the
    stale row is taken and the report misses the new signal."""
    store, tenant = embedded_store, refreshed_tenant
    now = datetime.now(UTC)
    reputation_store.insert_signals(store, tenant, "key-a", [_signal("agent-signalled", -1.0, 100)], now)
    assert _fresh(store, tenant, "agent-signalled") is None
    assert _fresh(store, tenant, "agent-clean") is not None
    by_row_path = _report(store, tenant, "agent-signalled", monkeypatch, lambda *args: _fresh(*args[:3]))
    by_formula = _report(store, tenant, "agent-signalled", monkeypatch, lambda *args: None)
    assert by_row_path == by_formula
    assert by_row_path is not None and by_row_path["score_30d_ago"] != by_row_path["overall"]


def test_a_run_since_the_refresh_makes_its_identitys_row_stale(embedded_store: Store, refreshed_tenant: str) -> None:
    """A run's row written alone (a finalize also writes reputation events, which the daily sums show).
    Broken on purpose: identity_run_days' written_at not checked, or over days outside the window → the row
    is taken."""
    store, tenant = embedded_store, refreshed_tenant
    today = datetime.now(UTC).date()
    store.client.insert(
        "identity_run_days",
        [[tenant, "agent-clean", today - timedelta(days=89), "run-late", 1, datetime.now(UTC), "ok",
          "ready_for_runtime", 90, "", 0]],
        column_names=["tenant", "identity", "day", "run_id", "version", "run_at", "execution_status", "readiness",
                      "trust_score", "primary_failure", "primary_impact"],
    )  # fmt: skip
    assert _fresh(store, tenant, "agent-clean") is None
    assert _fresh(store, tenant, "agent-mixed") is not None


@pytest.mark.parametrize(
    "change",
    [
        lambda store, tenant: reputation_store.set_credibility(store, tenant, "key-c", 0.9, datetime.now(UTC)),
        lambda store, tenant: writer.half_life(store, float(reputation_store.half_life(store) or 0), datetime.now(UTC)),
        lambda store, tenant: writer.full_refresh_request(store, datetime.now(UTC)),
    ],
    ids=["credibility", "half-life", "full refresh request"],
)
def test_what_every_identity_reads_makes_every_row_stale(
    embedded_store: Store, refreshed_tenant: str, change: Callable[[Store, str], None]
) -> None:
    """A credibility of the tenant's, the half-life (set again to the one in force: only its time changes) or a
    request for a full refresh. Broken on purpose: each check left out → its case takes the row."""
    store, tenant = embedded_store, refreshed_tenant
    change(store, tenant)
    assert [_fresh(store, tenant, identity) for identity in IDENTITIES] == [None, None, None]
    reputation_store.refresh_scores(store)
    assert None not in [_fresh(store, tenant, identity) for identity in IDENTITIES]


def test_another_tenants_credibility_leaves_the_rows(embedded_store: Store, refreshed_tenant: str) -> None:
    """Broken on purpose: the credibilities checked across tenants → the row is stale."""
    reputation_store.set_credibility(embedded_store, f"{refreshed_tenant}-other", "key-a", 0.1, datetime.now(UTC))
    assert _fresh(embedded_store, refreshed_tenant, "agent-signalled") is not None


def test_the_row_answers_for_its_day_only(embedded_store: Store, refreshed_tenant: str) -> None:
    """Broken on purpose: as_of not compared → yesterday's reputation read from today's row."""
    yesterday = datetime.now(UTC).date() - timedelta(days=1)
    assert reputation_store.refreshed_reputation(embedded_store, refreshed_tenant, "agent-clean", yesterday, 0) is None


def test_writes_within_the_margin_before_the_refresh_make_the_row_stale(
    embedded_store: Store, refreshed_tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fixture wrote moments before its refresh started: within the default margin, a write may have been
    under way and unseen by the refresh. Seen by the check alone (this process's hint of its own writes
    emptied). Broken on purpose: the margin not subtracted → the row is taken."""
    monkeypatch.setattr(reputation_store, "RECENT_WRITES", RecentWrites())
    today = datetime.now(UTC).date()
    assert reputation_store.refreshed_reputation(embedded_store, refreshed_tenant, "agent-clean", today) is None
    assert _fresh(embedded_store, refreshed_tenant, "agent-clean") is not None


def test_an_identity_this_process_just_wrote_skips_the_check(
    embedded_store: Store, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right after this process wrote for an identity, its read answers stale without a statement; another
    identity's read runs the check. Broken on purpose: the hint not consulted, or not noted by the write →
    the check's statements run."""
    now = datetime.now(UTC)
    reputation_store.insert_signals(embedded_store, tenant, "key-a", [_signal("agent-written", 1.0)], now)
    reads: list[object] = []
    monkeypatch.setattr(embedded_store, "beside", lambda call: reads.append(call) or pytest.fail("a read ran"))
    assert reputation_store.refreshed_reputation(embedded_store, tenant, "agent-written", now.date()) is None
    with pytest.raises(pytest.fail.Exception):
        reputation_store.refreshed_reputation(embedded_store, tenant, "agent-other", now.date())
    assert len(reads) == 1


def test_recent_writes_hold_per_tenant_for_their_seconds_and_up_to_their_capacity() -> None:
    recent = RecentWrites(capacity=2)
    recent.note("t1", ["a", "b"])
    assert recent.within("t1", "a", 60) and not recent.within("t2", "a", 60) and not recent.within("t1", "a", 0)
    recent.note("t1", ["c"])  # over capacity: the oldest goes
    assert not recent.within("t1", "a", 60) and recent.within("t1", "b", 60) and recent.within("t1", "c", 60)
    recent.note("t1", ["b"])  # written again: now the newest
    recent.note("t1", ["d"])
    assert recent.within("t1", "b", 60) and not recent.within("t1", "c", 60)
