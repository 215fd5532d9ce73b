"""OTLP/JSON traces: an OTLP/HTTP JSON body, or one line of the Collector's file exporter.

The OTLP JSON mapping: camelCase keys, trace and span ids as hex strings, int64 values (times,
intValue) as numbers or strings, `status.code` as a number or its enum name. A typed msgspec decoder
reads the request; when it does not fit, the request is read again with its spans left raw, so the
spans that do not fit are rejected one by one and the others kept. Anything else that does not fit
makes the whole request malformed. Attribute values are coerced as the logs decoder does.

Also read as OTLP: Grafana Tempo's exports, which keep the pre-1.0 names (`batches` for resourceSpans,
`instrumentationLibrarySpans` for scopeSpans), and ids in base64 (protobuf's generic JSON mapping).
"""

from __future__ import annotations

from base64 import b64decode
from typing import Generic, TypeVar

import msgspec

# The logs decoder's value structs and their coercion: one reading of OTLP attribute values.
from service.otlp.attributes import Attributes
from service.otlp.json_values import (
    KeyValue,
    Message,
    Resource,
    UnixNanos,
    attributes_of,
    decode_tolerating_items,
    decoded_or_none,
)
from service.otlp.shapes import OTLP_TRACES, foreign_body
from service.priority import stepping
from service.traces.spans import DecodedSpans, Span, SpanEvent, SpanRejected, TraceDecodeError, build_span

STATUS_CODE_ERROR = 2
STATUS_CODE_ERROR_NAME = "STATUS_CODE_ERROR"
DOES_NOT_FIT = "span does not fit the OTLP/JSON schema"
SpanT = TypeVar("SpanT")


class StatusJson(Message):
    code: int | str | None = None
    message: str | None = None


class SpanEventJson(Message):
    name: str | None = None
    attributes: list[KeyValue] | None = None


class SpanJson(Message):
    trace_id: str | None = None
    span_id: str | None = None
    parent_span_id: str | None = None
    name: str | None = None
    start_time_unix_nano: UnixNanos | None = None
    end_time_unix_nano: UnixNanos | None = None
    attributes: list[KeyValue] | None = None
    events: list[SpanEventJson] | None = None
    status: StatusJson | None = None


class ScopeSpans(Message, Generic[SpanT]):
    spans: list[SpanT] | None = None


class ResourceSpans(Message, Generic[SpanT]):
    resource: Resource | None = None
    scope_spans: list[ScopeSpans[SpanT]] | None = None
    instrumentation_library_spans: list[ScopeSpans[SpanT]] | None = None  # the pre-1.0 name (Tempo exports)

    @property
    def all_scope_spans(self) -> list[ScopeSpans[SpanT]]:
        return [*(self.scope_spans or ()), *(self.instrumentation_library_spans or ())]


class ExportTraceServiceRequest(Message, Generic[SpanT]):
    resource_spans: list[ResourceSpans[SpanT]] | None = None
    batches: list[ResourceSpans[SpanT]] | None = None  # the pre-1.0 name (Tempo exports)

    @property
    def all_resource_spans(self) -> list[ResourceSpans[SpanT]]:
        return [*(self.resource_spans or ()), *(self.batches or ())]


# A span that does not fit (or is null) is None: rejected, with DOES_NOT_FIT as its reason.
_request_decoder = msgspec.json.Decoder(ExportTraceServiceRequest[SpanJson | None], strict=False)
_raw_spans_decoder = msgspec.json.Decoder(ExportTraceServiceRequest[msgspec.Raw], strict=False)
_span_decoder = msgspec.json.Decoder(SpanJson, strict=False)


def decode_json_traces(data: bytes | str) -> DecodedSpans:
    """One ExportTraceServiceRequest in OTLP/JSON; raises TraceDecodeError when it is not one, naming
    what the body looks like when it is another format (shapes.foreign_body)."""
    decoded = DecodedSpans()
    try:
        request = _decode_request(data)
    except TraceDecodeError as error:
        raise TraceDecodeError(foreign_body(data, OTLP_TRACES) or str(error)) from None
    if not request.all_resource_spans and (foreign := foreign_body(data, OTLP_TRACES)):
        raise TraceDecodeError(foreign)
    for resource_spans in request.all_resource_spans:
        resource = resource_spans.resource
        resource_attributes = attributes_of(resource.attributes if resource is not None else None)
        for scope_spans in resource_spans.all_scope_spans:
            for raw in stepping(scope_spans.spans or ()):
                try:
                    decoded.spans.append(_span(raw, resource_attributes))
                except SpanRejected as rejection:
                    decoded.rejected[str(rejection)] += 1
    return decoded


