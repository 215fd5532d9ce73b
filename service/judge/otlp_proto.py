"""OTLP/HTTP protobuf logs bodies, decoded into the same records as their JSON form."""

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord as LogRecordProto

from service.judge.otlp import DecodedBatch, LogRecord, make_record
from service.otlp.attributes import Attributes, OTLPDecodeError
from service.otlp.proto_values import attributes_of


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
