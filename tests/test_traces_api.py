"""POST /v1/traces on a running server (SPEC §3.4): the OpenTelemetry SDK's own OTLP/HTTP exporter, JSON and
protobuf twins, resends, partial success, undecodable bodies, and settle-time finalization across a kill."""

import signal

import httpx
import orjson
import pytest
from google.rpc import status_pb2
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer

from service.testing.live import free_port, start_server_process, wait_until
from tests.traces_support import (
    FAILED_SEARCHES,
    SEARCHES,
    TOKENS_PER_CHAT,
    TRACE_A,
    TRACE_B,
    otlp_json,
    proto_span,
    recording_tracer,
    request_of,
    run_toy_agent,
)

PROTOBUF = {"content-type": "application/x-protobuf"}


recorded = pytest.fixture(name="recorded")(recording_tracer)


def _toy_agent_spans(recorded: tuple[Tracer, InMemorySpanExporter]) -> tuple[ReadableSpan, ...]:
    tracer, finished = recorded
    run_toy_agent(tracer)
    return finished.get_finished_spans()


def _trace_id(spans: tuple[ReadableSpan, ...]) -> str:
    return format(spans[0].context.trace_id, "032x")


def _json_body(spans: tuple[ReadableSpan, ...]) -> bytes:
    return orjson.dumps(otlp_json(encode_spans(spans)))


def test_an_agent_exporting_with_the_sdk_becomes_a_diagnosed_run(base_url: str, client: httpx.Client) -> None:
    """The SDK's OTLPSpanExporter (protobuf over HTTP) sends each span as it ends, children before the root."""
    finished = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "toy-agent"}))
    exporter = OTLPSpanExporter(
        endpoint=f"{base_url}/v1/traces", headers={"Authorization": client.headers["Authorization"]}
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    provider.add_span_processor(SimpleSpanProcessor(finished))
    run_toy_agent(provider.get_tracer("toy.agent"))
    provider.shutdown()
    trace_id = _trace_id(finished.get_finished_spans())

    # A running agent is visible (SPEC §3.4): open until it is finalized.
    assert client.get(f"/v1/runs/{trace_id}").json()["status"] == "open"
    run = client.post(f"/v1/runs/{trace_id}/finalize").json()
    assert (run["kind"], run["identity"], run["status"]) == ("trace", "agent-42", "finalized")
    assert run["tool_calls"] == SEARCHES and run["total_tokens"] == SEARCHES * TOKENS_PER_CHAT
    diagnosis = run["diagnosis"]
    assert diagnosis["evidence_summary"]["errors"] == FAILED_SEARCHES  # one per ERROR span, its exception included
    loop = [c for c in diagnosis["failure_causes"] if c["type"] == "infinite_tool_loop"]
    assert [c["description"] for c in loop] == [f"Tool call repeated {SEARCHES} times with matching arguments."]
    events = client.get(f"/v1/runs/{trace_id}/events").json()["events"]
    tool_outputs = [e["data"] for e in events if e["type"] == "tool_output"]
    assert [o["status"] for o in tool_outputs].count("error") == FAILED_SEARCHES
    assert all(e["data"]["span_id"] == e["event_id"] for e in events)


def test_json_and_protobuf_twins_and_resends_give_the_same_run(
    make_client, tenant: str, recorded: tuple[Tracer, InMemorySpanExporter]
) -> None:
    spans = _toy_agent_spans(recorded)
    trace_id = _trace_id(spans)
    as_protobuf, as_json = make_client(tenant), make_client(f"{tenant}-json")
    body = encode_spans(spans).SerializeToString()
    for _ in range(2):  # the resend collapses
        assert as_protobuf.post("/v1/traces", content=body, headers=PROTOBUF).status_code == 200
    answer = as_json.post("/v1/traces", content=_json_body(spans), headers={"content-type": "application/json"})
    assert answer.status_code == 200 and answer.json() == {}
    first = as_protobuf.post(f"/v1/runs/{trace_id}/finalize").json()
    second = as_json.post(f"/v1/runs/{trace_id}/finalize").json()
    assert first["diagnosis"]["diagnosis_hash"] == second["diagnosis"]["diagnosis_hash"]
    events_per_run = 3 * SEARCHES + 1 + FAILED_SEARCHES  # chat, call, output per search; root; errors
    assert first["event_count"] == second["event_count"] == events_per_run
    again = as_protobuf.post("/v1/traces", content=body, headers=PROTOBUF)
    rejected = ExportTraceServiceResponse.FromString(again.content).partial_success
    assert rejected.rejected_spans == len(spans) and "finalized" in rejected.error_message
    assert as_protobuf.get(f"/v1/runs/{trace_id}").json()["diagnosis"] == first["diagnosis"]


def test_spans_that_cannot_be_used_are_rejected_in_partial_success(client: httpx.Client) -> None:
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "00000000000000a1", "name": "x",
            "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000000001000000",
            "attributes": [{"key": "gen_ai.conversation.id", "value": {"stringValue": "bad id"}}]}  # fmt: skip
    bad_time = {**span, "spanId": "00000000000000a2", "startTimeUnixNano": "1", "attributes": []}
    body = {"resourceSpans": [{"scopeSpans": [{"spans": [span, bad_time]}]}]}
    answer = client.post("/v1/traces", content=orjson.dumps(body), headers={"content-type": "application/json"})
    assert answer.status_code == 200
    assert int(answer.json()["partialSuccess"]["rejectedSpans"]) == 2
    assert client.get("/v1/runs/bad id").status_code == 404


