"""Identifiers through the live server: a full match of the rule everywhere, and run ids without `/`."""

import uuid

import httpx
import orjson
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from tests.traces_support import proto_span, request_of

T0 = 1_763_700_000_000_000_000  # 2025-11-21T04:40:00Z in unix nanoseconds
PROTOBUF = {"content-type": "application/x-protobuf"}
TOOL_SPAN = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}


def _session(run_id: str | None, identity: str) -> dict:
    run = {"identity": identity, "events": [{"event": "tool_call", "tool": "search"}]}
    return run if run_id is None else {**run, "run_id": run_id}


def _fields(response: httpx.Response) -> list[str]:
    assert response.status_code == 422, response.text
    return [error["field"] for error in response.json()["errors"]]


def _otlp(session_id: str) -> bytes:
    attributes = [{"key": "session.id", "value": {"stringValue": session_id}}]
    record = {"timeUnixNano": str(T0), "eventName": "claude_code.user_prompt", "attributes": attributes}
    return orjson.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]})


def _rejected_records(client: httpx.Client, session_id: str) -> int:
    response = client.post("/v1/logs", content=_otlp(session_id), headers={"content-type": "application/json"})
    assert response.status_code == 200, response.text
    return int(response.json().get("partialSuccess", {}).get("rejectedLogRecords", 0))


def test_a_trailing_newline_is_no_identifier(client: httpx.Client) -> None:
    run_id = f"agent-{uuid.uuid4().hex[:8]}"
    assert client.post("/v1/sessions", json=_session(run_id, "agent")).status_code == 201

    assert _fields(client.post("/v1/sessions", json=_session(f"{run_id}-2\n", "agent"))) == ["run_id"]
    assert _fields(client.post("/v1/sessions", json=_session(None, "agent\n"))) == ["identity"]
    assert _fields(client.post("/v1/sessions/batch", json=[_session(None, "a"), _session(None, "agent\n")])) == [
        "sessions[1].identity"
    ]
    assert _fields(client.post("/v1/runs", json={"run_id": "r\n", "identity": "agent"})) == ["run_id"]
    assert _fields(client.post("/v1/runs", json={"identity": "agent\n"})) == ["identity"]
    assert _rejected_records(client, "session\n") == 1

    for path in (f"/v1/runs/{run_id}%0A", f"/v1/runs/{run_id}%0A/graph", f"/v1/runs/{run_id}%0A/events"):
        assert client.get(path).status_code == 404, path
    assert client.get(f"/v1/runs/{run_id}").status_code == 200


def test_run_ids_hold_no_slash_so_every_stored_run_reads_back(client: httpx.Client) -> None:
    assert _fields(client.post("/v1/sessions", json=_session("a/graph", "agent"))) == ["run_id"]
    assert _fields(client.post("/v1/sessions/batch", json=[_session(None, "a"), _session("a/events", "a")])) == [
        "sessions[1].run_id"
    ]
    assert _fields(client.post("/v1/runs", json={"run_id": "a/graph", "identity": "agent"})) == ["run_id"]
    assert _rejected_records(client, "s/graph") == 1
    conversation = request_of(proto_span(1, attributes={"gen_ai.conversation.id": "c/graph", **TOOL_SPAN}))
    traced = client.post("/v1/traces", content=conversation.SerializeToString(), headers=PROTOBUF)
    assert (
        traced.status_code == 200
        and ExportTraceServiceResponse.FromString(traced.content).partial_success.rejected_spans == 1
    )
    assert client.get("/v1/runs/a/graph").status_code == 404

    # Identities keep `/`: their routes end in a fixed suffix, so they read back.
    identity = f"team/agent-{uuid.uuid4().hex[:8]}"
    created = client.post("/v1/sessions", json=_session(None, identity))
    assert created.status_code == 201, created.text
    run = client.get(f"/v1/runs/{created.json()['run_id']}").json()
    assert run["identity"] == identity
    assert client.get(f"/v1/identities/{identity}/history").status_code == 200


def test_a_signals_reference_is_an_identifier_or_nothing(client: httpx.Client) -> None:
    """Fails without the rule (issue #28): any 256 characters were taken, so a spreadsheet formula posted
    as a reference reached the CLI's piped TSV."""

    def signal(**reference: str) -> dict:
        return {"identity": "agent", "category": "economic", "event_type": "payment_completed", "score_delta": 1,
                **reference}  # fmt: skip

    for hostile in ("=cmd|' /C calc'!A0", "tx\t1", "tx 1"):
        refused = client.post("/v1/reputation-events", json=[signal(reference_id="tx-1"), signal(reference_id=hostile)])
        assert _fields(refused) == ["events[1].reference_id"], hostile
    fine = [signal(), signal(reference_id=""), signal(reference_id="tx-1")]
    accepted = client.post("/v1/reputation-events", json=fine)
    assert accepted.status_code == 202 and accepted.json()["accepted"] == 2  # no reference twice: one content
