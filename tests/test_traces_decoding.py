"""Decoding OTLP traces: JSON and protobuf give equal spans; bad spans are rejected with a reason; bad
bodies raise TraceDecodeError and nothing else."""

import gzip
import io
import json
import zlib
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.otlp.attributes import OTLPDecodeError
from service.traces import (
    DecodedSpans,
    InflatedTooLarge,
    Span,
    SpanEvent,
    TraceDecodeError,
    decode_json_traces,
    decode_protobuf_traces,
    decode_span,
    decode_trace_lines,
    decode_traces_body,
    encode_span,
    gunzip_members,
    span_content_id,
)
from tests.traces_support import MS, T0, TRACE_A, TRACE_B, otlp_json, proto_span, request_of

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MAX_BYTES = 1 << 20

HAND_WRITTEN = {
    "resourceSpans": [
        {
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "travel-agent"}}]},
            "scopeSpans": [
                {
                    "scope": {"name": "openai.agents"},
                    "spans": [
                        {
                            "traceId": "0AF7651916CD43DD8448EB211C80319C",
                            "spanId": "0000000000000002",
                            "parentSpanId": "0000000000000001",
                            "name": "execute_tool search",
                            "kind": 1,
                            "startTimeUnixNano": str(T0),
                            "endTimeUnixNano": T0 + MS,
                            "attributes": [
                                {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                                {"key": "gen_ai.tool.name", "value": {"stringValue": "search"}},
                                {"key": "attempt", "value": {"intValue": "3"}},
                                {"key": "budget", "value": {"intValue": 7}},
                                {"key": "ratio", "value": {"doubleValue": 0.25}},
                                {"key": "cached", "value": {"boolValue": False}},
                                {"key": "tags", "value": {"arrayValue": {"values": [{"stringValue": "a"}]}}},
                                {
                                    "key": "request",
                                    "value": {"kvlistValue": {"values": [{"key": "k", "value": {"intValue": "1"}}]}},
                                },
                            ],
                            "events": [
                                {
                                    "timeUnixNano": str(T0),
                                    "name": "exception",
                                    "attributes": [{"key": "exception.type", "value": {"stringValue": "Timeout"}}],
                                }
                            ],
                            "status": {"code": 2, "message": "search timed out"},
                        },
                        {
                            "traceId": "0af7651916cd43dd8448eb211c80319c",
                            "spanId": "0000000000000001",
                            "parentSpanId": "",
                            "name": "invoke_agent",
                            "startTimeUnixNano": T0,
                            "endTimeUnixNano": str(T0 + 5 * MS),
                            "status": {"code": "STATUS_CODE_OK"},
                        },
                    ],
                }
            ],
        }
    ]
}


def hand_written_twin() -> Any:
    """HAND_WRITTEN built with the opentelemetry-proto classes."""
    tool = proto_span(
        2,
        parent=1,
        name="execute_tool search",
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "search",
            "attempt": 3,
            "budget": 7,
            "ratio": 0.25,
            "cached": False,
            "tags": ["a"],
            "request": {"k": 1},
        },
        error=True,
        message="search timed out",
        events=(("exception", {"exception.type": "Timeout"}),),
    )
    root = proto_span(1, name="invoke_agent", end=T0 + 5 * MS)
    root.status.code = root.status.STATUS_CODE_OK
    return request_of(tool, root, resource={"service.name": "travel-agent"})


def test_hand_written_json_and_protobuf_give_equal_spans() -> None:
    from_json = decode_json_traces(orjson.dumps(HAND_WRITTEN))
    from_proto = decode_protobuf_traces(hand_written_twin().SerializeToString())
    assert from_json == from_proto
    assert from_json.rejected_count == 0
    tool, root = from_json.spans
    assert tool == Span(
        trace_id="0af7651916cd43dd8448eb211c80319c",
        span_id="0000000000000002",
        parent_span_id="0000000000000001",
        name="execute_tool search",
        start_unix_nano=T0,
        end_unix_nano=T0 + MS,
        status_error=True,
        status_message="search timed out",
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "search",
            "attempt": 3,
            "budget": 7,
            "ratio": 0.25,
            "cached": False,
            "tags": ["a"],
            "request": {"k": 1},
        },
        resource_attributes={"service.name": "travel-agent"},
        events=(SpanEvent("exception", {"exception.type": "Timeout"}),),
    )
    assert root.parent_span_id is None and root.is_root and not root.status_error


