"""OTLP decoding: JSON and protobuf give the same records; bad input raises OTLPDecodeError only."""

import gzip
import json
import math
from typing import Any

import orjson
import pytest
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
)
from opentelemetry.proto.common.v1.common_pb2 import (
    AnyValue,
    ArrayValue,
    KeyValue,
    KeyValueList,
)
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord as LogRecordProto
from opentelemetry.proto.logs.v1.logs_pb2 import ResourceLogs, ScopeLogs
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

from service.judge import DecodedBatch, decode_json_body, decode_protobuf_body, score_session, to_run_events
from service.judge.otlp_json import session_times
from service.otlp.attributes import OTLPDecodeError
from service.otlp.gzip import gunzip_body
from tests.judge_support import fixture_lines

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def key_value(key: str, value: AnyValue) -> KeyValue:
    return KeyValue(key=key, value=value)


def every_kind_of_value_request() -> ExportLogsServiceRequest:
    attributes = [
        key_value("session.id", AnyValue(string_value="sess-p")),
        key_value("input_tokens", AnyValue(int_value=-(2**63))),
        key_value("cost_usd", AnyValue(double_value=0.031531)),
        key_value("success", AnyValue(bool_value=True)),
        key_value("payload", AnyValue(bytes_value=b"\x00\xffbytes")),
        key_value("empty", AnyValue()),
        key_value(
            "nested",
            AnyValue(
                array_value=ArrayValue(
                    values=[
                        AnyValue(int_value=7),
                        AnyValue(kvlist_value=KeyValueList(values=[key_value("k", AnyValue(string_value="v"))])),
                    ]
                )
            ),
        ),
    ]
    records = [
        LogRecordProto(
            time_unix_nano=1_763_629_225_000_000_000, event_name="claude_code.tool_result", attributes=attributes
        ),
        LogRecordProto(observed_time_unix_nano=5, body=AnyValue(string_value="api_request"), attributes=attributes[:2]),
        LogRecordProto(attributes=[key_value("event.name", AnyValue(string_value="claude_code.user_prompt"))]),
        LogRecordProto(body=AnyValue(int_value=3)),
    ]
    resource = Resource(attributes=[key_value("service.name", AnyValue(string_value="claude-code"))])
    return ExportLogsServiceRequest(
        resource_logs=[ResourceLogs(resource=resource, scope_logs=[ScopeLogs(log_records=records)])]
    )


def test_json_and_protobuf_decode_to_the_same_records() -> None:
    request = every_kind_of_value_request()
    from_protobuf = decode_protobuf_body(request.SerializeToString())
    from_json = decode_json_body(json_format.MessageToJson(request))
    assert from_json == from_protobuf
    first, second, third, fourth = from_json.records
    assert (first.time_unix_nano, first.event_name, first.session_id) == (
        1_763_629_225_000_000_000,
        "tool_result",
        "sess-p",
    )
    assert first.attributes["nested"] == [7, {"k": "v"}]
    assert first.attributes["input_tokens"] == -(2**63)
    assert first.attributes["payload"] == "AP9ieXRlcw=="
    assert first.attributes["empty"] is None
    assert first.resource_attributes == {"service.name": "claude-code"}
    assert (second.time_unix_nano, second.event_name) == (5, "api_request")
    assert third.event_name == "user_prompt"
    assert (fourth.time_unix_nano, fourth.event_name, fourth.session_id) == (None, None, None)


@pytest.mark.parametrize("line", fixture_lines(), ids=lambda line: f"{len(line)}B")
def test_fixture_lines_decode_alike_in_both_encodings(line: bytes) -> None:
    request = json_format.Parse(line, ExportLogsServiceRequest())
    assert decode_protobuf_body(request.SerializeToString()) == decode_json_body(line)


