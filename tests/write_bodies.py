"""Bodies for every write route, shared by the tests that send each kind of write (store down, kill):
whole runs, streamed runs, signals, OTLP log sessions and traces, each built from a seed or a name."""

import random
import uuid
from datetime import UTC, datetime
from typing import Any

import orjson
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from service.testing.factory import make_session
from tests.traces_support import proto_span, request_of

SECOND = 1_000_000_000
T0 = int(datetime(2026, 10, 31, tzinfo=UTC).timestamp()) * SECOND  # OTLP times, in unix nanoseconds
PROTOBUF = {"content-type": "application/x-protobuf"}
JSON = {"content-type": "application/json"}


def session(run_id: str, identity: str, seed: int, events: int = 12) -> dict[str, Any]:
    """A whole run (SPEC §3.1 object form) of `events` generated events."""
    return make_session(random.Random(seed), run_id, identity, events)


def signal(name: str, identity: str, score_delta: float = 1.0) -> dict[str, Any]:
    """A signal (SPEC §3.3) whose event id is named by `name`."""
    return {
        "event_id": str(uuid.uuid5(uuid.NAMESPACE_URL, name)), "identity": identity, "category": "economic",
        "event_type": "payment_completed", "score_delta": score_delta, "timestamp": "2026-10-30T10:00:00Z",
    }  # fmt: skip


def log_records(session_id: str, identity: str, records: int = 3, first: int = 0) -> bytes:
    """An OTLP/JSON logs request: `records` Claude Code events of one session, a second apart from second
    `first` on (requests with other `first`s hold other records: a repeated record is the same record)."""
    attributes = [
        {"key": "session.id", "value": {"stringValue": session_id}},
        {"key": "masque", "value": {"stringValue": identity}},
    ]
    names = ("claude_code.user_prompt", "claude_code.tool_result", "claude_code.api_request")
    rows = [
        {"timeUnixNano": str(T0 + i * SECOND), "eventName": names[i % 3], "attributes": attributes}
        for i in range(first, first + records)
    ]
    return orjson.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": rows}]}]})


def log_records_protobuf(session_id: str, identity: str, records: int = 3) -> bytes:
    """The same request as `log_records`, protobuf-encoded."""
    return json_format.Parse(log_records(session_id, identity, records), ExportLogsServiceRequest()).SerializeToString()


def trace(trace_id: str, agent: str, spans: int = 3) -> bytes:
    """An OTLP protobuf traces request: an agent's root span and `spans - 1` tool calls below it."""
    trace_bytes = bytes.fromhex(trace_id)
    root = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.id": agent}
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}
    members = [proto_span(1, trace_id=trace_bytes, attributes=root, start=T0, end=T0 + spans * SECOND)]
    members += [
        proto_span(n, trace_id=trace_bytes, parent=1, start=T0 + n * SECOND, attributes=tool)
        for n in range(2, spans + 1)
    ]
    return request_of(*members).SerializeToString()
