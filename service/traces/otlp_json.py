"""OTLP/JSON traces: an OTLP/HTTP JSON body, or one line of the Collector's file exporter.

The OTLP JSON mapping: camelCase keys, trace and span ids as hex strings, int64 values (times,
intValue) as numbers or strings, `status.code` as a number or its enum name. A typed msgspec decoder
reads the request; when it does not fit, the request is read again with its spans left raw, so the
spans that do not fit are rejected one by one and the others kept. Anything else that does not fit
makes the whole request malformed. Attribute values are coerced as the logs decoder does.
"""

from __future__ import annotations

from typing import Generic, TypeVar

import msgspec

# The logs decoder's value structs and their coercion: one reading of OTLP attribute values.
from service.judge.otlp import Attributes
from service.judge.otlp_json import UNDECODABLE, KeyValue, Resource, UnixNanos, decode_tolerating_items
from service.judge.otlp_json import _attributes as attributes_of
from service.traces.spans import DecodedSpans, Span, SpanEvent, SpanRejected, TraceDecodeError, build_span

STATUS_CODE_ERROR = 2
STATUS_CODE_ERROR_NAME = "STATUS_CODE_ERROR"
DOES_NOT_FIT = "span does not fit the OTLP/JSON schema"
SpanT = TypeVar("SpanT")


class _Message(msgspec.Struct, rename="camel", gc=False):
    """Fields named as in the proto, read from their camelCase JSON names."""


class StatusJson(_Message):
    code: int | str | None = None
    message: str | None = None


class SpanEventJson(_Message):
    name: str | None = None
    attributes: list[KeyValue] | None = None


class SpanJson(_Message):
    trace_id: str | None = None
    span_id: str | None = None
    parent_span_id: str | None = None
    name: str | None = None
    start_time_unix_nano: UnixNanos | None = None
    end_time_unix_nano: UnixNanos | None = None
    attributes: list[KeyValue] | None = None
    events: list[SpanEventJson] | None = None
    status: StatusJson | None = None


class ScopeSpans(_Message, Generic[SpanT]):
    spans: list[SpanT] | None = None


class ResourceSpans(_Message, Generic[SpanT]):
    resource: Resource | None = None
    scope_spans: list[ScopeSpans[SpanT]] | None = None


class ExportTraceServiceRequest(_Message, Generic[SpanT]):
    resource_spans: list[ResourceSpans[SpanT]] | None = None


# A span that does not fit (or is null) is None: rejected, with DOES_NOT_FIT as its reason.
_request_decoder = msgspec.json.Decoder(ExportTraceServiceRequest[SpanJson | None], strict=False)
_raw_spans_decoder = msgspec.json.Decoder(ExportTraceServiceRequest[msgspec.Raw], strict=False)
_span_decoder = msgspec.json.Decoder(SpanJson, strict=False)


def decode_json_traces(data: bytes | str) -> DecodedSpans:
    """One ExportTraceServiceRequest in OTLP/JSON; raises TraceDecodeError when it is not one."""
    decoded = DecodedSpans()
    for resource_spans in _decode_request(data).resource_spans or ():
        resource = resource_spans.resource
        resource_attributes = attributes_of(resource.attributes if resource is not None else None)
        for scope_spans in resource_spans.scope_spans or ():
            for raw in scope_spans.spans or ():
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
                    ScopeSpans([_span_or_none(raw) for raw in scope.spans or ()])
                    for scope in resource_spans.scope_spans or ()
                ],
            )
            for resource_spans in request.resource_spans or ()
        ]
    )


def _malformed(error: Exception) -> TraceDecodeError:
    return TraceDecodeError(f"invalid OTLP/JSON traces request: {error}")


def _span_or_none(raw: msgspec.Raw) -> SpanJson | None:
    try:
        return _span_decoder.decode(raw)
    except UNDECODABLE:
        return None


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
    """An id's bytes from its hex text (OTLP/JSON does not use base64 for ids); absent or "" is b""."""
    if not text:
        return b""
    try:
        if text.isalnum():
            return bytes.fromhex(text)
    except ValueError:
        pass
    raise SpanRejected(f"{name} must be hex digits")
