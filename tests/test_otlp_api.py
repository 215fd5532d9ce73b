"""OTLP/HTTP logs through the live server: the OpenTelemetry SDK's exporter, JSON, protobuf and gzip."""

import gzip
import signal
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import orjson
import pytest
from google.protobuf import json_format
from google.rpc import status_pb2
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource

from service.api.app import create_app
from service.judge.otlp import make_record
from service.judge.records import encode_record, record_id
from service.model import RunHeader
from service.services import assembly
from service.services.keys import create_key
from service.settings import Settings
from service.store import writer
from service.store.client import Store
from service.testing.live import free_port, serve_in_thread, start_server_process, wait_until
from service.vocab import SCOPES, RunKind
from tests.conftest import FIXTURES
from tests.traces_support import proto_span, request_of

T0 = 1_763_700_000_000_000_000  # 2025-11-21T04:40:00Z in unix nanoseconds
SECOND = 1_000_000_000
JSON = "application/json"


def _claude_code_session(session_id: str) -> list[tuple[int, str, dict]]:
    """One prompt, four tool results (one failed), two API requests, over three minutes."""
    common = {"session.id": session_id, "masque": "Codesmith"}
    return [
        (T0, "claude_code.user_prompt", {**common, "prompt_length": 80}),
        (T0 + 30 * SECOND, "claude_code.tool_result", {**common, "tool_name": "Read", "success": "true"}),
        (T0 + 60 * SECOND, "claude_code.tool_result", {**common, "tool_name": "Grep", "success": True}),
        (T0 + 90 * SECOND, "claude_code.tool_result", {**common, "tool_name": "Bash", "success": "false"}),
        (T0 + 120 * SECOND, "claude_code.tool_result",
         {**common, "tool_name": "Edit", "success": "true", "tool_parameters": '{"file": "a.py"}'}),
        (T0 + 150 * SECOND, "claude_code.api_request",
         {**common, "input_tokens": 1000, "output_tokens": 200, "cache_read_tokens": 3000, "cost_usd": 0.02}),
        (T0 + 180 * SECOND, "claude_code.api_request",
         {**common, "input_tokens": 500, "output_tokens": 100, "cache_read_tokens": 1500, "cost_usd": "0.01"}),
    ]  # fmt: skip


def test_sdk_exporter_session_is_scored_diagnosed_and_moves_reputation(client: httpx.Client, base_url: str) -> None:
    session_id = f"sess-{uuid.uuid4().hex[:8]}"
    provider = LoggerProvider(resource=Resource.create({"service.name": "claude-code"}))
    exporter = OTLPLogExporter(
        endpoint=f"{base_url}/v1/logs", headers={"Authorization": client.headers["Authorization"]}
    )
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    logger = provider.get_logger("com.anthropic.claude_code.events")
    for timestamp, name, attributes in _claude_code_session(session_id):
        logger.emit(timestamp=timestamp, body=name, attributes=attributes)
    provider.shutdown()

    opened = client.get(f"/v1/runs/{session_id}").json()
    assert opened["status"] == "open" and opened["kind"] == "session" and opened["identity"] == "Codesmith"
    before = client.get("/v1/identities/Codesmith/reputation", params={"as_of": "2025-11-21"}).json()
    assert before["overall"] is None

    finalized = client.post(f"/v1/runs/{session_id}/finalize")
    assert finalized.status_code == 200, finalized.text
    run = finalized.json()
    # By hand (SPEC §5): quality r(10*3/4)=7.5, autonomy min(10, 2*4/1)=8.0, productivity min(10, 10*3/3.0)=10,
    # token efficiency min(10, 10*4500/1800)=10, cost r(10 - 100*0.03/3)=9.0; composite r(8.65)=8.7.
    performance = run["session_performance"]
    assert performance["dimensions"] == {
        "quality": 7.5, "autonomy": 8.0, "productivity": 10.0, "token_efficiency": 10.0, "cost_efficiency": 9.0,
    }  # fmt: skip
    assert performance["composite"] == 8.7 and performance["recommendation"] == "keep"
    assert performance["stats"]["total_tokens"] == 1800 and performance["stats"]["tools_ok"] == 3
    assert run["session_composite"] == 8.7
    assert run["trust_score"] == 100 and run["readiness_level"] == "ready_for_runtime"
    assert run["diagnosis"]["evidence_summary"]["tool_calls"] == 4
    events = client.get(f"/v1/runs/{session_id}/events").json()["events"]
    assert [e["type"] for e in events[:3]] == ["user_prompt", "tool_call", "tool_output"]

    after = client.get("/v1/identities/Codesmith/reputation", params={"as_of": "2025-11-21"}).json()
    # run_trust delta (100 - 80) / 20 = 1.0 (ready, SPEC §7) and session_performance delta (8.7 - 5) / 5 = 0.74,
    # both weight 1.
    assert after["overall"] == pytest.approx(50 * (1 + (1.0 + 0.74) / 2), abs=1e-9)
    assert after["events"] == 2


