"""OTLP/HTTP protobuf logs bodies, decoded into the same records as their JSON form."""

import base64
from collections.abc import Iterable

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord as LogRecordProto

from service.judge.otlp import (
    MAX_VALUE_DEPTH,
    Attributes,
    AttributeValue,
    DecodedBatch,
    LogRecord,
    OTLPDecodeError,
    make_record,
)


def decode_protobuf_body(data: bytes) -> DecodedBatch:
    """One ExportLogsServiceRequest in binary protobuf."""
    request = ExportLogsServiceRequest()
    try:
        request.ParseFromString(data)
    except (DecodeError, RecursionError) as error:
        raise OTLPDecodeError(f"invalid OTLP/protobuf logs request: {error}") from None
    batch = DecodedBatch()
    for resource_logs in request.resource_logs:
        resource_attributes = attributes_of(resource_logs.resource.attributes)
        for scope_logs in resource_logs.scope_logs:
            batch.records.extend(_record(raw, resource_attributes) for raw in scope_logs.log_records)
    return batch


def _record(raw: LogRecordProto, resource_attributes: Attributes) -> LogRecord:
    body = raw.body.string_value if raw.body.WhichOneof("value") == "string_value" else None
    return make_record(
        raw.time_unix_nano,
        raw.observed_time_unix_nano,
        raw.event_name,
        body,
        attributes_of(raw.attributes),
        resource_attributes,
    )


def attributes_of(pairs: Iterable[KeyValue], depth: int = 0) -> Attributes:
    """OTLP key-values as plain values: the one reading of attribute values, for logs and traces."""
    return {pair.key: _value(pair.value, depth) for pair in pairs}


def _value(value: AnyValue, depth: int = 0) -> AttributeValue:
    if depth > MAX_VALUE_DEPTH:
        return None
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item, depth + 1) for item in value.array_value.values]
    if kind == "kvlist_value":
        return attributes_of(value.kvlist_value.values, depth + 1)
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    return getattr(value, kind) if kind else None