def test_protobuf_json_mapping_output_decodes_to_the_protobuf_spans() -> None:
    request = request_of(
        proto_span(1, name="root", attributes={"n": -(2**63), "blob": b"\x00\xff", "empty": [], "x": 1.5}),
        proto_span(2, parent=1, trace_id=TRACE_B, error=True, message="boom", start=T0 + MS),
        resource={"service.name": "svc", "deployment": {"region": "eu"}},
    )
    document = otlp_json(request)
    assert document["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["status"]["code"] == "STATUS_CODE_ERROR"
    from_json = decode_json_traces(json.dumps(document))
    assert from_json == decode_protobuf_traces(request.SerializeToString())
    assert [span.status_error for span in from_json.spans] == [False, True]


def test_twins_and_resends_share_a_content_id_and_others_do_not() -> None:
    request = hand_written_twin()
    (a, b) = decode_protobuf_traces(request.SerializeToString()).spans
    (a_json, _) = decode_json_traces(orjson.dumps(HAND_WRITTEN)).spans
    assert span_content_id(a) == span_content_id(a_json)
    assert span_content_id(a) != span_content_id(b)
    reordered = msgspec.structs.replace(a, attributes=dict(reversed(a.attributes.items())))
    assert span_content_id(reordered) == span_content_id(a)


def test_stored_text_reads_back_equal() -> None:
    for span in decode_json_traces(orjson.dumps(HAND_WRITTEN)).spans:
        assert decode_span(encode_span(span)) == span


def test_gzip_of_one_member_and_of_several() -> None:
    body = request_of(proto_span(1), proto_span(2, parent=1)).SerializeToString()
    expected = decode_protobuf_traces(body)
    assert decode_traces_body(gzip.compress(body), protobuf=True, gzipped=True, max_bytes=MAX_BYTES) == expected
    halves = gzip.compress(body[:10]) + gzip.compress(body[10:]) + gzip.compress(b"")
    assert gunzip_members(halves, MAX_BYTES) == body
    json_body = orjson.dumps(HAND_WRITTEN)
    assert decode_traces_body(
        gzip.compress(json_body), protobuf=False, gzipped=True, max_bytes=MAX_BYTES
    ) == decode_json_traces(json_body)


def test_many_tiny_members_inflate() -> None:
    member = gzip.compress(b"x")
    assert gunzip_members(member * 50_000, MAX_BYTES) == b"x" * 50_000


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not gzip at all",
        gzip.compress(b"{}")[:-4],  # truncated
        gzip.compress(b"{}") + b"trailing bytes",
        gzip.compress(b"{}") + b"\x1f\x8b",  # a second member cut short
    ],
)
def test_bad_gzip_is_a_decode_error(body: bytes) -> None:
    with pytest.raises(TraceDecodeError):
        gunzip_members(body, MAX_BYTES)


def test_inflating_past_the_bound_is_its_own_error() -> None:
    bomb = gzip.compress(b"\0" * (MAX_BYTES + 1))
    with pytest.raises(InflatedTooLarge):
        gunzip_members(bomb, MAX_BYTES)
    with pytest.raises(InflatedTooLarge):  # the bound holds across members
        gunzip_members(gzip.compress(b"\0" * MAX_BYTES) + gzip.compress(b"\0"), MAX_BYTES)
    assert len(gunzip_members(gzip.compress(b"\0" * MAX_BYTES), MAX_BYTES)) == MAX_BYTES


def _json_span(**changes: Any) -> dict[str, Any]:
    span = {
        "traceId": TRACE_A.hex(),
        "spanId": "00000000000000aa",
        "name": "s",
        "startTimeUnixNano": str(T0),
        "endTimeUnixNano": str(T0 + MS),
    }
    span.update(changes)
    return {key: value for key, value in span.items() if value is not None}


def _json_request(*spans: Any) -> bytes:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}).encode()


EARLY = 86_400 * 10**9  # 1970-01-02: before vocab.EARLIEST
LATE = 2**63 - 1  # 2262


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"traceId": None}, "traceId must be 16 bytes, not all zero"),
        ({"traceId": "00" * 16}, "traceId must be 16 bytes, not all zero"),
        ({"traceId": "abc"}, "traceId must be hex digits"),
        ({"traceId": "zz" * 16}, "traceId must be hex digits"),
        ({"traceId": "0af7 651916cd43dd8448eb211c80319c"}, "traceId must be hex digits"),
        ({"spanId": "0a0b"}, "spanId must be 8 bytes, not all zero"),
        ({"spanId": ""}, "spanId must be 8 bytes, not all zero"),
        ({"parentSpanId": "01"}, "parentSpanId must be 8 bytes, not all zero"),
        ({"startTimeUnixNano": str(EARLY)}, "startTimeUnixNano must lie between 1970-05-01 and 2149-01-01"),
        ({"startTimeUnixNano": None}, "startTimeUnixNano must lie between 1970-05-01 and 2149-01-01"),
        ({"endTimeUnixNano": LATE}, "endTimeUnixNano must lie between 1970-05-01 and 2149-01-01"),
        ({"startTimeUnixNano": "soon"}, "span does not fit the OTLP/JSON schema"),
        ({"startTimeUnixNano": 1.5e18}, "span does not fit the OTLP/JSON schema"),
        ({"attributes": [{"key": "n", "value": {"intValue": "many"}}]}, "span does not fit the OTLP/JSON schema"),
        ({"events": "exception"}, "span does not fit the OTLP/JSON schema"),
    ],
)
def test_a_span_that_does_not_fit_is_rejected_with_its_reason(change: dict[str, Any], reason: str) -> None:
    good = _json_span(spanId="00000000000000bb")
    decoded = decode_json_traces(_json_request(_json_span(**change), good))
    assert [span.span_id for span in decoded.spans] == ["00000000000000bb"]
    assert decoded.rejected == {reason: 1}
    assert decoded.rejection_message() == f"1 spans: {reason}"


