"""Concurrency, crash recovery and bad input through real HTTP."""

import os
import random
import signal
import threading
import time
from collections import defaultdict
from pathlib import Path

import httpx
import orjson
import pytest

from service.diagnosis import diagnose
from service.reputation.emit import run_trust_delta
from service.testing.factory import make_session
from service.testing.live import free_port, start_server_process

AS_OF = "2026-11-01"


def _expected_overall(verdicts: list[tuple[str, int]]) -> float:
    # SPEC §7 (changed 2026-11-23): run_trust's delta follows the readiness, centred on trust 80; it
    # was (trust - 50) / 50. Every generated run has events, so each one emits a run_trust.
    mean = sum(run_trust_delta(readiness, trust) for readiness, trust in verdicts) / len(verdicts)
    return 50 * (1 + mean)


def _sessions(count: int, seed: int, identities: int = 10) -> list[dict]:
    rng = random.Random(seed)
    return [make_session(rng, f"run-{i:04d}", f"agent-{i % identities}", rng.randint(5, 50)) for i in range(count)]


def _finalize_streamed(client: httpx.Client, session: dict) -> httpx.Response:
    opened = client.post("/v1/runs", json={"run_id": session["run_id"], "identity": session["identity"]})
    assert opened.status_code in (200, 201), opened.text
    if opened.json()["status"] == "open":
        half = len(session["events"]) // 2
        for chunk in (session["events"][:half], session["events"][half:]):
            appended = client.post(f"/v1/runs/{session['run_id']}/events", json=chunk)
            assert appended.status_code == 200, appended.text
    return client.post(f"/v1/runs/{session['run_id']}/finalize")


def test_eight_concurrent_clients_store_every_run_once(make_client, tenant: str) -> None:
    sessions = _sessions(500, seed=11)
    clients = [make_client(tenant) for _ in range(8)]
    failures: list[str] = []

    def work(worker: int) -> None:
        client = clients[worker]
        for i, session in enumerate(sessions):
            # Every run is sent by its owner; one-shot runs ending in 1 also by a second client at the
            # same time (appends are not idempotent, so streamed runs are never sent twice).
            if i % 8 != worker and not (i % 10 == 1 and (i + 1) % 8 == worker):
                continue
            if i % 2:
                response = client.post("/v1/sessions", content=orjson.dumps(session))
            else:
                response = _finalize_streamed(client, session)
                again = client.post(f"/v1/runs/{session['run_id']}/finalize")
                if again.json() != response.json():
                    failures.append(f"{session['run_id']}: a second finalize answered differently")
            if response.status_code not in (200, 201):  # a repost of the same run is never a conflict
                failures.append(f"{session['run_id']}: {response.status_code} {response.text[:200]}")

    threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[:5]

    reader = clients[0]
    seen: dict[str, dict] = {}
    cursor = None
    while True:
        page = reader.get("/v1/runs", params={"limit": 200, **({"cursor": cursor} if cursor else {})}).json()
        for run in page["runs"]:
            assert run["run_id"] not in seen, f"{run['run_id']} listed twice"
            seen[run["run_id"]] = run
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == 500 and all(r["status"] == "finalized" for r in seen.values())

    verdicts: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for session in sessions:
        diagnosis = diagnose(session["events"])
        assert seen[session["run_id"]]["trust_score"] == diagnosis.trust_score
        verdicts[session["identity"]].append((diagnosis.readiness_level, diagnosis.trust_score))
    for identity, values in verdicts.items():
        reputation = reader.get(f"/v1/identities/{identity}/reputation", params={"as_of": AS_OF}).json()
        assert reputation["events"] == len(values)
        assert abs(reputation["overall"] - _expected_overall(values)) <= 1e-9


