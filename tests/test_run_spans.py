"""GET /v1/runs/{id}/spans (SPEC §9; issue #41's span timeline): a trace-born run's spans in run order, each
with its agent, role, times, tool call, counted usage, error and the model's messages where the trace
carries them, as stored (redacted); open or finalized; a tenant sees only its own; problem+json errors.

The recorded instrumentations (tests/data/recorded) are read by the tests' own reader
(tests/recorded_traces.py): each child run's spans are the spans the reader gives that agent."""

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson
import pytest

from service.services import spans as span_service
from service.services.receivers import otlp_traces
from service.settings import Settings
from service.store.client import Store
from service.traces import decode_traces_body
from service.traces.formats import read_document, spans_of
from service.traces.otlp_json import encode_json_traces
from tests.recorded_traces import RECORDED, RecordedTrace, read_spans
from tests.traces_support import MS, T0, otlp_json, proto_span, request_of

AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"}
CHAT = {
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": "m-1",
    "gen_ai.usage.input_tokens": 30,
    "gen_ai.usage.output_tokens": 12,
    "gen_ai.usage.cost": 0.0125,
    "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "book Lisbon"}]}]),
    "gen_ai.output.messages": json.dumps(
        [{"role": "assistant", "parts": [{"type": "tool_call", "name": "search", "arguments": {"q": "Lisbon"}}]}]
    ),
}
SEARCH = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search", "gen_ai.tool.call.id": "c-1"}


def _trace(trace_id: bytes) -> dict[str, Any]:
    """An agent (0-10 ms) that asks a model (1-3 ms, 42 tokens, $0.0125) then searches and fails (4-9 ms)."""
    return otlp_json(
        request_of(
            proto_span(1, trace_id=trace_id, name="invoke_agent planner", end=T0 + 10 * MS, attributes=AGENT),
            proto_span(2, trace_id=trace_id, parent=1, name="chat m-1", start=T0 + MS, end=T0 + 3 * MS,
                       attributes=CHAT),
            proto_span(3, trace_id=trace_id, parent=1, name="execute_tool search", start=T0 + 4 * MS, end=T0 + 9 * MS,
                       attributes=SEARCH, error=True, message="search timed out"),
        )
    )  # fmt: skip


def _post(client: httpx.Client, body: dict[str, Any]) -> None:
    answer = client.post("/v1/traces", json=body)
    assert answer.status_code == 200 and "rejectedSpans" not in answer.json().get("partialSuccess", {}), answer.text


def test_an_open_run_shows_its_timeline_and_a_finalized_one_the_same(client: httpx.Client) -> None:
    """Each span in run order with what the mapping made of it. Fails when a span's tool, usage, error or
    messages are left out, or when the times are read in another unit."""
    trace_id = uuid.uuid4().bytes
    _post(client, _trace(trace_id))
    run_id = trace_id.hex()
    open_page = client.get(f"/v1/runs/{run_id}/spans").json()
    spans = open_page["spans"]
    assert [span["name"] for span in spans] == ["invoke_agent planner", "chat m-1", "execute_tool search"]
    assert open_page["total"] == 3 and open_page["next_cursor"] is None
    agent, chat, search = spans
    assert [span["role"] for span in spans] == ["agent", "llm", "tool"]
    assert {span["agent"] for span in spans} == {"planner"} and {span["run_id"] for span in spans} == {run_id}
    assert [span["depth"] for span in spans] == [0, 1, 1]
    assert [(span["offset_ms"], span["duration_ms"]) for span in spans] == [(0, 10), (1, 2), (4, 5)]
    assert chat["usage"] == {
        "total_tokens": 42, "input_tokens": 30, "output_tokens": 12, "model": "m-1", "cost_usd": "0.0125",
    }  # fmt: skip
    assert chat["messages"] == {
        "input": [{"role": "user", "content": "book Lisbon"}],
        "output": [{"role": "assistant", "content": 'search({"q":"Lisbon"})'}],
        "truncated": False,
    }
    assert search["tool_call"] == {"tool": "search", "call_id": "c-1"}
    assert search["error"] == {"error": "error", "message": "search timed out"}
    assert agent["error"] is None and agent["messages"] is None and agent["usage"] is None

    finalized = client.post(f"/v1/runs/{run_id}/finalize").json()
    assert finalized["cost_usd"] == 0.0125 and finalized["total_tokens"] == 42
    assert client.get(f"/v1/runs/{run_id}/spans").json()["spans"] == spans


def test_pages_of_spans_follow_one_another(client: httpx.Client) -> None:
    trace_id = uuid.uuid4().bytes
    _post(client, _trace(trace_id))
    whole = client.get(f"/v1/runs/{trace_id.hex()}/spans").json()["spans"]
    paged, params = [], {"limit": 2}
    while True:
        page = client.get(f"/v1/runs/{trace_id.hex()}/spans", params=params).json()
        paged += page["spans"]
        if page["next_cursor"] is None:
            break
        params = {"limit": 2, "cursor": page["next_cursor"]}
    assert paged == whole and len(whole) == 3


