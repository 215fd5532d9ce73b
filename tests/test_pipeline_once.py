"""Every input converts its events once (issue #39): from the request to the stored run, each event is
normalized once (`diagnosis.events.normalize_event`) and serialized once (`model.material.serialized`),
whether it came whole, streamed in two requests, as OTLP log records or as spans. Counted through the real
API on the live server; only this test's events are counted (the server's background jobs may finalize
other tests' runs meanwhile). Broken on purpose: the stream's append normalizing its parsed events again,
or the finalize hashing the events apart from their payloads, makes a count 2."""

import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import orjson
import pytest

from service.diagnosis import events as diagnosis_events
from service.model import material
from tests.traces_support import T0, otlp_json, proto_span, request_of

JSON = {"content-type": "application/json"}


class Counts:
    """How many times each of this test's events (by its `marker`) was normalized and serialized."""

    def __init__(self, marker: Callable[[Any], str | None]) -> None:
        self.marker = marker
        self.normalized: Counter[str] = Counter()
        self.serialized: Counter[str] = Counter()


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Callable[[Any], str | None]], Counts]]:
    made: list[Counts] = []
    normalize, serialize = diagnosis_events.normalize_event, material.serialized

    def counted_normalize(data: Any, position: int) -> Any:
        for each in made:
            if (mark := each.marker(data)) is not None:
                each.normalized[mark] += 1
        return normalize(data, position)

    def counted_serialize(event: Any) -> bytes:
        for each in made:
            if (mark := each.marker(event.data)) is not None:
                each.serialized[mark] += 1
        return serialize(event)

    monkeypatch.setattr(diagnosis_events, "normalize_event", counted_normalize)
    monkeypatch.setattr(material, "serialized", counted_serialize)

    def start(marker: Callable[[Any], str | None]) -> Counts:
        made.append(Counts(marker))
        return made[-1]

    yield start


def _field(name: str, prefix: str) -> Callable[[Any], str | None]:
    """Marks the events whose `name` field starts with `prefix`."""

    def marker(data: Any) -> str | None:
        value = data.get(name) if isinstance(data, dict) else None
        return value if isinstance(value, str) and value.startswith(prefix) else None

    return marker


def _events(prefix: str, count: int) -> list[dict[str, Any]]:
    return [
        {"event": "decision", "event_id": f"{prefix}{i}", "timestamp": "2026-11-20T10:00:00Z"} for i in range(count)
    ]


def _once_each(counted: Counts, expected: int) -> None:
    assert len(counted.normalized) == expected and set(counted.normalized.values()) == {1}, counted.normalized
    assert counted.serialized == counted.normalized


def test_a_whole_run_and_a_batch(client: httpx.Client, counts: Callable[..., Counts]) -> None:
    prefix = f"whole-{uuid.uuid4().hex[:8]}-"
    counted = counts(_field("event_id", prefix))
    assert client.post("/v1/sessions", json={"identity": "once", "events": _events(prefix, 5)}).status_code == 201
    batch = [{"identity": "once", "events": _events(f"{prefix}b{n}-", 3)} for n in range(2)]
    assert client.post("/v1/sessions/batch", json=batch).status_code == 201
    _once_each(counted, 5 + 6)


def test_a_streamed_run(client: httpx.Client, counts: Callable[..., Counts]) -> None:
    prefix = f"stream-{uuid.uuid4().hex[:8]}-"
    counted = counts(_field("event_id", prefix))
    run_id = client.post("/v1/runs", json={"identity": "once"}).json()["run_id"]
    for part in ("a", "b"):
        appended = client.post(f"/v1/runs/{run_id}/events", json=_events(prefix + part, 4))
        assert appended.status_code == 200, appended.text
    assert client.post(f"/v1/runs/{run_id}/finalize").json()["event_count"] == 8
    _once_each(counted, 8)


def test_an_otlp_log_session(client: httpx.Client, counts: Callable[..., Counts]) -> None:
    session, prefix = f"s-{uuid.uuid4().hex}", f"logs-{uuid.uuid4().hex[:8]}-"
    counted = counts(_field("step", prefix))
    records = [
        {
            "timeUnixNano": str(T0 + n),
            "eventName": "decision",
            "attributes": [
                {"key": "session.id", "value": {"stringValue": session}},
                {"key": "step", "value": {"stringValue": f"{prefix}{n}"}},
            ],
        }
        for n in range(6)
    ]
    body = {"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]}
    assert client.post("/v1/logs", content=orjson.dumps(body), headers=JSON).status_code == 200
    assert client.post(f"/v1/runs/{session}/finalize").json()["event_count"] == 6
    _once_each(counted, 6)


def test_a_trace(client: httpx.Client, counts: Callable[..., Counts]) -> None:
    trace_id = uuid.uuid4().bytes
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "searcher"}  # unnamed: no event
    spans = [proto_span(1, trace_id=trace_id, attributes=agent)]
    spans += [proto_span(n, trace_id=trace_id, parent=1, start=T0 + n, attributes=tool) for n in range(2, 5)]
    span_ids = {span.span_id.hex() for span in spans}
    counted = counts(
        lambda data: f"{data.get('span_id')}:{data.get('event')}" if data.get("span_id") in span_ids else None
    )
    posted = client.post("/v1/traces", content=orjson.dumps(otlp_json(request_of(*spans))), headers=JSON)
    assert posted.status_code == 200, posted.text
    assert client.post(f"/v1/runs/{trace_id.hex()}/finalize").json()["event_count"] == 1 + 3 * 2
    _once_each(counted, 7)  # a state transition, then each tool's call and output
