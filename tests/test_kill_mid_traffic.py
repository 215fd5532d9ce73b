"""SIGKILL in the middle of concurrent traffic on every write route (SPEC §13: "killing the process
mid-ingest loses nothing acknowledged"). Clients send batches, single runs, streamed runs (open, appends,
finalize), signals, OTLP log sessions and traces at the same time; the server is killed while they do,
restarted on the same data directory, and then every acknowledged item is there exactly once, and every
identity's reputation is what the brute-force oracle computes from the events the store holds."""

import signal as signals
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from service.testing.live import free_port, start_server_process, wait_until
from tests.reputation_oracle import reputation
from tests.write_bodies import JSON, PROTOBUF, log_records, session, trace
from tests.write_bodies import signal as a_signal

AS_OF = date(2026, 11, 1)
IDENTITIES = [f"agent-{n}" for n in range(4)]
ENOUGH = 5  # acknowledged items of every kind before the kill
EVENTS_PER_LOG_REQUEST = 4  # 3 records: a user_prompt (1 event), a tool_result (2), an api_request (1)
TOOL_SPANS = 2  # a trace: the agent's root span and two tool calls


@dataclass
class Ledger:
    """What the clients sent and what the server acknowledged (2xx received), per kind."""

    whole: dict[str, dict] = field(default_factory=dict)  # run id → the run, stored and finalized
    unanswered: dict[str, dict] = field(default_factory=dict)  # whole runs sent, their answer not received
    hashes: dict[str, str] = field(default_factory=dict)  # run id → diagnosis hash answered
    streamed: dict[str, dict] = field(default_factory=dict)  # run id → the run, once its open is answered
    appended: dict[str, int] = field(default_factory=dict)  # run id → events acknowledged
    sent_appends: dict[str, int] = field(default_factory=dict)  # run id → events sent, answered or not
    finalized: set[str] = field(default_factory=set)
    signals: list[dict] = field(default_factory=list)
    unanswered_signals: list[dict] = field(default_factory=list)
    log_events: dict[str, int] = field(default_factory=dict)  # session id → mapped events acknowledged
    sent_log_events: dict[str, int] = field(default_factory=dict)
    traces: dict[str, str] = field(default_factory=dict)  # trace id → its agent

    def counts(self) -> dict[str, int]:
        return {
            "whole runs": len(self.whole), "streamed runs": len(self.finalized), "signals": len(self.signals),
            "log sessions": len(self.log_events), "traces": len(self.traces),
        }  # fmt: skip

    def sending(self, runs: list[dict]) -> None:
        self.unanswered.update((run["run_id"], run) for run in runs)

    def stored(self, run: dict, diagnosis_hash: str) -> None:
        del self.unanswered[run["run_id"]]
        self.whole[run["run_id"]], self.hashes[run["run_id"]] = run, diagnosis_hash


def _batches(client: httpx.Client, ledger: Ledger, worker: int) -> Iterator[None]:
    for n in range(10_000):
        runs = [session(f"batch-{worker}-{n}-{k}", IDENTITIES[(n + k) % 4], seed=n * 10 + k) for k in range(5)]
        ledger.sending(runs)
        answer = client.post("/v1/sessions/batch", content=orjson.dumps(runs))
        assert answer.status_code == 201, answer.text
        for run, verdict in zip(runs, answer.json()["results"], strict=True):
            ledger.stored(run, verdict["diagnosis_hash"])
        yield


def _singles(client: httpx.Client, ledger: Ledger, worker: int) -> Iterator[None]:
    for n in range(10_000):
        run = session(f"single-{worker}-{n}", IDENTITIES[n % 4], seed=100_000 + n)
        ledger.sending([run])
        answer = client.post("/v1/sessions", content=orjson.dumps(run))
        assert answer.status_code == 201, answer.text
        ledger.stored(run, answer.json()["diagnosis_hash"])
        yield


def _streams(client: httpx.Client, ledger: Ledger, worker: int) -> Iterator[None]:
    for n in range(10_000):
        run = session(f"stream-{worker}-{n}", IDENTITIES[n % 4], seed=200_000 + n, events=20)
        run_id, events = run["run_id"], run["events"]
        opened = client.post("/v1/runs", json={"run_id": run_id, "identity": run["identity"]})
        assert opened.status_code == 201, opened.text
        ledger.streamed[run_id], ledger.appended[run_id] = run, 0
        for chunk in (events[:8], events[8:]):
            ledger.sent_appends[run_id] = ledger.appended[run_id] + len(chunk)
            appended = client.post(f"/v1/runs/{run_id}/events", json=chunk)
            assert appended.status_code == 200, appended.text
            ledger.appended[run_id] = appended.json()["event_count"]
            yield
        assert client.post(f"/v1/runs/{run_id}/finalize").status_code == 200
        ledger.finalized.add(run_id)
        yield