def test_values_are_read_as_the_proto3_json_mapping_allows() -> None:
    values = [
        {"intValue": "12"},
        {"intValue": 12},
        {"doubleValue": "NaN"},
        {"doubleValue": 1},
        {"boolValue": True},
        {"stringValue": "x", "unknownField": 1},
        None,
    ]
    request = {
        "resourceLogs": [
            {
                "resource": None,
                "scopeLogs": [
                    {
                        "logRecords": [
                            {
                                "timeUnixNano": "0",
                                "observedTimeUnixNano": 9,
                                "attributes": [
                                    {"key": f"v{index}", "value": value} for index, value in enumerate(values)
                                ],
                            }
                        ]
                    }
                ],
            }
        ]
    }
    (decoded,) = decode_json_body(orjson.dumps(request)).records
    assert decoded.time_unix_nano == 9
    read = decoded.attributes
    assert (read["v0"], read["v1"], read["v3"], read["v4"], read["v5"], read["v6"]) == (12, 12, 1.0, True, "x", None)
    assert math.isnan(read["v2"])


def test_records_that_do_not_fit_are_rejected_and_the_others_kept() -> None:
    good = {"timeUnixNano": "1", "attributes": [{"key": "session.id", "value": {"stringValue": "s"}}]}
    bad = [
        "not a record",
        {"timeUnixNano": "soon"},
        {"timeUnixNano": -1},
        {"attributes": [{"key": "n", "value": {"intValue": "9223372036854775808"}}]},
        {"attributes": [{"key": 3, "value": {}}]},
        {"attributes": [{"key": "b", "value": {"boolValue": "maybe"}}]},
    ]
    request = {"resourceLogs": [{"scopeLogs": [{"logRecords": [good, *bad, good]}]}]}
    batch = decode_json_body(orjson.dumps(request))
    assert (len(batch.records), batch.rejected) == (2, len(bad))


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"   ",
        b"[]",
        b"null",
        b'{"resourceLogs": {}}',
        b'{"resourceLogs": [{"scopeLogs": 3}]}',
        b'{"resourceLogs": [{"resource": {"attributes": [{"key": "a", "value": {"intValue": "x"}}]}}]}',
        b'{"resourceLogs": [',
        b'{"resourceLogs": []}garbage',
        b"\xff\xfe{}",
        b"[" * 100_000,
    ],
)
def test_malformed_json_requests_raise(body: bytes) -> None:
    # JSON that is no request at all names what it looks like (SPEC §3.4): "not an OTLP logs request: ...".
    with pytest.raises(OTLPDecodeError, match=r"invalid OTLP/JSON|not an OTLP logs request"):
        decode_json_body(body)


def test_empty_request_has_no_records() -> None:
    assert decode_json_body(b"{}") == DecodedBatch()


def test_malformed_protobuf_raises() -> None:
    with pytest.raises(OTLPDecodeError, match="invalid OTLP/protobuf"):
        decode_protobuf_body(b"\x0a\xff\xff\xff")


def test_deep_values_are_cut_alike_in_both_encodings() -> None:
    value = AnyValue(string_value="leaf")
    for _ in range(40):
        value = AnyValue(array_value=ArrayValue(values=[value]))
    request = ExportLogsServiceRequest(
        resource_logs=[
            ResourceLogs(scope_logs=[ScopeLogs(log_records=[LogRecordProto(attributes=[key_value("deep", value)])])])
        ]
    )
    from_json = decode_json_body(json_format.MessageToJson(request))
    assert from_json == decode_protobuf_body(request.SerializeToString())
    assert "leaf" not in orjson.dumps(from_json.records[0].attributes).decode()
    to_run_events(from_json.records)


def test_gunzip_body() -> None:
    body = b'{"resourceLogs": []}'
    assert gunzip_body(gzip.compress(body), max_bytes=1024) == body
    assert gunzip_body(gzip.compress(body[:5]) + gzip.compress(body[5:]), max_bytes=1024) == body
    with pytest.raises(OTLPDecodeError, match="inflates past"):
        gunzip_body(gzip.compress(b" " * 600) * 2, max_bytes=1024)
    with pytest.raises(OTLPDecodeError, match="inflates past"):
        gunzip_body(gzip.compress(b" " * 2048), max_bytes=1024)
    with pytest.raises(OTLPDecodeError, match="truncated"):
        gunzip_body(gzip.compress(body)[:-12], max_bytes=1024)
    with pytest.raises(OTLPDecodeError, match="not valid gzip"):
        gunzip_body(body, max_bytes=1024)
    with pytest.raises(OTLPDecodeError, match="not valid gzip"):  # bytes after a member that start no other
        gunzip_body(gzip.compress(body) + b"junk", max_bytes=1024)