@pytest.mark.parametrize("name", ["pydantic_ai.json", "openai_agents_openinference.json", "strands.json"])
def test_each_run_of_a_multi_agent_tree_shows_its_own_agents_spans(make_client, name: str) -> None:
    """The root run's timeline holds every span of the recording, and each span names the run the tests'
    reader gives its agent; a child run's timeline holds exactly its agent's spans. Fails when a child shows
    the whole tree, or a span names the wrong run."""
    client = make_client(f"t-{uuid.uuid4().hex[:12]}")
    spans = spans_of(read_document((RECORDED / name).read_bytes())).spans
    _post(client, orjson.loads(orjson.dumps(encode_json_traces(spans))))
    trace = RecordedTrace(name)
    runs = trace.run_ids()
    root = runs[trace.root_identity]
    whole = client.get(f"/v1/runs/{root}/spans").json()
    assert whole["total"] == len({span.span_id for span in read_spans(name)})
    owners = {span["span_id"]: span["run_id"] for span in whole["spans"]}
    assert len(runs) > 1, "a multi-agent recording"
    for identity, run_id in runs.items():
        expected = {span.span_id for span in trace.spans if trace.owner(span) == identity}
        assert {span_id for span_id, owner in owners.items() if owner == run_id} == expected, identity
        if run_id != root:
            own = client.get(f"/v1/runs/{run_id}/spans").json()["spans"]
            assert {span["span_id"] for span in own} == expected and {s["agent"] for s in own} == {identity}


def test_the_models_messages_are_read_as_each_instrumentation_records_them(make_client) -> None:
    """The user's request of the support-desk application, in the first model call of four instrumentations
    that record it four ways (the GenAI lists, OpenInference's flat attributes, Strands' span events, the
    OpenLLMetry lists). Fails when one way is not read."""
    request = "Please refund order 42, it arrived broken."
    for name in ("openai_agents_genai.json", "openai_agents_openinference.json", "strands.json", "traceloop_sdk.json"):
        client = make_client(f"t-{uuid.uuid4().hex[:12]}")
        spans = spans_of(read_document((RECORDED / name).read_bytes())).spans
        _post(client, orjson.loads(orjson.dumps(encode_json_traces(spans))))
        trace = RecordedTrace(name)
        root = trace.run_ids()[trace.root_identity]
        timeline = client.get(f"/v1/runs/{root}/spans").json()["spans"]
        calls = [span for span in timeline if span["role"] == "llm" and span["messages"] is not None]
        assert calls, name
        first = calls[0]["messages"]
        assert any(m["role"] == "user" and request in m["content"] for m in first["input"]), (name, first)


def test_messages_stay_redacted_as_stored(embedded_store: Store, tenant: str) -> None:
    """An attribute the settings redact is stored as its pseudonym, and the timeline shows that, never the
    text. Fails when the timeline reads anything but the stored span."""
    trace_id = uuid.uuid4().bytes
    body = orjson.dumps(_trace(trace_id))
    settings = Settings(redact_attributes=["gen_ai.input.messages"])
    otlp_traces.receive(
        embedded_store,
        tenant,
        decode_traces_body(body, protobuf=False, gzipped=False, max_bytes=len(body)),
        datetime.now(UTC),
        settings,
    )
    chat = span_service.list_spans(embedded_store, tenant, trace_id.hex(), 0, 10).spans[1]
    [shown] = chat["messages"]["input"]
    assert shown["content"].startswith("sha256:") and "Lisbon" not in shown["content"]
    assert chat["messages"]["output"] == [{"role": "assistant", "content": 'search({"q":"Lisbon"})'}]  # not redacted


def test_spans_are_the_tenants_own_and_errors_are_problems(make_client, client: httpx.Client) -> None:
    trace_id = uuid.uuid4().bytes
    _post(client, _trace(trace_id))
    other = make_client(f"t-{uuid.uuid4().hex[:12]}")
    for path in (f"/v1/runs/{trace_id.hex()}/spans", f"/v1/runs/{trace_id.hex()}:nobody/spans"):
        answer = (other if "nobody" not in path else client).get(path)
        assert answer.status_code == 404 and answer.headers["content-type"] == "application/problem+json", path
    posted = client.post("/v1/sessions", json={"run_id": f"s-{uuid.uuid4().hex[:8]}", "identity": "a", "events": []})
    answer = client.get(f"/v1/runs/{posted.json()['run_id']}/spans")
    assert answer.status_code == 404 and "not made from a trace" in answer.json()["detail"]
    answer = client.get(f"/v1/runs/{trace_id.hex()}/spans", params={"cursor": "bm90LW91cnM"})
    assert answer.status_code == 422 and answer.json()["errors"][0]["field"] == "query.cursor"
