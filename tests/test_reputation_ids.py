"""Posted signals live in an id space of their own (SPEC §7.1 "Ids", issue #28): no client can pre-claim
the id of a run's event, a retraction or a rebuild's generation, and `repute reputation rebuild` repairs
the runs whose ids a client pre-claimed before that (the row put in directly here, as the old signal path
stored it: the client's event_id as the stored id)."""

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


def _signal(event_id: str, delta: float = 1.0, **extra: Any) -> dict[str, Any]:
    return {"identity": IDENTITY, "category": "task_quality", "event_type": "run_trust", "score_delta": delta,
            "reference_type": "run", "event_id": event_id, **extra}  # fmt: skip


def test_a_signal_under_a_runs_emitted_id_never_displaces_the_runs_event(
    make_client, embedded_store: Store, tenant: str
) -> None:
    """Fails with the client's event_id as the stored id (before issue #28): the signal took the id of the
    run's run_trust, the run's -1 was skipped as a duplicate and the agent read 100."""
    admin, poster = make_client(tenant), make_client(tenant, ("ingest",))
    run_id = "run-claimed"
    emitted_id = str(event_uuid(tenant, run_id, "run_trust"))
    answer = poster.post("/v1/reputation-events", json=[_signal(emitted_id, reference_id=run_id)])
    assert answer.status_code == 202 and answer.json()["accepted"] == 1
    [stored_id] = answer.json()["event_ids"]
    assert stored_id != emitted_id

    assert admin.post("/v1/sessions", json=_unsafe_session(run_id)).status_code == 201
    rows = {str(row["event_id"]): row for row in _rows(embedded_store, tenant)}
    run_trust = rows[emitted_id]
    assert (run_trust["source"], run_trust["score_delta"]) == ("repute", -1.0)  # the run's own, unsafe
    signal = rows[stored_id]
    assert (signal["source"], signal["attributes"]) == (_key_id(poster), {"client_event_id": emitted_id})
    assert_store_matches(embedded_store, tenant, list(rows.values()), datetime.now(UTC).date(), "both count")
    report = admin.get(f"/v1/identities/{IDENTITY}/reputation").json()
    assert report["categories"]["task_quality"] == 50.0  # the signal's +1 and the run's -1


def test_a_client_id_is_its_sources_own_and_a_repost_changes_nothing(
    make_client, embedded_store: Store, tenant: str
) -> None:
    first, second = make_client(tenant, ("ingest",)), make_client(tenant, ("ingest",))
    client_id = str(uuid.uuid4())
    posted = first.post("/v1/reputation-events", json=[_signal(client_id)]).json()
    assert (posted["accepted"], posted["duplicates"]) == (1, 0)
    again = first.post("/v1/reputation-events", json=[_signal(client_id, delta=-1.0)]).json()
    assert (again["accepted"], again["duplicates"], again["event_ids"]) == (0, 1, posted["event_ids"])
    other = second.post("/v1/reputation-events", json=[_signal(client_id.upper(), delta=-1.0)]).json()
    assert other["accepted"] == 1 and other["event_ids"] != posted["event_ids"]
    rows = _rows(embedded_store, tenant)
    assert sorted((row["source"], row["score_delta"]) for row in rows) == sorted(
        [(_key_id(first), 1.0), (_key_id(second), -1.0)]
    )
    assert all(row["attributes"] == {"client_event_id": client_id} for row in rows)


def test_the_client_event_id_attribute_is_the_servers_to_set(make_client, tenant: str) -> None:
    client = make_client(tenant, ("ingest",))
    refused = client.post(
        "/v1/reputation-events", json=[_signal(str(uuid.uuid4()), attributes={"client_event_id": "x"})]
    )
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["field"] == "events[0].attributes.client_event_id"


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