def _signals(client: httpx.Client, ledger: Ledger, worker: int) -> Iterator[None]:
    for n in range(10_000):
        sent = [a_signal(f"signal-{worker}-{n}-{k}", IDENTITIES[k], (-1) ** k * 0.5) for k in range(4)]
        ledger.unanswered_signals = sent
        answer = client.post("/v1/reputation-events", json=sent)
        assert answer.status_code == 202 and answer.json()["accepted"] == 4, answer.text
        ledger.signals.extend(sent)
        ledger.unanswered_signals = []
        yield


def _logs(client: httpx.Client, ledger: Ledger, worker: int) -> Iterator[None]:
    for n in range(10_000):
        session_id = f"logs-{worker}-{n}"
        for part in range(2):
            ledger.sent_log_events[session_id] = (part + 1) * EVENTS_PER_LOG_REQUEST
            body = log_records(session_id, IDENTITIES[n % 4], records=3, first=3 * part)
            answer = client.post("/v1/logs", content=body, headers=JSON)
            assert answer.status_code == 200 and answer.json() == {}, answer.text
            ledger.log_events[session_id] = (part + 1) * EVENTS_PER_LOG_REQUEST
            yield


def _traces(client: httpx.Client, ledger: Ledger, worker: int) -> Iterator[None]:
    for n in range(10_000):
        trace_id, agent = uuid.uuid4().hex, IDENTITIES[n % 4]
        answer = client.post("/v1/traces", content=trace(trace_id, agent, spans=1 + TOOL_SPANS), headers=PROTOBUF)
        assert answer.status_code == 200, answer.text
        ledger.traces[trace_id] = agent
        yield


SENDERS: list[Callable[[httpx.Client, Ledger, int], Iterator[None]]] = [
    _batches, _singles, _singles, _streams, _streams, _signals, _logs, _traces,
]  # fmt: skip


def _send_until_killed(base: str, key: str, ledger: Ledger, failures: list[BaseException]) -> list[threading.Thread]:
    """One client thread per sender, each sending until the server is gone; an unexpected answer is a failure."""

    def run(sender: Callable[[httpx.Client, Ledger, int], Iterator[None]], worker: int) -> None:
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
            try:
                for _ in sender(client, ledger, worker):
                    pass
            except httpx.TransportError:
                return  # the server was killed under this request: unanswered, so unacknowledged
            except BaseException as exc:
                failures.append(exc)

    threads = [threading.Thread(target=run, args=(sender, w)) for w, sender in enumerate(SENDERS)]
    for thread in threads:
        thread.start()
    return threads


DUMP = """
import sys, orjson
from service.settings import Settings
from service.store.client import Store
store = Store(Settings(data_dir=sys.argv[1]))
result = store.client.query(
    "SELECT identity, toString(event_id) AS event_id, timestamp, category, event_type, score_delta, confidence,"
    " weight, reference_id, source, capped, sign, attributes['client_event_id'] AS client_event_id"
    " FROM reputation_events WHERE tenant = 'default'"
)
sys.stdout.buffer.write(orjson.dumps(list(result.named_results())))
store.close()
"""


def _stored_reputation_events(data_dir: Path) -> list[dict[str, Any]]:
    """reputation_events as stored (a plain MergeTree: no merge collapses its rows), read by a process of
    its own once the server has stopped (the embedded store allows one process)."""
    dumped = subprocess.run([sys.executable, "-c", DUMP, str(data_dir)], capture_output=True, check=True).stdout
    return [{**row, "timestamp": datetime.fromisoformat(row["timestamp"])} for row in orjson.loads(dumped)]


@dataclass
class Restarted:
    """The server restarted on the data directory of the one killed mid-traffic, and what was acknowledged."""

    client: httpx.Client
    ledger: Ledger
    data_dir: Path
    server: subprocess.Popen

    def stop(self) -> None:
        self.client.close()
        if self.server.poll() is None:
            self.server.send_signal(signals.SIGTERM)
            self.server.wait(timeout=60)


@pytest.fixture
def restarted(tmp_path: Path) -> Iterator[Restarted]:
    data_dir, port = tmp_path / "killed", free_port()
    settings = {"trace_settle_seconds": "3600"}  # the traces are finalized by the test only
    server = start_server_process(data_dir, port, **settings)
    key = (data_dir / "admin.key").read_text().strip()
    base, ledger, failures = f"http://127.0.0.1:{port}", Ledger(), []
    threads = _send_until_killed(base, key, ledger, failures)
    enough = wait_until(lambda: min(ledger.counts().values()) >= ENOUGH, attempts=1200)
    server.send_signal(signals.SIGKILL)
    server.wait()
    for thread in threads:
        thread.join(timeout=120)
    assert enough and not failures, (ledger.counts(), failures)

    server = start_server_process(data_dir, port, **settings)
    client = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60)
    state = Restarted(client, ledger, data_dir, server)
    try:
        yield state
    finally:
        state.stop()


def _events_of(client: httpx.Client, run_id: str) -> list[dict]:
    page = client.get(f"/v1/runs/{run_id}/events", params={"limit": 1000}).json()
    assert page["next_cursor"] is None and len(page["events"]) == page["total"], run_id
    return page["events"]