def test_protobuf_spans_are_rejected_for_the_same_reasons() -> None:
    request = request_of(
        proto_span(0),
        proto_span(1, trace_id=b"\x01" * 15),
        proto_span(2, start=EARLY),
        proto_span(3, end=2**64 - 1),
        proto_span(4),
    )
    decoded = decode_protobuf_traces(request.SerializeToString())
    assert [span.span_id for span in decoded.spans] == ["0000000000000004"]
    assert decoded.rejected == {
        "spanId must be 8 bytes, not all zero": 1,
        "traceId must be 16 bytes, not all zero": 1,
        "startTimeUnixNano must lie between 1970-05-01 and 2149-01-01": 1,
        "endTimeUnixNano must lie between 1970-05-01 and 2149-01-01": 1,
    }


def test_null_spans_are_rejected_and_counted_by_reason() -> None:
    decoded = decode_json_traces(_json_request(None, None, _json_span(traceId="x")))
    assert decoded.rejected_count == 3
    assert decoded.rejection_message() == (
        "2 spans: span does not fit the OTLP/JSON schema; 1 spans: traceId must be hex digits"
    )


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"[]",
        b"not json",
        b'{"resourceSpans": {}}',
        b'{"resourceSpans": [{"resource": {"attributes": [{"key": "k", "value": {"intValue": "x"}}]}}]}',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": {}}]}]}',
        b"[" * 100_000,
    ],
)
def test_an_unreadable_json_body_raises_a_decode_error(body: bytes) -> None:
    with pytest.raises(TraceDecodeError):
        decode_json_traces(body)


def test_an_empty_request_has_no_spans() -> None:
    assert decode_json_traces(b"{}") == DecodedSpans()
    assert decode_protobuf_traces(b"") == DecodedSpans()


def test_an_unreadable_protobuf_body_raises_a_decode_error() -> None:
    with pytest.raises(TraceDecodeError):
        decode_protobuf_traces(b"\x0a\xff\xff\xff")


def test_the_decode_error_is_the_logs_one_too() -> None:
    assert issubclass(TraceDecodeError, OTLPDecodeError)
    assert issubclass(InflatedTooLarge, OTLPDecodeError)


@FUZZ
@given(st.binary(max_size=512), st.booleans(), st.booleans())
def test_any_bytes_decode_or_raise_the_decode_error(body: bytes, protobuf: bool, gzipped: bool) -> None:
    try:
        decoded = decode_traces_body(body, protobuf=protobuf, gzipped=gzipped, max_bytes=4096)
    except OTLPDecodeError:  # TraceDecodeError, or InflatedTooLarge for a gzip body
        return
    assert isinstance(decoded, DecodedSpans)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
SPAN_KEYS = st.sampled_from(
    ["traceId", "spanId", "parentSpanId", "startTimeUnixNano", "endTimeUnixNano", "attributes", "events", "status"]
)


@FUZZ
@given(st.dictionaries(SPAN_KEYS, JSON_VALUES, max_size=4))
def test_any_json_span_is_kept_or_rejected_never_an_error(changes: dict[str, Any]) -> None:
    decoded = decode_json_traces(_json_request(_json_span(**changes)))
    assert len(decoded.spans) + decoded.rejected_count == 1


def test_collector_file_lines_stream_and_name_the_bad_line() -> None:
    line = orjson.dumps(HAND_WRITTEN)
    lines = io.BytesIO(line + b"\n\n" + _json_request(_json_span()) + b"\n")
    decoded = list(decode_trace_lines(lines))
    assert [len(part.spans) for part in decoded] == [2, 1]
    reader = decode_trace_lines(iter([line, b"   \n", b"{broken\n"]))
    assert len(next(reader).spans) == 2
    with pytest.raises(TraceDecodeError, match=r"^line 3: invalid OTLP/JSON traces request"):
        next(reader)


def test_zlib_bodies_are_not_gzip() -> None:
    with pytest.raises(TraceDecodeError):
        gunzip_members(zlib.compress(b"{}"), MAX_BYTES)