def _decode_request(data: bytes | str) -> ExportTraceServiceRequest[SpanJson | None]:
    """The request; a span that does not fit the schema is replaced by None."""
    return decode_tolerating_items(data, _request_decoder, _raw_spans_decoder, _rebuild, _malformed)


def _rebuild(request: ExportTraceServiceRequest[msgspec.Raw]) -> ExportTraceServiceRequest[SpanJson | None]:
    return ExportTraceServiceRequest(
        [
            ResourceSpans(
                resource_spans.resource,
                [
                    ScopeSpans([decoded_or_none(_span_decoder, raw) for raw in scope.spans or ()])
                    for scope in resource_spans.all_scope_spans
                ],
            )
            for resource_spans in request.all_resource_spans
        ]
    )


def _malformed(error: Exception) -> TraceDecodeError:
    return TraceDecodeError(f"invalid OTLP/JSON traces request: {error}")


def _span(raw: SpanJson | None, resource_attributes: Attributes) -> Span:
    if raw is None:
        raise SpanRejected(DOES_NOT_FIT)
    status = raw.status or StatusJson()
    return build_span(
        trace_id=_id_bytes(raw.trace_id, "traceId"),
        span_id=_id_bytes(raw.span_id, "spanId"),
        parent_span_id=_id_bytes(raw.parent_span_id, "parentSpanId"),
        name=raw.name or "",
        start_unix_nano=raw.start_time_unix_nano or 0,
        end_unix_nano=raw.end_time_unix_nano or 0,
        status_error=status.code in (STATUS_CODE_ERROR, STATUS_CODE_ERROR_NAME),
        status_message=status.message or "",
        attributes=attributes_of(raw.attributes),
        resource_attributes=resource_attributes,
        events=tuple(SpanEvent(event.name or "", attributes_of(event.attributes)) for event in raw.events or ()),
    )


def _id_bytes(text: str | None, name: str) -> bytes:
    """An id's bytes from its hex text, as OTLP/JSON writes ids, else from base64, as protobuf's generic
    JSON mapping (and some exporters) write bytes; absent or "" is b"". The length is checked later."""
    if not text:
        return b""
    try:  # base64 of 8 or 16 bytes always ends in "=" padding, so it never passes for hex
        return bytes.fromhex(text) if text.isalnum() else b64decode(text, validate=True)
    except ValueError:
        raise SpanRejected(f"{name} must be hex digits") from None


# --- encoding: spans read from another format, sent on as OTLP/JSON (`repute ingest`) -----------------


def encode_json_traces(spans: list[Span]) -> dict[str, object]:
    """An ExportTraceServiceRequest in OTLP/JSON holding `spans`, one resourceSpans per resource; reading
    it back (`decode_json_traces`) gives the same spans."""
    by_resource: dict[bytes, list[Span]] = {}
    for span in spans:
        key = msgspec.json.encode(span.resource_attributes, order="sorted")
        by_resource.setdefault(key, []).append(span)
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _key_values(members[0].resource_attributes)},
                "scopeSpans": [{"spans": [_span_json(span) for span in members]}],
            }
            for members in by_resource.values()
        ]
    }


def _span_json(span: Span) -> dict[str, object]:
    encoded: dict[str, object] = {
        "traceId": span.trace_id,
        "spanId": span.span_id,
        "name": span.name,
        "startTimeUnixNano": str(span.start_unix_nano),
        "endTimeUnixNano": str(span.end_unix_nano),
        "attributes": _key_values(span.attributes),
        "events": [{"name": event.name, "attributes": _key_values(event.attributes)} for event in span.events],
        "status": {"code": STATUS_CODE_ERROR, "message": span.status_message} if span.status_error else {},
    }
    if span.parent_span_id is not None:
        encoded["parentSpanId"] = span.parent_span_id
    if span.status_message and not span.status_error:
        encoded["status"] = {"message": span.status_message}
    return encoded


def _key_values(attributes: Attributes) -> list[dict[str, object]]:
    return [{"key": key, "value": _any_value(value)} for key, value in attributes.items()]


def _any_value(value: object) -> dict[str, object]:
    """The AnyValue of an attribute value as the decoder coerces it (bool before int: bool is an int)."""
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any_value(item) for item in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": _key_values(value)}}
    return {}
