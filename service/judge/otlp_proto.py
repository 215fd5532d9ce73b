"""OTLP/HTTP protobuf logs bodies, decoded into the same records as their JSON form."""

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord as LogRecordProto

from service.judge.otlp import DecodedBatch, LogRecord, make_record
from service.otlp.attributes import Attributes, OTLPDecodeError
from service.otlp.proto_values import attributes_of, parse_request, resource_items


def decode_protobuf_body(data: bytes) -> DecodedBatch:
    """One ExportLogsServiceRequest in binary protobuf."""
    request = parse_request(ExportLogsServiceRequest(), data, _refused)
    batch = DecodedBatch()
    for resource_attributes, raw in resource_items(request.resource_logs, "scope_logs", "log_records"):
        batch.records.append(_record(raw, resource_attributes))
    return batch


def _refused(reason: str) -> OTLPDecodeError:
    return OTLPDecodeError(f"invalid OTLP/protobuf logs request: {reason}")


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