def _fixture_lines() -> list[bytes]:
    return [line for line in (FIXTURES / "otlp_claude_code.jsonl").read_bytes().splitlines() if line.strip()]


def _as_protobuf(line: bytes) -> bytes:
    return json_format.Parse(line, ExportLogsServiceRequest()).SerializeToString()


SENDERS = {
    "json": lambda line: (line, {"content-type": "application/json"}),
    "protobuf": lambda line: (_as_protobuf(line), {"content-type": "application/x-protobuf"}),
    "gzip": lambda line: (gzip.compress(line), {"content-type": "application/json", "content-encoding": "gzip"}),
}


def _send_fixture(client: httpx.Client, encoding: str, times: int = 1) -> None:
    for _ in range(times):
        for line in _fixture_lines():
            body, headers = SENDERS[encoding](line)
            response = client.post("/v1/logs", content=body, headers=headers)
            assert response.status_code == 200, response.text
            if encoding != "protobuf":
                assert response.json() == {}


def _stored(client: httpx.Client, session_id: str) -> dict:
    run = client.post(f"/v1/runs/{session_id}/finalize").json()
    events = client.get(f"/v1/runs/{session_id}/events").json()["events"]
    return {
        "diagnosis": run["diagnosis"],
        "performance": run["session_performance"],
        "identity": run["identity"],
        "events": [(e["event_id"], e["type"], e["data"]) for e in events],
    }


def test_json_protobuf_and_gzip_store_identical_results(make_client, tenant: str) -> None:
    results = {}
    for encoding in SENDERS:
        client = make_client(f"{tenant}-{encoding}")
        _send_fixture(client, encoding, times=2 if encoding == "json" else 1)
        results[encoding] = {sid: _stored(client, sid) for sid in ("sess-a1", "sess-b2")}
    assert results["json"] == results["protobuf"] == results["gzip"]
    a1 = results["json"]["sess-a1"]["performance"]
    assert a1["composite"] == 8.7 and a1["stats"]["total_tools"] == 10 and a1["stats"]["cache_tokens"] == 51212


def test_resending_after_finalize_changes_nothing(client: httpx.Client) -> None:
    _send_fixture(client, "json")
    first = {sid: _stored(client, sid) for sid in ("sess-a1", "sess-b2")}
    records = 0
    for line in _fixture_lines():
        again = client.post("/v1/logs", content=line, headers={"content-type": "application/json"})
        assert again.status_code == 200
        partial = again.json()["partialSuccess"]
        assert "is finalized" in partial["errorMessage"]
        records += int(partial["rejectedLogRecords"])
    assert records == _record_count()
    assert {sid: _stored(client, sid) for sid in ("sess-a1", "sess-b2")} == first


def _record_count() -> int:
    return sum(
        len(scope["logRecords"])
        for line in _fixture_lines()
        for resource in orjson.loads(line)["resourceLogs"]
        for scope in resource["scopeLogs"]
    )


@pytest.mark.parametrize(
    ("body", "content_type"),
    [(b"{not json", "application/json"), (b'{"resourceLogs": 5}', "application/json"),
     (b"\xff\x00garbage", "application/x-protobuf"), (b"[]", "application/json")],
)  # fmt: skip
def test_malformed_logs_are_a_400_status(client: httpx.Client, body: bytes, content_type: str) -> None:
    response = client.post("/v1/logs", content=body, headers={"content-type": content_type})
    assert response.status_code == 400
    if content_type == "application/json":
        assert response.json()["code"] == 3 and response.json()["message"]
    else:
        status = status_pb2.Status.FromString(response.content)
        assert status.code == 3 and status.message


def test_logs_need_a_key_and_a_known_content_type(client: httpx.Client, base_url: str) -> None:
    assert httpx.post(f"{base_url}/v1/logs", content=b"{}").status_code == 401
    assert client.post("/v1/logs", content=b"x", headers={"content-type": "text/plain"}).status_code == 415


