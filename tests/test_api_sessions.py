"""A real session round trip through the live server: POST, then read the run, graph and reputation."""

import httpx
import orjson
import pytest

from service.store import writer
from tests.conftest import FIXTURES

# session_multi.json by hand from SPEC §4: memory n=2 -> -18 (medium), ignored output n=1 -> -17
# (medium), context n=1 at 91% -> -12 (medium), skill n=2 -> -20 (high).
MULTI_SCORES = {
    "loop_control": 100, "memory_integrity": 82, "tool_output_utilization": 83,
    "context_health": 88, "cost_efficiency": 100, "skill_adherence": 80,
}  # fmt: skip
MULTI_TRUST = 89  # round(20 + 12.3 + 16.6 + 13.2 + 15 + 12) = round(89.1)


def _post_multi(client: httpx.Client) -> dict:
    response = client.post("/v1/sessions", content=(FIXTURES / "session_multi.json").read_bytes())
    assert response.status_code == 201, response.text
    return response.json()


def test_session_round_trip(client: httpx.Client) -> None:
    posted = _post_multi(client)
    assert posted["run_id"] == "run-multi-003"
    assert posted["trust_score"] == MULTI_TRUST
    assert posted["readiness_level"] == "review_recommended"
    assert posted["primary_failure"] == "skill_failure"
    assert posted["execution_status"] == "ok"
    assert posted["diagnosis"]["scores"] == MULTI_SCORES

    run = client.get("/v1/runs/run-multi-003").json()
    assert run["identity"] == "agent-atlas" and run["suite"] == "customs-evals" and run["task_id"] == "t-02"
    assert run["status"] == "finalized"
    assert run["trust_score"] == MULTI_TRUST
    assert run["event_count"] == 8 and run["tool_calls"] == 1
    assert run["run_at"].startswith("2026-11-20T11:00:07")
    causes = [(c["type"], c["severity"], c["impact_score"]) for c in run["diagnosis"]["failure_causes"]]
    assert causes == [
        ("memory_degradation", "medium", -18),
        ("ignoring_tool_outputs", "medium", -17),
        ("context_pollution", "medium", -12),
        ("skill_failure", "high", -20),
    ]
    assert run["diagnosis"] == posted["diagnosis"]

    graph = client.get("/v1/runs/run-multi-003/graph").json()
    node_ids = [n["id"] for n in graph["nodes"]]
    assert len(node_ids) == len(set(node_ids)) == 8 + 4
    kinds = [e["type"] for e in graph["edges"]]
    assert kinds.count("precedes") == 7
    assert kinds.count("causes") == 2 + 1 + 1 + 2
    assert kinds.count("reinforces") == 2

    events = client.get("/v1/runs/run-multi-003/events").json()["events"]
    assert [e["type"] for e in events][:3] == ["context_event", "memory_event", "memory_event"]
    assert [e["event_id"] for e in events] == [f"event_{i}" for i in range(8)]

    reputation = client.get("/v1/identities/agent-atlas/reputation", params={"as_of": "2026-11-20"}).json()
    # SPEC §7 (changed 2026-11-23): a review_recommended run's run_trust is min(0, (trust - 80) / 20), so
    # trust 89 gives 0 (it gave (89 - 50) / 50 = 0.78): the reputation sits at the neutral 50.
    assert reputation["overall"] == pytest.approx(50, abs=1e-9)
    assert reputation["categories"]["task_quality"] == pytest.approx(50, abs=1e-9)
    assert reputation["categories"]["economic"] is None and reputation["categories"]["identity_hygiene"] is None
    assert reputation["events"] == 1 and reputation["confidence"] == 0.01
    assert reputation["positive_events"] == 0 and reputation["negative_events"] == 0
    assert reputation["failures"] == {
        "context_pollution": 1, "ignoring_tool_outputs": 1, "memory_degradation": 1, "skill_failure": 1,
    }  # fmt: skip
    before = client.get("/v1/identities/agent-atlas/reputation", params={"as_of": "2026-11-19"}).json()
    assert before["overall"] is None and before["events"] == 0


def test_posting_the_same_session_again_changes_nothing(client: httpx.Client) -> None:
    first = _post_multi(client)
    again = client.post("/v1/sessions", content=(FIXTURES / "session_multi.json").read_bytes())
    assert again.status_code == 200
    assert again.json()["diagnosis"]["diagnosis_hash"] == first["diagnosis"]["diagnosis_hash"]
    assert again.json()["created"] is False
    reputation = client.get("/v1/identities/agent-atlas/reputation", params={"as_of": "2026-11-20"}).json()
    assert reputation["events"] == 1


def test_open_append_finalize_matches_one_shot(client: httpx.Client) -> None:
    session = orjson.loads((FIXTURES / "session_multi.json").read_bytes())
    one_shot = _post_multi(client)["diagnosis"]
    opened = client.post("/v1/runs", json={"run_id": "streamed", "identity": "agent-atlas"})
    assert opened.status_code == 201, opened.text
    events = session["events"]
    assert client.post("/v1/runs/streamed/events", json=events[:3]).json()["event_count"] == 3
    ndjson = b"\n".join(orjson.dumps(e) for e in events[3:])
    appended = client.post("/v1/runs/streamed/events", content=ndjson, headers={"content-type": "application/x-ndjson"})
    assert appended.json() == {"run_id": "streamed", "accepted": 5, "event_count": 8}
    finalized = client.post("/v1/runs/streamed/finalize")
    assert finalized.status_code == 200, finalized.text
    assert finalized.json()["diagnosis"]["diagnosis_hash"] == one_shot["diagnosis_hash"]
    assert client.post("/v1/runs/streamed/finalize").json() == finalized.json()
    late = client.post("/v1/runs/streamed/events", json=[{"event": "decision"}])
    assert late.status_code == 409 and late.headers["content-type"] == "application/problem+json"


