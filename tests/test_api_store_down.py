"""The store taken away (SPEC §9: "If ClickHouse is unreachable: 503 with Retry-After, nothing
acknowledged that was not stored"): every route kind answers 503 with Retry-After (problem+json, or a
google.rpc.Status UNAVAILABLE on the OTLP receivers), /readyz says not ready while /healthz stays up,
and the same app serves again once the store is back, without a restart.

Two real ways the store goes away: a ClickHouse server URL where nothing listens, and an embedded store
that another process owns (a worker app that opens its store on first need, beside a `repute serve`
holding the lock; stopping that server gives the store back)."""

import signal
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import orjson
import pytest
from google.rpc import status_pb2

from service.api.app import create_app
from service.settings import Settings
from service.testing.live import free_port, serve_in_thread, start_app_process, start_server_process, wait_until
from tests.write_bodies import JSON, PROTOBUF, log_records, log_records_protobuf, session, trace
from tests.write_bodies import signal as a_signal

UNAVAILABLE = 14  # google.rpc.Code
TRACE_ID = "5b8efff798038103d269b633813fc60c"


@dataclass(frozen=True)
class Call:
    """One request of a route kind, and what it answers once the store is there."""

    method: str
    path: str
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    answers: int = 200

    @property
    def otlp(self) -> bool:
        return self.path in ("/v1/logs", "/v1/traces")


WRITES = [
    Call("POST", "/v1/sessions", orjson.dumps({**session("down-1", "agent-down", 1), "suite": "nightly"}), answers=201),
    Call("POST", "/v1/sessions/batch", orjson.dumps([session("down-2", "agent-down", 2)]), answers=201),
    Call("POST", "/v1/runs", orjson.dumps({"run_id": "down-3", "identity": "agent-down"}), answers=201),
    Call("POST", "/v1/runs/down-3/events", orjson.dumps(session("down-3", "agent-down", 3)["events"])),
    Call("POST", "/v1/runs/down-3/finalize"),
    Call("POST", "/v1/reputation-events", orjson.dumps([a_signal("down-signal", "agent-down")]), answers=202),
    Call("POST", "/v1/logs", log_records("down-4", "agent-down"), JSON),
    Call("POST", "/v1/logs", log_records_protobuf("down-5", "agent-down"), PROTOBUF),
    Call("POST", "/v1/traces", trace(TRACE_ID, "agent-down"), PROTOBUF),
    Call("POST", "/v1/keys", orjson.dumps({"tenant": "default", "scopes": ["read"]}), answers=201),
]
READS = [
    Call("GET", "/v1/runs"),
    Call("GET", "/v1/runs/down-1"),
    Call("GET", "/v1/identities"),
    Call("GET", "/v1/identities/agent-down/reputation"),
    Call("GET", "/v1/suites/nightly/summary"),
    Call("GET", "/v1/status"),
    Call("GET", "/v1/keys"),
]


def send(client: httpx.Client, call: Call) -> httpx.Response:
    return client.request(call.method, call.path, content=call.body, headers=call.headers)


def assert_unavailable(response: httpx.Response, call: Call) -> None:
    where = f"{call.method} {call.path}"
    assert response.status_code == 503, (where, response.status_code, response.text)
    assert int(response.headers["retry-after"]) > 0, where
    if not call.otlp:
        assert response.headers["content-type"] == "application/problem+json", where
        problem = response.json()
        assert problem["status"] == 503 and "store is unavailable" in problem["detail"], where
        return
    # OTLP/HTTP: a google.rpc.Status in the request's encoding, which exporters read and retry on.
    if call.headers["content-type"] == PROTOBUF["content-type"]:
        assert response.headers["content-type"] == PROTOBUF["content-type"], where
        status = status_pb2.Status.FromString(response.content)
        assert (status.code, "store is unavailable" in status.message) == (UNAVAILABLE, True), where
    else:
        assert response.headers["content-type"] == JSON["content-type"], where
        body = response.json()
        assert (body["code"], "store is unavailable" in body["message"]) == (UNAVAILABLE, True), where


def assert_down(client: httpx.Client) -> None:
    for call in WRITES + READS:
        assert_unavailable(send(client, call), call)
    ready = client.get("/readyz")
    assert ready.status_code == 503 and ready.json()["status"] == "unavailable", ready.text
    assert client.get("/healthz").json() == {"status": "ok"}


@pytest.fixture
def unreachable_server(tmp_path: Path) -> Iterator[str]:
    """An app whose ClickHouse server URL has nothing listening (a server that is down)."""
    settings = Settings(data_dir=tmp_path, clickhouse_url=f"http://127.0.0.1:{free_port()}/repute")
    with serve_in_thread(create_app(settings)) as url:
        yield url


def test_a_clickhouse_server_that_is_down_gets_503_with_retry_after_on_every_route(unreachable_server: str) -> None:
    """Broken on purpose: the store-down handler answering 500 without Retry-After
    (service/api/errors.py `_store_down`) → this test fails on its first route."""
    with httpx.Client(base_url=unreachable_server, headers={"Authorization": "Bearer rpt_x_y"}, timeout=60) as client:
        assert_down(client)


def test_an_embedded_store_owned_elsewhere_is_503_until_it_is_given_back(tmp_path: Path) -> None:
    """The worker app starts while `repute serve` owns the store: every route answers 503 and nothing is
    stored; once the owner stops, the same worker (no restart) opens the store on the next request,
    and every write goes through.

    Broken on purpose: `_store_down` answering 500 without Retry-After → this test fails; the OTLP
    receivers answering problem+json instead of a google.rpc.Status → it fails on /v1/logs."""
    data_dir, owner_port, worker_port = tmp_path / "owned", free_port(), free_port()
    owner = start_server_process(data_dir, owner_port)
    worker = start_app_process(data_dir, worker_port)
    key = (data_dir / "admin.key").read_text().strip()
    try:
        with httpx.Client(
            base_url=f"http://127.0.0.1:{worker_port}", headers={"Authorization": f"Bearer {key}"}, timeout=60
        ) as client:
            assert_down(client)
            owner.send_signal(signal.SIGTERM)
            owner.wait(timeout=60)
            assert wait_until(lambda: client.get("/readyz").status_code == 200, attempts=600)

            assert client.get("/v1/runs").json()["runs"] == []  # nothing sent while down was stored
            assert client.get("/v1/identities/agent-down/reputation").status_code == 404
            for call in WRITES + READS:
                response = send(client, call)
                assert response.status_code == call.answers, (call.method, call.path, response.text)
            listed = {run["run_id"]: run["status"] for run in client.get("/v1/runs").json()["runs"]}
            assert listed == {  # a trace-born run is listed open while its agent runs (SPEC §3.4)
                "down-1": "finalized", "down-2": "finalized", "down-3": "finalized", "down-4": "open",
                "down-5": "open", TRACE_ID: "open",
            }  # fmt: skip
            assert client.post(f"/v1/runs/{TRACE_ID}/finalize").status_code == 200  # its spans were stored
    finally:
        for process in (owner, worker):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=60)