def test_idle_sessions_are_finalized_by_the_sweeper_after_a_restart(tmp_path) -> None:
    data_dir, port = tmp_path / "sweeper", free_port()
    server = start_server_process(data_dir, port)  # default idle period: 30 minutes
    key = (data_dir / "admin.key").read_text().strip()
    base, headers = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
        _send_fixture(client, "json")
        assert client.get("/v1/runs/sess-a1").json()["status"] == "open"
    server.send_signal(signal.SIGKILL)
    server.wait()

    server = start_server_process(data_dir, port, session_idle_minutes="0.001", session_sweep_seconds="0.2")
    try:
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:

            def statuses() -> dict[str, str]:
                return {sid: client.get(f"/v1/runs/{sid}").json()["status"] for sid in ("sess-a1", "sess-b2")}

            wait_until(lambda: set(statuses().values()) == {"finalized"}, attempts=300, interval=0.2)
            assert statuses() == {"sess-a1": "finalized", "sess-b2": "finalized"}
            assert client.get("/v1/runs/sess-a1").json()["session_performance"]["composite"] == 8.7
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


YEAR_1971_NS = 31_536_000 * SECOND  # read back as microseconds once mapped: the year 2969
YEAR_2201_NS = 7_300_000_000 * SECOND


def _records_body(session_id: str, times: list[int]) -> bytes:
    attributes = [{"key": "session.id", "value": {"stringValue": session_id}}]
    records = [
        {"timeUnixNano": str(t), "eventName": "claude_code.user_prompt", "attributes": attributes} for t in times
    ]
    return orjson.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]})


def _post_records(client: httpx.Client, session_id: str, times: list[int]) -> dict:
    response = client.post("/v1/logs", content=_records_body(session_id, times), headers={"content-type": JSON})
    assert response.status_code == 200, response.text
    return response.json()


def test_record_times_are_checked_on_receipt(client: httpx.Client) -> None:
    answer = _post_records(client, "p-1", [1, YEAR_1971_NS, YEAR_2201_NS, T0])
    assert answer["partialSuccess"]["rejectedLogRecords"] == "3"
    assert "timeUnixNano must lie between 1970-05-01 and 2149-01-01" in answer["partialSuccess"]["errorMessage"]
    assert _post_records(client, "p-2", [1])["partialSuccess"]["rejectedLogRecords"] == "1"
    assert client.get("/v1/runs/p-2").status_code == 404

    finalized = client.post("/v1/runs/p-1/finalize")
    assert finalized.status_code == 200, finalized.text
    assert finalized.json()["event_count"] == 1 and finalized.json()["started_at"] == "2025-11-21T04:40:00Z"


def _store_session_unchecked(store: Store, tenant: str, session_id: str, time_unix_nano: int) -> None:
    """A session as the receiver stored it before record times were checked."""
    record = make_record(time_unix_nano, None, "user_prompt", None, {"session.id": session_id}, {})
    spec = RunHeader(identity="agent", run_id=session_id, kind=RunKind.SESSION)
    an_hour_ago = datetime.now(UTC) - timedelta(hours=1)
    row = [tenant, session_id, record_id(record), time_unix_nano, encode_record(record), an_hour_ago, 1]
    writer.session_records(store, [row])
    writer.runs(store, [assembly.new_record(tenant, spec, session_id, an_hour_ago)])


def _keyed_client(url: str, store: Store, tenant: str) -> httpx.Client:
    key = create_key(store, tenant, list(SCOPES), "test", datetime.now(UTC)).key
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60)


def test_an_undiagnosable_session_never_stops_the_sweeper(own_store: Store, data_dir) -> None:
    """On a database of its own: the sweeper finalizes every tenant's idle sessions, and its counts are
    the store's, so the other tests' sessions would be swept and counted too."""
    first, second = "t_a", "t_b"  # in one pass, the sweeper meets the first tenant's session first
    _store_session_unchecked(own_store, first, "p-1", YEAR_1971_NS)
    _store_session_unchecked(own_store, second, "p-2", T0)

    fast = Settings(data_dir=data_dir, session_idle_minutes=0.001, session_sweep_seconds=0.2)
    with serve_in_thread(create_app(fast, store=own_store)) as url:
        sweeping = _keyed_client(url, own_store, second)
        assert wait_until(lambda: sweeping.get("/v1/runs/p-2").json()["status"] == "finalized", attempts=200)
        admin = _keyed_client(url, own_store, "default")  # /metrics is the operator's
        metrics = sweeping.get("/metrics", headers=admin.headers).text
        closed = _keyed_client(url, own_store, first).get("/v1/runs/p-1").json()
    assert 'repute_session_sweep_failures_total{outcome="undiagnosable"} 1.0' in metrics
    assert closed["status"] == "finalized" and closed["execution_status"] == "execution_error"
    assert (closed["failure_stage"], closed["failure_reason_code"]) == ("evaluator", "evaluator_error")
    assert "events[0].timestamp" in closed["failure_message"]


