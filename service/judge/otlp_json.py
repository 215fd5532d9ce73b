"""OTLP/JSON logs (an OTLP/HTTP JSON body, or one line of the Collector's file exporter).

A typed msgspec decoder validates the structure and reads the values in C (faster than a generic
parse and a walk; its errors name the JSON path). It is lax as the proto3 JSON mapping is: int64
values as numbers or strings, doubles as "NaN"/"Infinity", `null` for a default value; unknown fields
are ignored. When a request does not fit, it is decoded again with its log records left raw, so that
the records that do not fit are counted as rejected and the others kept; anything else that does not
fit makes the whole request malformed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

import msgspec

from service.judge.otlp import SESSION_ID, DecodedBatch, make_record, record_time, session_id_text
from service.otlp.attributes import OTLPDecodeError
from service.otlp.json_values import (
    AnyValue,
    KeyValue,
    Message,
    Resource,
    UnixNanos,
    attributes_of,
    decode_tolerating_items,
    decoded_or_none,
    value_of,
)
from service.otlp.shapes import OTLP_LOGS, foreign_body
from service.priority import stepping

RecordT = TypeVar("RecordT")


class LogRecordJson(Message):
    time_unix_nano: UnixNanos | None = None
    observed_time_unix_nano: UnixNanos | None = None
    event_name: str | None = None
    body: AnyValue | None = None
    attributes: list[KeyValue] | None = None


class ScopeLogs(Message, Generic[RecordT]):
    log_records: list[RecordT] | None = None


class ResourceLogs(Message, Generic[RecordT]):
    resource: Resource | None = None
    scope_logs: list[ScopeLogs[RecordT]] | None = None


class ExportLogsServiceRequest(Message, Generic[RecordT]):
    resource_logs: list[ResourceLogs[RecordT]] | None = None


_request_decoder = msgspec.json.Decoder(ExportLogsServiceRequest[LogRecordJson | None], strict=False)
_raw_records_decoder = msgspec.json.Decoder(ExportLogsServiceRequest[msgspec.Raw], strict=False)
_record_decoder = msgspec.json.Decoder(LogRecordJson, strict=False)


def decode_json_body(data: bytes | str) -> DecodedBatch:
    """One ExportLogsServiceRequest in OTLP/JSON; raises OTLPDecodeError when it is not one, naming what
    the body looks like when it is another format (shapes.foreign_body)."""
    return _batch(_decode_request(data))


def session_times(data: bytes | str) -> tuple[list[tuple[str | None, int | None]], int]:
    """(session id, time) of each record of one request, and the number of rejected records: what
    `decode_json_body` would give, faster (no attribute dicts, no records), for a pass that only
    indexes sessions."""
    times: list[tuple[str | None, int | None]] = []
    rejected = 0
    for raw in _raw_records(_decode_request(data)):
        if raw is None:
            rejected += 1
            continue
        session_value = None
        for pair in raw.attributes or ():
            if pair.key == SESSION_ID:
                session_value = pair.value  # the last one wins, as in a dict
        # Most session ids are strings: they are read without a call.
        text = session_value.string_value if session_value is not None else None
        session_id = text or session_id_text(value_of(session_value))
        times.append((session_id, record_time(raw.time_unix_nano, raw.observed_time_unix_nano)))
    return times, rejected


def _decode_request(data: bytes | str) -> ExportLogsServiceRequest[LogRecordJson | None]:
    """The request; a record that does not fit the schema is replaced by None. JSON of another shape
    raises OTLPDecodeError naming what it looks like (shapes.foreign_body)."""
    try:
        request = decode_tolerating_items(data, _request_decoder, _raw_records_decoder, _rebuild, _malformed)
    except OTLPDecodeError as error:
        raise OTLPDecodeError(foreign_body(data, OTLP_LOGS) or str(error)) from None
    if not request.resource_logs and (foreign := foreign_body(data, OTLP_LOGS)):
        raise OTLPDecodeError(foreign)
    return request


def _rebuild(request: ExportLogsServiceRequest[msgspec.Raw]) -> ExportLogsServiceRequest[LogRecordJson | None]:
    return ExportLogsServiceRequest(
        [
            ResourceLogs(
                resource_logs.resource,
                [
                    ScopeLogs([decoded_or_none(_record_decoder, raw) for raw in scope.log_records or ()])
                    for scope in resource_logs.scope_logs or ()
                ],
            )
            for resource_logs in request.resource_logs or ()
        ]
    )


def _raw_records(request: ExportLogsServiceRequest[LogRecordJson | None]) -> Iterator[LogRecordJson | None]:
    for resource_logs in request.resource_logs or ():
        for scope_logs in resource_logs.scope_logs or ():
            yield from scope_logs.log_records or ()


def _malformed(error: Exception) -> OTLPDecodeError:
    return OTLPDecodeError(f"invalid OTLP/JSON logs request: {error}")


def _batch(request: ExportLogsServiceRequest[LogRecordJson | None]) -> DecodedBatch:
    """The records of a decoded request; a None record is one that was rejected."""
    batch = DecodedBatch()
    append = batch.records.append
    for resource_logs in request.resource_logs or ():
        resource = resource_logs.resource
        resource_attributes = attributes_of(resource.attributes if resource is not None else None)
        for scope_logs in resource_logs.scope_logs or ():
            for raw in stepping(scope_logs.log_records or ()):
                if raw is None:
                    batch.rejected += 1
                    continue
                body = raw.body
                append(
                    make_record(
                        raw.time_unix_nano,
                        raw.observed_time_unix_nano,
                        raw.event_name,
                        body.string_value if body is not None else None,
                        attributes_of(raw.attributes),
                        resource_attributes,
                    )
                )
    return batch
