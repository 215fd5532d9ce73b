"""`repute reputation rebuild` repairs the runs whose ids a client pre-claimed (issue #28): the row put in
directly here, as the signal path stored it (the client's event_id as the stored id)."""

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import orjson

from service.reputation.model import ReputationEvent, event_uuid
from service.reputation.rebuild import retraction_id
from service.services.rebuild import rebuild
from service.store import reputation as reputation_store
from service.store.client import Store
from service.store.rows import as_utc
from tests.conftest import FIXTURES
from tests.fleet import FleetWriter, events_before_2026_11_23
from tests.reputation_seed import assert_store_matches

IDENTITY = "agent-borealis"  # the identity of the loop fixture, an unsafe run


def _key_id(client: httpx.Client) -> str:
    return client.headers["Authorization"].removeprefix("Bearer ").split("_")[1]


def _unsafe_session(run_id: str) -> dict[str, Any]:
    """The loop fixture without its timestamps, so its events are at the finalize time: inside every window."""
    session = orjson.loads((FIXTURES / "session_loop.json").read_bytes())
    events = [{k: v for k, v in event.items() if k != "timestamp"} for event in session["events"]]
    return {**session, "run_id": run_id, "events": events}


def _rows(store: Store, tenant: str) -> list[dict[str, Any]]:
    """The tenant's stored events as the oracle reads them."""
    result = store.client.query(
        "SELECT event_id, identity, timestamp, category, event_type, score_delta, confidence, weight, reference_id,"
        " attributes, source, capped, sign FROM reputation_events WHERE tenant = {tenant:String}",
        parameters={"tenant": tenant},
    )
    rows = [dict(zip(result.column_names, row, strict=True)) for row in result.result_rows]
    return [{**row, "timestamp": as_utc(row["timestamp"]), "capped": bool(row["capped"])} for row in rows]


def _pre_claim(store: Store, tenant: str, source: str, event_id: uuid.UUID, run_id: str, at: datetime) -> None:
    """A +1 under `event_id` as the signal path stored it before issue #28 (the client's id kept)."""
    claimed = ReputationEvent(
        event_id, at, IDENTITY, "task_quality", "run_trust", 1.0, reference_type="run", reference_id=run_id
    )
    reputation_store.insert_signals(store, tenant, source, [claimed], at)


def test_a_rebuild_repairs_a_run_whose_run_trust_was_pre_claimed(
    make_client, embedded_store: Store, tenant: str
) -> None:
    """Fails without the occupants of service.reputation.rebuild: the rebuild found the run up to date
    (runs_changed 0), and the agent whose every run is unsafe kept 100."""
    admin, attacker = make_client(tenant), make_client(tenant, ("ingest",))
    run_id = "run-preclaimed"
    now = datetime.now(UTC)
    _pre_claim(embedded_store, tenant, _key_id(attacker), event_uuid(tenant, run_id, "run_trust"), run_id, now)
    assert admin.post("/v1/sessions", json=_unsafe_session(run_id)).status_code == 201
    assert admin.get(f"/v1/identities/{IDENTITY}/reputation").json()["overall"] == 100.0  # the attack, as it was

    report = admin.post("/v1/reputation/rebuild").json()
    assert (report["runs_changed"], report["events_retracted"], report["events_emitted"]) == (1, 1, 1)
    fresh = f"{tenant}_fresh"
    assert make_client(fresh).post("/v1/sessions", json=_unsafe_session(run_id)).status_code == 201
    true_events = _rows(embedded_store, fresh)  # the run's own events, as a finalize stores them
    assert [row["score_delta"] for row in true_events if row["event_type"] == "run_trust"] == [-1.0]
    assert_store_matches(embedded_store, tenant, true_events, now.date(), "repaired")
    assert admin.post("/v1/reputation/rebuild").json()["runs_changed"] == 0


def test_a_rebuild_repairs_a_run_whose_retraction_and_next_generation_were_pre_claimed(
    embedded_store: Store, tenant: str
) -> None:
    """A run emitted under the old model (run_trust +0.6 for an unsafe run at trust 80), whose retraction
    id and the next generation's id a client claimed. Fails without the occupants: the retraction and the
    new run_trust were skipped as known ids, so the old +0.6 and the two +1 kept counting."""
    at = datetime.now(UTC) - timedelta(hours=1)
    old = FleetWriter(embedded_store, tenant, emit=events_before_2026_11_23)
    old.run(IDENTITY, at, 80, "unsafe_for_production", failures=["infinite_tool_loop"])
    run_id = old.runs[0].run_id
    old.flush()
    base = event_uuid(tenant, run_id, "run_trust")
    for claimed in (retraction_id(base), event_uuid(str(base), "generation", "1")):
        _pre_claim(embedded_store, tenant, "key-attacker", claimed, run_id, at)

    report = rebuild(embedded_store, tenant)
    assert (report.runs_changed, report.events_retracted, report.events_emitted) == (1, 3, 1)
    fresh = FleetWriter(embedded_store, f"{tenant}_fresh")
    fresh.run(IDENTITY, at, 80, "unsafe_for_production", failures=["infinite_tool_loop"])
    fresh.flush()
    assert_store_matches(embedded_store, tenant, _rows(embedded_store, f"{tenant}_fresh"), at.date(), "repaired")
    assert rebuild(embedded_store, tenant).runs_changed == 0