def test_otlp_runs_take_no_run_events(client: httpx.Client) -> None:
    """A session's or trace-born run's events are mapped from its telemetry at finalize: appended ones
    would be dropped."""
    assert _post_records(client, "p-3", [T0, T0 + SECOND]) == {}
    appended = client.post("/v1/runs/p-3/events", json=[{"event": "decision"}])
    assert appended.status_code == 409 and "send its telemetry to /v1/logs" in appended.json()["detail"]
    assert client.post("/v1/runs/p-3/finalize").json()["event_count"] == 2

    tool_span = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}
    traced = request_of(proto_span(1, trace_id=bytes.fromhex("5a" * 16), attributes=tool_span))
    protobuf = {"content-type": "application/x-protobuf"}
    assert client.post("/v1/traces", content=traced.SerializeToString(), headers=protobuf).status_code == 200
    # A trace-born run is a run once finalized (SPEC §3.4: its id comes from all of its spans).
    assert client.post(f"/v1/runs/{'5a' * 16}/events", json=[{"event": "decision"}]).status_code == 404
    client.post(f"/v1/runs/{'5a' * 16}/finalize").raise_for_status()
    appended = client.post(f"/v1/runs/{'5a' * 16}/events", json=[{"event": "decision"}])
    assert appended.status_code == 409 and "finalized" in appended.json()["detail"]


def _status(response: httpx.Response) -> tuple[int, str]:
    """The google.rpc.Status of a refused OTLP request, in the request's encoding."""
    if response.headers["content-type"] == "application/x-protobuf":
        status = status_pb2.Status.FromString(response.content)
        return status.code, status.message
    assert response.headers["content-type"] == JSON, response.headers
    return response.json()["code"], response.json()["message"]


@pytest.mark.parametrize("path", ["/v1/logs", "/v1/traces"])
@pytest.mark.parametrize("content_type", [JSON, "application/x-protobuf"])
def test_otlp_refusals_are_a_google_rpc_status(client: httpx.Client, path: str, content_type: str) -> None:
    headers = {"content-type": content_type}
    inflating = gzip.compress(b" " * (16 * 2**20 + 1))
    bomb = client.post(path, content=inflating, headers={**headers, "content-encoding": "gzip"})
    assert bomb.status_code == 413
    code, message = _status(bomb)
    assert code == 8 and "REPUTE_MAX_BODY_BYTES" in message
    oversized = client.post(path, content=b" " * (16 * 2**20 + 1), headers=headers)
    assert oversized.status_code == 413
    code, message = _status(oversized)
    assert code == 8 and "REPUTE_MAX_BODY_BYTES" in message

    unsupported = client.post(path, content=b"x", headers={"content-type": "text/plain"})
    assert unsupported.status_code == 415 and _status(unsupported)[0] == 3


def _in_two_gzip_members(line: bytes) -> bytes:
    half = len(line) // 2
    return gzip.compress(line[:half]) + gzip.compress(line[half:])


def test_a_multi_member_gzip_body_is_their_concatenation(make_client, tenant: str) -> None:
    gzipped = {"content-type": JSON, "content-encoding": "gzip"}
    results = {}
    for encoding in ("json", "gzip-members"):
        sender = make_client(f"{tenant}-{encoding}")
        for line in _fixture_lines():
            if encoding == "json":
                response = sender.post("/v1/logs", content=line, headers={"content-type": JSON})
            else:
                response = sender.post("/v1/logs", content=_in_two_gzip_members(line), headers=gzipped)
            assert response.status_code == 200 and response.json() == {}, response.text
        results[encoding] = {sid: _stored(sender, sid) for sid in ("sess-a1", "sess-b2")}
    assert results["json"] == results["gzip-members"]

    member = gzip.compress(b" " * (9 * 2**20))  # each member inflates within the limit, the two past it
    refused = make_client(tenant).post("/v1/logs", content=member * 2, headers=gzipped)
    assert refused.status_code == 413 and "REPUTE_MAX_BODY_BYTES" in _status(refused)[1]
