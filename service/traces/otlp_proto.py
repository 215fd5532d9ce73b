"""OTLP/HTTP protobuf traces bodies, decoded into the same spans as their JSON form."""

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanProto
from opentelemetry.proto.trace.v1.trace_pb2 import Status

from service.otlp.attributes import Attributes
from service.otlp.proto_values import attributes_of, parse_request, resource_items
from service.traces.spans import DecodedSpans, Span, SpanEvent, SpanRejected, TraceDecodeError, build_span


def decode_protobuf_traces(data: bytes) -> DecodedSpans:
    """One ExportTraceServiceRequest in binary protobuf; raises TraceDecodeError when it is not one."""
    request = parse_request(ExportTraceServiceRequest(), data, _refused)
    decoded = DecodedSpans()
    for resource_attributes, raw in resource_items(request.resource_spans, "scope_spans", "spans"):
        try:
            decoded.spans.append(_span(raw, resource_attributes))
        except SpanRejected as rejection:
            decoded.rejected[str(rejection)] += 1
    return decoded


def _refused(reason: str) -> TraceDecodeError:
    return TraceDecodeError(f"invalid OTLP/protobuf traces request: {reason}")


def _span(raw: SpanProto, resource_attributes: Attributes) -> Span:
    return build_span(
        trace_id=raw.trace_id,
        span_id=raw.span_id,
        parent_span_id=raw.parent_span_id,
        name=raw.name,
        start_unix_nano=raw.start_time_unix_nano,
        end_unix_nano=raw.end_time_unix_nano,
        status_error=raw.status.code == Status.STATUS_CODE_ERROR,
        status_message=raw.status.message,
        attributes=attributes_of(raw.attributes),
        resource_attributes=resource_attributes,
        events=tuple(SpanEvent(event.name, attributes_of(event.attributes)) for event in raw.events),
    )