# --- fuzzing: whatever arrives, only OTLPDecodeError, and what decodes can be scored and mapped -----

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=20,
)
any_values = st.recursive(
    st.fixed_dictionaries({})
    | st.builds(dict, stringValue=st.text(max_size=10))
    | st.builds(dict, intValue=st.integers() | st.text(max_size=5))
    | st.builds(dict, doubleValue=st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(["NaN", "x"]))
    | st.builds(dict, boolValue=st.booleans() | st.text(max_size=5))
    | json_values,
    lambda children: (
        st.builds(lambda values: {"arrayValue": {"values": values}}, st.lists(children, max_size=3))
        | st.builds(
            lambda pairs: {"kvlistValue": {"values": [{"key": key, "value": value} for key, value in pairs]}},
            st.lists(st.tuples(st.text(max_size=8), children), max_size=3),
        )
    ),
    max_leaves=10,
)
attribute_keys = st.sampled_from(["session.id", "success", "cost_usd", "input_tokens", "tool_parameters", "attempt"])
otlp_records = st.fixed_dictionaries(
    {},
    optional={
        "timeUnixNano": st.integers(-5, 2**64) | st.text(max_size=20) | json_values,
        "observedTimeUnixNano": st.integers(0, 2**63) | st.just("7"),
        "eventName": st.sampled_from(["claude_code.tool_result", "api_request", "api_error", ""]) | json_values,
        "body": any_values,
        "attributes": st.lists(
            st.fixed_dictionaries({"key": attribute_keys | st.text(max_size=8)}, optional={"value": any_values}),
            max_size=6,
        )
        | json_values,
    },
)
otlp_requests = st.builds(
    lambda records, resource: {"resourceLogs": [{"resource": resource, "scopeLogs": [{"logRecords": records}]}]},
    st.lists(otlp_records | json_values, max_size=4),
    st.none()
    | st.fixed_dictionaries({"attributes": st.lists(st.fixed_dictionaries({"key": st.text(max_size=5)}), max_size=2)}),
)


def decodes_or_raises_only_decode_errors(decode: Any, body: bytes) -> None:
    try:
        batch = decode(body)
    except OTLPDecodeError as error:
        assert str(error)
        return
    for session_id, records in {record.session_id: [record] for record in batch.records}.items():
        score_session(session_id or "s", records).to_yaml()
    orjson.dumps(to_run_events(batch.records))


@FUZZ
@given(st.binary(max_size=300))
def test_arbitrary_bytes(body: bytes) -> None:
    decodes_or_raises_only_decode_errors(decode_json_body, body)
    decodes_or_raises_only_decode_errors(decode_protobuf_body, body)


@FUZZ
@given(json_values)
def test_arbitrary_json(value: Any) -> None:
    decodes_or_raises_only_decode_errors(decode_json_body, json.dumps(value).encode())
    index_agrees_with_decoding(json.dumps(value).encode())


@FUZZ
@given(otlp_requests)
def test_otlp_shaped_json_with_arbitrary_values(request: dict[str, Any]) -> None:
    decodes_or_raises_only_decode_errors(decode_json_body, json.dumps(request).encode())
    index_agrees_with_decoding(json.dumps(request).encode())


def index_agrees_with_decoding(body: bytes) -> None:
    """The judge's index pass reads the same sessions, times and rejections as full decoding."""
    try:
        batch = decode_json_body(body)
    except OTLPDecodeError:
        with pytest.raises(OTLPDecodeError):
            session_times(body)
        return
    assert session_times(body) == ([(item.session_id, item.time_unix_nano) for item in batch.records], batch.rejected)
