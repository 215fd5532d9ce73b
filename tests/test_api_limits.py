"""The caps on one request's work, through a live server whose settings make them small: each answers
413 naming the limit and its setting, and a refused request writes nothing."""

from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from service.api.app import create_app
from service.settings import Settings
from service.store.client import Store
from service.testing.live import serve_in_thread

T0 = 1_763_700_000_000_000_000  # 2025-11-21T04:40:00Z in unix nanoseconds
CAPS = {"max_events_per_run": 100, "max_runs_per_batch": 10, "max_events_per_request": 150}


@pytest.fixture(scope="module")
def limited_url(embedded_store: Store, data_dir: Path) -> Iterator[str]:
    with serve_in_thread(create_app(Settings(data_dir=data_dir, **CAPS), store=embedded_store)) as url:
        yield url


@pytest.fixture
def limited(limited_url: str, client: httpx.Client) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=limited_url, headers=client.headers, timeout=120) as capped:
        yield capped


def _events(count: int) -> list[dict]:
    return [{"event": "decision", "n": n} for n in range(count)]


def _run(run_id: str, events: int) -> dict:
    return {"run_id": run_id, "identity": "agent", "events": _events(events)}


def _refused(response: httpx.Response, setting: str) -> None:
    assert response.status_code == 413, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert f"the limit is the setting {setting}" in response.json()["detail"]


def _stored_runs(client: httpx.Client) -> list[str]:
    return [run["run_id"] for run in client.get("/v1/runs").json()["runs"]]


def test_a_batch_holds_a_bounded_number_of_runs_and_events(limited: httpx.Client) -> None:
    too_many_runs = [_run(f"r-{i}", 0) for i in range(11)]
    _refused(limited.post("/v1/sessions/batch", json=too_many_runs), "REPUTE_MAX_RUNS_PER_BATCH")
    too_many_events = [_run(f"r-{i}", 80) for i in range(2)]
    _refused(limited.post("/v1/sessions/batch", json=too_many_events), "REPUTE_MAX_EVENTS_PER_REQUEST")
    assert _stored_runs(limited) == []

    within = limited.post("/v1/sessions/batch", json=[_run(f"r-{i}", 15) for i in range(10)])
    assert within.status_code == 201, within.text
    assert len(_stored_runs(limited)) == 10


def test_a_run_holds_a_bounded_number_of_events_however_it_arrives(limited: httpx.Client) -> None:
    _refused(limited.post("/v1/sessions", json=_run("whole", 101)), "REPUTE_MAX_EVENTS_PER_RUN")
    assert limited.post("/v1/runs", json={"run_id": "streamed", "identity": "agent"}).status_code == 201
    assert limited.post("/v1/runs/streamed/events", json=_events(60)).status_code == 200
    _refused(limited.post("/v1/runs/streamed/events", json=_events(41)), "REPUTE_MAX_EVENTS_PER_RUN")
    assert limited.post("/v1/runs/streamed/finalize").json()["event_count"] == 60


def _tool_results(session_id: str, count: int, first: int = 0) -> bytes:
    attributes = [{"key": "session.id", "value": {"stringValue": session_id}},
                  {"key": "tool_name", "value": {"stringValue": "Read"}}]  # fmt: skip
    records = [
        {"timeUnixNano": str(T0 + n), "eventName": "claude_code.tool_result", "attributes": attributes}
        for n in range(first, first + count)
    ]
    return orjson.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]})


def _post_logs(client: httpx.Client, body: bytes) -> httpx.Response:
    return client.post("/v1/logs", content=body, headers={"content-type": "application/json"})


def test_an_otlp_session_holds_the_events_of_a_run(limited: httpx.Client) -> None:
    """Each tool result maps to two run events (tool_call, tool_output): 40 + 40 results would be 160."""
    assert _post_logs(limited, _tool_results("s-1", 40)).json() == {}
    second = _post_logs(limited, _tool_results("s-1", 40, first=40)).json()["partialSuccess"]
    assert second["rejectedLogRecords"] == "40"
    assert "would hold 160 run events, over the 100 of a run (REPUTE_MAX_EVENTS_PER_RUN)" in second["errorMessage"]
    assert _post_logs(limited, _tool_results("s-1", 10, first=80)).json() == {}
    assert limited.post("/v1/runs/s-1/finalize").json()["event_count"] == 100


def test_one_request_holds_a_bounded_number_of_events_on_every_route(
    embedded_store: Store, data_dir: Path, client: httpx.Client
) -> None:
    settings = Settings(data_dir=data_dir, max_events_per_run=100, max_events_per_request=50)
    with serve_in_thread(create_app(settings, store=embedded_store)) as url:
        capped = httpx.Client(base_url=url, headers=client.headers, timeout=120)
        assert capped.post("/v1/runs", json={"run_id": "r", "identity": "agent"}).status_code == 201
        _refused(capped.post("/v1/runs/r/events", json=_events(51)), "REPUTE_MAX_EVENTS_PER_REQUEST")
        _refused(capped.post("/v1/sessions", json=_run("whole", 51)), "REPUTE_MAX_EVENTS_PER_REQUEST")
        too_many = _post_logs(capped, _tool_results("s-2", 51))
    assert too_many.status_code == 413 and too_many.headers["content-type"] == "application/json"
    assert too_many.json()["code"] == 8 and "REPUTE_MAX_EVENTS_PER_REQUEST" in too_many.json()["message"]
    assert client.get("/v1/runs/r/events").json()["events"] == []
    assert client.get("/v1/runs/whole").status_code == 404 and client.get("/v1/runs/s-2").status_code == 404