def _listed_runs(client: httpx.Client) -> list[str]:
    listed, cursor = [], None
    while True:
        page = client.get("/v1/runs", params={"limit": 1000, **({"cursor": cursor} if cursor else {})}).json()
        listed += [run["run_id"] for run in page["runs"]]
        if (cursor := page["next_cursor"]) is None:
            return listed


def _check_whole_runs(client: httpx.Client, ledger: Ledger) -> None:
    for run_id, run in ledger.whole.items():
        stored = client.get(f"/v1/runs/{run_id}").json()
        assert (stored["status"], stored["event_count"]) == ("finalized", len(run["events"])), run_id
        assert stored["diagnosis"]["diagnosis_hash"] == ledger.hashes[run_id], run_id
        assert len(_events_of(client, run_id)) == len(run["events"]), run_id


def _resume_streams(client: httpx.Client, ledger: Ledger) -> None:
    """Each streamed run holds its acknowledged events once (and at most the unanswered chunk beside them);
    then the client resumes it: the rest of its events, and its finalize."""
    for run_id, run in ledger.streamed.items():
        held = _events_of(client, run_id)
        assert ledger.appended[run_id] <= len(held) <= ledger.sent_appends.get(run_id, 0), run_id
        assert [e["type"] for e in held] == [e["event"] for e in run["events"][: len(held)]], run_id
        status = client.get(f"/v1/runs/{run_id}").json()["status"]
        assert status == "finalized" or run_id not in ledger.finalized, run_id
        if status == "open":
            rest = run["events"][len(held) :]
            if rest:
                assert client.post(f"/v1/runs/{run_id}/events", json=rest).status_code == 200
            assert client.post(f"/v1/runs/{run_id}/finalize").status_code == 200
        assert client.get(f"/v1/runs/{run_id}").json()["event_count"] == len(run["events"]), run_id


def _finalize_otlp_runs(client: httpx.Client, ledger: Ledger) -> None:
    for session_id, acknowledged in ledger.log_events.items():
        finalized = client.post(f"/v1/runs/{session_id}/finalize").json()
        assert acknowledged <= finalized["event_count"] <= ledger.sent_log_events[session_id], session_id
    for trace_id, agent in ledger.traces.items():
        finalized = client.post(f"/v1/runs/{trace_id}/finalize").json()
        assert (finalized["identity"], finalized["tool_calls"]) == (agent, TOOL_SPANS), trace_id


def _retry_unanswered(client: httpx.Client, ledger: Ledger) -> None:
    """What a client does with the requests the kill left unanswered: it sends them again. A whole run's
    finalize cut short may have stored its reputation events but not the run (whose row is written
    last): the retry stores the run and finds its events stored."""
    if ledger.unanswered:
        retried = client.post("/v1/sessions/batch", content=orjson.dumps(list(ledger.unanswered.values())))
        assert retried.status_code == 201, retried.text
    signals = client.post("/v1/reputation-events", json=ledger.unanswered_signals).json()
    assert signals["accepted"] + signals["duplicates"] == len(ledger.unanswered_signals)


def _check_exactly_once(events: list[dict[str, Any]], ledger: Ledger, finalized_runs: set[str]) -> None:
    """No (identity, event id) stored twice; each acknowledged signal stored, each finalized run's run_trust once."""
    keys = [(e["identity"], e["event_id"]) for e in events]
    assert len(keys) == len(set(keys))
    stored_ids = {e["client_event_id"] for e in events}  # a signal's stored id is its own (SPEC §7.1 "Ids")
    assert {s["event_id"] for s in ledger.signals} <= stored_ids
    trusted = [e["reference_id"] for e in events if e["event_type"] == "run_trust"]
    assert sorted(trusted) == sorted(finalized_runs)


def test_a_kill_mid_traffic_on_every_write_route_loses_nothing_acknowledged(restarted: Restarted) -> None:
    client, ledger = restarted.client, restarted.ledger
    _check_whole_runs(client, ledger)
    _resume_streams(client, ledger)
    _finalize_otlp_runs(client, ledger)
    _retry_unanswered(client, ledger)
    resent = client.post("/v1/reputation-events", json=ledger.signals).json()
    assert (resent["accepted"], resent["duplicates"]) == (0, len(ledger.signals))  # every one is stored

    listed = client.get("/v1/runs", params={"limit": 1000, "status": "finalized"}).json()
    finalized = [run["run_id"] for run in listed["runs"]]
    assert listed["next_cursor"] is None and len(finalized) == len(set(finalized))
    assert {*ledger.whole, *ledger.streamed, *ledger.log_events, *ledger.traces} <= set(finalized)
    answered = {
        identity: client.get(f"/v1/identities/{identity}/reputation", params={"as_of": str(AS_OF)}).json()
        for identity in IDENTITIES
    }
    restarted.stop()

    events = _stored_reputation_events(restarted.data_dir)
    _check_exactly_once(events, ledger, set(finalized))
    for identity, answer in answered.items():
        expected = reputation(events, identity, AS_OF)
        actual = {**answer, **answer["categories"]}
        for name, value in expected.items():
            if isinstance(value, float):
                assert actual[name] == pytest.approx(value, abs=1e-6), (identity, name)
            else:
                assert actual[name] == value, (identity, name)
