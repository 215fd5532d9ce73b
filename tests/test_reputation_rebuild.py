"""`repute reputation rebuild` / POST /v1/reputation/rebuild through the live server on the embedded store:
a tenant whose runs were emitted under the model before 2026-11-23 (run_trust = (trust - 50) / 50, also
for runs without events) ends up exactly where a tenant emitted under the current model is, equal to a
brute-force recomputation from its raw events (retractions included); a second rebuild changes nothing;
another tenant is never touched; only admins may, and only the operator for another tenant."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import orjson
import pytest
from typer.testing import CliRunner

from service.cli import app as cli
from service.services.rebuild import rebuild
from service.store import reputation as reputation_store
from service.store.client import Store
from tests.conftest import FIXTURES
from tests.fleet import FleetWriter, events_before_2026_11_23
from tests.reputation_oracle import assert_close
from tests.reputation_seed import assert_store_matches

NOW = datetime.now(UTC).replace(microsecond=0)
IDENTITIES = ("agent-unsafe", "agent-ready", "agent-mixed")
DAYS = 20
# What the rebuild has to change in the fleet below (by hand): every unsafe run's run_trust (20), and of
# agent-mixed's five kinds of run (4 each) all but the execution error: a review, a ready run at 90 and a
# session at 85 get a new run_trust, a run without events loses its own. Ready runs at 100 are up to date.
CHANGED_RUNS = DAYS + 4 * 4
EMITTED = DAYS + 3 * 4


def _fleet(writer: FleetWriter) -> FleetWriter:
    for day in range(DAYS):
        at = NOW - timedelta(days=day, hours=1)
        writer.run("agent-unsafe", at, 80 + day % 16, "unsafe_for_production", failures=["infinite_tool_loop"])
        writer.run("agent-ready", at, trust=100)
        mixed = day % 5
        if mixed == 0:
            writer.run("agent-mixed", at, trust=70, readiness="review_recommended")
        elif mixed == 1:
            writer.run("agent-mixed", at, trust=90, failures=["cost_explosion"])
        elif mixed == 2:
            writer.run("agent-mixed", at, trust=0, readiness="unsafe_for_production", error=("agent", "provider_error"))
        elif mixed == 3:
            writer.run("agent-mixed", at, trust=100, event_count=0)
        else:
            writer.run("agent-mixed", at, trust=85, composite=7.5)
    return writer


@dataclass
class Tenants:
    old: str  # emitted before 2026-11-23, rebuilt by the tests
    fresh: str  # the same runs emitted under the current model
    bystander: str  # old too, never rebuilt by the old tenant's admin


@pytest.fixture
def tenants(embedded_store: Store, tenant: str) -> Tenants:
    chosen = Tenants(f"{tenant}_old", f"{tenant}_fresh", f"{tenant}_bystander")
    _fleet(FleetWriter(embedded_store, chosen.old, emit=events_before_2026_11_23)).flush()
    _fleet(FleetWriter(embedded_store, chosen.fresh)).flush()
    _fleet(FleetWriter(embedded_store, chosen.bystander, emit=events_before_2026_11_23)).flush()
    return chosen


def _reports(client: httpx.Client) -> dict[str, Any]:
    found = {}
    for identity in IDENTITIES:
        response = client.get(f"/v1/identities/{identity}/reputation")
        response.raise_for_status()
        found[identity] = {k: v for k, v in response.json().items() if k != "as_of"}
    return found


def _explanations(client: httpx.Client) -> dict[str, Any]:
    return {identity: client.get(f"/v1/identities/{identity}/reputation/explain").json() for identity in IDENTITIES}


def _raw_events(store: Store, tenant: str) -> list[dict[str, Any]]:
    result = store.client.query(
        "SELECT identity, timestamp, category, event_type, score_delta, confidence, weight, reference_id, source,"
        " capped, sign FROM reputation_events WHERE tenant = {tenant:String}",
        parameters={"tenant": tenant},
    )
    names = result.column_names
    return [dict(zip(names, row, strict=True)) for row in result.result_rows]


def _rebuild(client: httpx.Client, **params: str) -> dict[str, Any]:
    response = client.post("/v1/reputation/rebuild", params=params)
    response.raise_for_status()
    return response.json()


def test_a_rebuild_brings_old_events_to_the_current_model_once(
    make_client, embedded_store: Store, tenants: Tenants
) -> None:
    admin, fresh, bystander = make_client(tenants.old), make_client(tenants.fresh), make_client(tenants.bystander)
    ingested = admin.post("/v1/sessions", content=(FIXTURES / "session_multi.json").read_bytes())
    assert ingested.status_code == 201  # finalized by this server: already under the current model
    before = _reports(admin)
    assert before["agent-unsafe"]["overall"] > 80  # every run unsafe, and yet the old model raised it
    assert before == _reports(bystander)
    bystander_rows = len(_raw_events(embedded_store, tenants.bystander))

    report = _rebuild(admin)
    assert report == {
        "tenant": tenants.old,
        "runs_examined": 3 * DAYS + 1,
        "runs_changed": CHANGED_RUNS,
        "events_retracted": CHANGED_RUNS,
        "events_emitted": EMITTED,
        "runs_rediagnosed": 0,
        "runs_without_events": 0,
    }
    after = _reports(admin)
    assert after["agent-unsafe"]["overall"] < 10 and after["agent-ready"]["overall"] == 100.0
    assert_close(after, _reports(fresh))
    assert_close(_explanations(admin), _explanations(fresh))
    assert_store_matches(embedded_store, tenants.old, _raw_events(embedded_store, tenants.old), NOW.date(), "rebuilt")

    reputation_store.refresh_scores(embedded_store)
    fleet = {row["identity"]: row for row in admin.get("/v1/identities").json()["identities"]}
    for identity in IDENTITIES:
        assert abs(fleet[identity]["overall"] - after[identity]["overall"]) <= 1e-9, identity
        assert fleet[identity]["events"] == after[identity]["events"]

    rows = len(_raw_events(embedded_store, tenants.old))
    again = _rebuild(admin)
    assert again == {**report, "runs_changed": 0, "events_retracted": 0, "events_emitted": 0}
    assert _reports(admin) == after and len(_raw_events(embedded_store, tenants.old)) == rows

    # A finalize that runs again emits the runs' base ids: stored already (current or retracted), skipped.
    assert (
        reputation_store.insert_events(
            embedded_store, tenants.old, _fleet(FleetWriter(embedded_store, tenants.old)).events
        )
        == ()
    )
    run_id = ingested.json()["run_id"]
    assert admin.post(f"/v1/runs/{run_id}/finalize").status_code == 200
    assert admin.post("/v1/sessions", content=(FIXTURES / "session_multi.json").read_bytes()).status_code == 200
    assert len(_raw_events(embedded_store, tenants.old)) == rows and _reports(admin) == after

    assert _reports(bystander) == before and len(_raw_events(embedded_store, tenants.bystander)) == bystander_rows


def test_pages_of_runs_and_open_runs(make_client, embedded_store: Store, tenants: Tenants) -> None:
    """Runs read in pages of 7 (an open run among them, which is no one's to rebuild) end as in one page."""
    admin = make_client(tenants.old)
    admin.post("/v1/runs", json={"run_id": "run-00007-open", "identity": "agent-ready"}).raise_for_status()
    report = rebuild(embedded_store, tenants.old, page_runs=7)
    assert (report.runs_examined, report.runs_changed, report.events_emitted) == (3 * DAYS, CHANGED_RUNS, EMITTED)
    assert_close(_reports(admin), _reports(make_client(tenants.fresh)))
    assert rebuild(embedded_store, tenants.old, page_runs=7).runs_changed == 0


def test_only_admins_rebuild_and_only_the_operator_another_tenant(make_client, tenants: Tenants) -> None:
    reader = make_client(tenants.old, ("ingest", "read"))
    refused = reader.post("/v1/reputation/rebuild")
    assert refused.status_code == 403
    admin = make_client(tenants.old)
    other = admin.post("/v1/reputation/rebuild", params={"tenant": tenants.bystander})
    assert other.status_code == 403 and other.json()["errors"][0]["field"] == "tenant"
    bystander = make_client(tenants.bystander)
    assert _reports(bystander)["agent-unsafe"]["overall"] > 80  # neither refusal wrote anything

    operator = make_client("default", ("admin",))
    report = _rebuild(operator, tenant=tenants.bystander)
    assert report["tenant"] == tenants.bystander and report["runs_changed"] == CHANGED_RUNS
    assert_close(_reports(bystander), _reports(make_client(tenants.fresh)))


def test_repute_reputation_rebuild(cli_as, tenants: Tenants) -> None:
    runner = CliRunner()
    cli_as(tenants.old, ("read",))
    refused = runner.invoke(cli, ["reputation", "rebuild"])
    assert refused.exit_code == 2 and "403" in refused.output

    cli_as(tenants.old)
    done = runner.invoke(cli, ["reputation", "rebuild"])
    assert done.exit_code == 0, done.output
    assert done.stdout == (
        f"tenant {tenants.old}: {3 * DAYS} finalized runs examined, {CHANGED_RUNS} changed: {CHANGED_RUNS} events"
        f" retracted, {EMITTED} emitted\n"
    )
    again = runner.invoke(cli, ["reputation", "rebuild", "--json"])
    assert again.exit_code == 0 and orjson.loads(again.stdout)["events_emitted"] == 0
    shown = orjson.loads(runner.invoke(cli, ["reputation", "agent-unsafe", "--json"]).stdout)
    assert shown["identity"] == "agent-unsafe" and shown["overall"] < 10  # `reputation ID` still reads one
    assert runner.invoke(cli, ["reputation", "show", "agent-unsafe"]).exit_code == 0
    assert runner.invoke(cli, ["reputation", "rebuild", "--tenant", "bad tenant!"]).exit_code == 2