def _multi(**changes) -> dict:
    return {**orjson.loads((FIXTURES / "session_multi.json").read_bytes()), **changes}


def test_a_conflicting_repost_is_a_409_naming_what_differs(client: httpx.Client) -> None:
    first = _post_multi(client)
    events = _multi()["events"]
    reordered_keys = [dict(reversed(list(event.items()))) for event in events]
    same = client.post("/v1/sessions", json=_multi(events=reordered_keys))
    assert same.status_code == 200 and same.json()["created"] is False  # the same events, keys in another order
    assert same.json()["diagnosis_hash"] == first["diagnosis_hash"]

    cases = {
        "identity": _multi(identity="agent-other"),
        "events": _multi(events=[*events, {"event": "decision"}]),
        "task_id": _multi(task_id="t-99"),
    }
    for field, body in cases.items():
        conflict = client.post("/v1/sessions", json=body)
        assert conflict.status_code == 409, (field, conflict.text)
        assert conflict.headers["content-type"] == "application/problem+json"
        assert conflict.json()["errors"][0]["field"] == field and field in conflict.json()["detail"]
    both = client.post("/v1/sessions", json=_multi(identity="agent-other", events=events[:2])).json()
    assert "identity, events" in both["detail"] and both["errors"][0]["field"] == "identity"  # the first named

    batch = client.post("/v1/sessions/batch", json=[_multi(run_id="brand-new"), cases["events"]])
    assert batch.status_code == 409 and batch.json()["errors"][0]["field"] == "sessions[1].events"
    assert client.get("/v1/runs/brand-new").status_code == 404  # all or nothing
    identical = client.post("/v1/sessions/batch", json=[_multi(run_id="brand-new"), _multi()])
    assert identical.status_code == 201 and [r["created"] for r in identical.json()["results"]] == [True, False]
    run = client.get("/v1/runs/run-multi-003").json()
    assert run["identity"] == "agent-atlas" and run["event_count"] == len(events)


def test_an_open_run_is_not_taken_over(client: httpx.Client) -> None:
    """Broken on purpose: `open_run`'s identity check inverted, or `ingest_sessions` not looking at the
    states of the runs it is sent (services/receivers/whole.py) → this test fails."""
    opened = client.post("/v1/runs", json={"run_id": "held-open", "identity": "agent-atlas"})
    assert opened.status_code == 201
    again = client.post("/v1/runs", json={"run_id": "held-open", "identity": "agent-atlas"})
    assert again.status_code == 201 and again.json() == opened.json()  # the same run, unchanged
    other = client.post("/v1/runs", json={"run_id": "held-open", "identity": "agent-other"})
    assert other.status_code == 409 and "another identity" in other.json()["detail"]
    whole = client.post("/v1/sessions", json=_multi(run_id="held-open"))
    assert whole.status_code == 409 and "is open" in whole.json()["detail"]
    assert client.get("/v1/runs/held-open").json()["status"] == "open"


def test_a_streamed_run_posted_whole_again_is_compared_too(client: httpx.Client) -> None:
    events = _multi()["events"]
    assert (
        client.post("/v1/runs", json={"run_id": "streamed-then-posted", "identity": "agent-atlas"}).status_code == 201
    )
    assert client.post("/v1/runs/streamed-then-posted/events", json=events).status_code == 200
    assert client.post("/v1/runs/streamed-then-posted/finalize").status_code == 200
    body = {"run_id": "streamed-then-posted", "identity": "agent-atlas", "events": events}
    assert client.post("/v1/sessions", json=body).status_code == 200
    assert client.post("/v1/sessions", json={**body, "events": events[:-1]}).status_code == 409


def test_a_run_stored_before_content_hashes_is_compared_by_its_record(embedded_store, tenant: str) -> None:
    from datetime import UTC, datetime

    from service.model import RunHeader, RunMaterial
    from service.services.receivers.whole import ingest_sessions

    now = datetime.now(UTC)
    spec = RunHeader(identity="agent-old", run_id="before-0008")
    [stored] = ingest_sessions(
        embedded_store, tenant, [RunMaterial.from_events(spec, [{"event": "decision"}])], now, 0.8
    )
    writer.runs(embedded_store, [stored.record.with_version(stored.record.version + 1, content_hash="")])
    other_events = RunMaterial.from_events(spec, [{"event": "decision"}, {"event": "decision"}])
    [again] = ingest_sessions(embedded_store, tenant, [other_events], now, 0.8)
    assert again.created is False and again.record.content_hash == ""


def _posted_as(client, fixture: str, identity: str, runs: int) -> None:
    session = orjson.loads((FIXTURES / fixture).read_bytes())
    batch = [{**session, "identity": identity, "run_id": f"{identity}-{n}"} for n in range(runs)]
    assert client.post("/v1/sessions/batch", content=orjson.dumps(batch)).status_code == 201


def test_reputation_tells_an_unsafe_agent_from_a_ready_one(client) -> None:
    """SPEC §7 of 2026-11-23: run_trust is centred on the ready threshold, so an agent whose every run is
    unsafe (trust 90 here, but a critical loop) ends near 0 and one whose every run is ready at 100 at 100."""
    _posted_as(client, "session_loop.json", "agent-always-unsafe", 5)
    _posted_as(client, "session_clean.json", "agent-always-ready", 5)
    unsafe = client.get("/v1/identities/agent-always-unsafe/reputation", params={"as_of": "2026-11-20"}).json()
    ready = client.get("/v1/identities/agent-always-ready/reputation", params={"as_of": "2026-11-20"}).json()
    assert unsafe["overall"] < 10 and unsafe["categories"]["task_quality"] == 0
    assert ready["overall"] == 100