def test_sigkill_mid_stream_loses_nothing_acknowledged(tmp_path: Path) -> None:
    data_dir, port = tmp_path / "killed", free_port()
    server = start_server_process(data_dir, port)
    key = (data_dir / "admin.key").read_text().strip()
    assert os.stat(data_dir / "admin.key").st_mode & 0o777 == 0o600
    sessions = _sessions(300, seed=21)
    acknowledged: list[str] = []
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {key}"}

    def stream() -> None:
        with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
            for session in sessions:
                try:
                    response = client.post("/v1/sessions", content=orjson.dumps(session))
                except httpx.HTTPError:
                    return
                if response.status_code in (200, 201):
                    acknowledged.append(session["run_id"])

    sender = threading.Thread(target=stream)
    sender.start()
    while len(acknowledged) < 40 and sender.is_alive():
        time.sleep(0.01)
    server.send_signal(signal.SIGKILL)
    server.wait()
    sender.join()
    assert 40 <= len(acknowledged) < len(sessions)

    server = start_server_process(data_dir, port)
    try:
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            diagnoses = {s["run_id"]: diagnose(s["events"]) for s in sessions}
            expected = {run_id: diagnosis.trust_score for run_id, diagnosis in diagnoses.items()}
            for run_id in acknowledged:
                run = client.get(f"/v1/runs/{run_id}")
                assert run.status_code == 200, run_id
                assert run.json()["trust_score"] == expected[run_id]
            for session in sessions:
                retried = client.post("/v1/sessions", content=orjson.dumps(session))
                assert retried.status_code in (200, 201), retried.text
                assert (
                    retried.json()["created"] is (session["run_id"] not in acknowledged)
                    or not retried.json()["created"]
                )
            listed = client.get("/v1/runs", params={"limit": 1000}).json()["runs"]
            assert sorted(r["run_id"] for r in listed) == sorted(expected)
            per_identity: dict[str, list[tuple[str, int]]] = defaultdict(list)
            for session in sessions:
                diagnosis = diagnoses[session["run_id"]]
                per_identity[session["identity"]].append((diagnosis.readiness_level, diagnosis.trust_score))
            for identity, verdicts in per_identity.items():
                reputation = client.get(f"/v1/identities/{identity}/reputation", params={"as_of": AS_OF}).json()
                assert reputation["events"] == len(verdicts), identity
                assert abs(reputation["overall"] - _expected_overall(verdicts)) <= 1e-9
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


BAD_BODIES = [
    (b"", 400), (b"not json", 400), (b"42", 400), (b'"text"', 400), (b"[1, 2]", 422),
    (b'{"identity": "a", "events": [{"event": "x", "v": NaN}]}', 400),
    (b'{"identity": "a", "events": {"no": "list"}}', 422),
    (b'{"identity": "bad identity!", "events": []}', 422),
    (b'{"identity": "a", "events": [{"event": "x", "timestamp": "yesterday"}]}', 422),
    (b'{"identity": "a", "events": [{"event": "x", "timestamp": 1e30}]}', 422),
    (b"[" * 500 + b"]" * 500, 400),
]  # fmt: skip


@pytest.mark.parametrize(("body", "status"), BAD_BODIES)
def test_bad_sessions_get_a_clear_4xx_and_write_nothing(client: httpx.Client, body: bytes, status: int) -> None:
    response = client.post("/v1/sessions", content=body)
    assert 400 <= response.status_code < 500, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["status"] == response.status_code and problem["detail"]
    assert client.get("/v1/runs").json()["runs"] == []


def test_batch_with_one_bad_run_writes_nothing(client: httpx.Client) -> None:
    good = make_session(random.Random(1), "good-run", "agent-a", 10)
    bad = {**make_session(random.Random(2), "bad-run", "agent-a", 10), "identity": "no spaces allowed"}
    response = client.post("/v1/sessions/batch", content=orjson.dumps([good, bad]))
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "sessions[1].identity"
    assert client.get("/v1/runs").json()["runs"] == []
    assert client.post("/v1/sessions/batch", content=orjson.dumps([good])).status_code == 201


def test_oversized_body_is_413(client: httpx.Client, base_url: str) -> None:
    response = client.post("/v1/sessions", content=b" " * (16 * 1024 * 1024 + 1))
    assert response.status_code == 413
    assert response.headers["content-type"] == "application/problem+json"


def test_signals_are_validated_and_deduplicated(client: httpx.Client) -> None:
    signals = [
        {"identity": "agent-pay", "category": "economic", "event_type": "payment_completed", "score_delta": 1,
         "timestamp": "2026-10-30T10:00:00Z", "reference_id": "tx-1"},
        {"identity": "agent-pay", "category": "identity_hygiene", "event_type": "credential_leaked",
         "score_delta": -1, "timestamp": "2026-10-30T11:00:00Z"},
    ]  # fmt: skip
    first = client.post("/v1/reputation-events", json=signals)
    assert first.status_code == 202 and first.json()["accepted"] == 2
    again = client.post("/v1/reputation-events", json={"events": signals})
    assert again.json() == {**first.json(), "accepted": 0, "duplicates": 2}
    reputation = client.get("/v1/identities/agent-pay/reputation", params={"as_of": AS_OF}).json()
    assert reputation["categories"] == {"task_quality": None, "economic": 100.0, "identity_hygiene": 0.0}
    assert reputation["overall"] == pytest.approx((0.35 * 100 + 0.25 * 0) / 0.6, abs=1e-9)
    bad = client.post("/v1/reputation-events", json=[{**signals[0], "score_delta": 2}])
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "events[0].score_delta"