@pytest.mark.parametrize(
    ("body", "content_type"),
    [(b"{not json", "application/json"), (b'{"resourceSpans": 5}', "application/json"),
     (b"\xff\x00garbage", "application/x-protobuf")],
)  # fmt: skip
def test_undecodable_traces_are_a_400_status(client: httpx.Client, body: bytes, content_type: str) -> None:
    response = client.post("/v1/traces", content=body, headers={"content-type": content_type})
    assert response.status_code == 400
    status = response.json() if content_type == "application/json" else status_pb2.Status.FromString(response.content)
    assert (status["code"], bool(status["message"])) == (3, True) if isinstance(status, dict) else status.code == 3


def test_a_kill_between_spans_and_finalize_loses_nothing(tmp_path, recorded) -> None:
    """Spans acknowledged before a SIGKILL are finalized after the restart, once the run has settled."""
    spans = _toy_agent_spans(recorded)
    trace_id = _trace_id(spans)
    data_dir, port = tmp_path / "traces", free_port()
    server = start_server_process(data_dir, port)  # default settle time, and a sweep only every 10 s
    key = (data_dir / "admin.key").read_text().strip()
    base, headers = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
        body = encode_spans(spans).SerializeToString()
        assert client.post("/v1/traces", content=body, headers=PROTOBUF).status_code == 200
    server.send_signal(signal.SIGKILL)
    server.wait()

    server = start_server_process(data_dir, port, trace_settle_seconds="0.2", session_sweep_seconds="0.2")
    try:
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            finalized = lambda: client.get(f"/v1/runs/{trace_id}").json()["status"] == "finalized"  # noqa: E731
            assert wait_until(finalized, attempts=300, interval=0.2)
            run = client.get(f"/v1/runs/{trace_id}").json()
            assert run["identity"] == "agent-42" and run["tool_calls"] == SEARCHES
            reputation = client.get("/v1/identities/agent-42/reputation").json()  # spans carry the real time
            assert reputation["events"] == 1  # one run_trust, emitted once
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()


def test_repute_ingest_reads_the_collectors_trace_file(cli_as, tenant: str, tmp_path, recorded) -> None:
    from typer.testing import CliRunner

    from service.cli import app as cli

    spans = _toy_agent_spans(recorded)
    path = tmp_path / "traces.jsonl"
    path.write_bytes(_json_body(spans[:4]) + b"\n" + _json_body(spans[4:]) + b"\n")  # children first, as exported
    cli_as(tenant)
    ingested = CliRunner().invoke(cli, ["ingest", str(path)])
    assert ingested.exit_code == 0, ingested.output
    assert "1 file: 1 run stored, 0 already present, 0 files failed" in ingested.stderr
    run = orjson.loads(CliRunner().invoke(cli, ["runs", "--json", "--identity", "agent-42"]).stdout)
    assert [(r["run_id"], r["kind"], r["status"]) for r in run] == [(_trace_id(spans), "trace", "finalized")]


def test_runs_whose_agent_has_no_name_are_stored_with_a_warning(make_client, tenant: str) -> None:
    """SPEC §3.5: spans naming no agent under the SDK's default service.name are stored, and the answer's
    partialSuccess says which runs share `unknown_service` and how to name them; a named agent, or a
    service that set its name, gets no warning. Dropping the warning (or giving it to named runs) fails."""
    client = make_client(tenant)
    nameless = request_of(proto_span(1, trace_id=TRACE_A), resource={"service.name": "unknown_service:python"})
    named = request_of(
        proto_span(2, trace_id=TRACE_B, attributes={"gen_ai.operation.name": "invoke_agent",
                                                    "gen_ai.agent.name": "planner"}),
        resource={"service.name": "unknown_service"},
    )  # fmt: skip
    answer = client.post("/v1/traces", content=orjson.dumps(otlp_json(nameless)),
                         headers={"content-type": "application/json"}).json()  # fmt: skip
    warning = answer["partialSuccess"]["errorMessage"]
    assert TRACE_A.hex() in warning and "OTEL_SERVICE_NAME" in warning and "gen_ai.agent.name" in warning
    assert int(answer["partialSuccess"].get("rejectedSpans", 0)) == 0
    for quiet in (named, request_of(proto_span(3, trace_id=TRACE_A.replace(b"\x0a", b"\x0b", 1)))):
        answer = client.post("/v1/traces", content=orjson.dumps(otlp_json(quiet)),
                             headers={"content-type": "application/json"}).json()  # fmt: skip
        assert "partialSuccess" not in answer or not answer["partialSuccess"].get("errorMessage")
