"""OTLP/HTTP logs receiver (SPEC §3.2): JSON or protobuf, optionally gzip; answers per the OTLP spec."""

from typing import Any

import orjson
from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from google.protobuf.json_format import MessageToDict
from google.rpc import status_pb2
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2

from service.api.deps import Ingest, MetricsDep, Now, SettingsDep, StoreDep
from service.api.routing import KeyFirstRoute, parse_body
from service.errors import TooLarge
from service.judge import DecodedBatch, OTLPDecodeError, decode_json_body, decode_protobuf_body, gunzip_body
from service.judge.otlp import InflatedTooLarge
from service.services.inputs import check_request_size
from service.services.sessions import Received, receive

router = APIRouter(tags=["otlp"], route_class=KeyFirstRoute)

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
OTLP_PATHS = frozenset({"/v1/logs"})  # whose refusals are google.rpc.Status, not problem+json
INVALID_ARGUMENT, RESOURCE_EXHAUSTED = 3, 8  # google.rpc.Code
LOGS_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            JSON: {"schema": {"type": "object", "properties": {"resourceLogs": {"type": "array"}}}},
            PROTOBUF: {"schema": {"type": "string", "format": "binary"}},
        },
    }
}


def _encode(message: Any, as_protobuf: bool, status: int) -> Response:
    if as_protobuf:
        return Response(message.SerializeToString(), status_code=status, media_type=PROTOBUF)
    return Response(orjson.dumps(MessageToDict(message)), status_code=status, media_type=JSON)


def media_type(content_type: str | None) -> str:
    return (content_type or JSON).split(";")[0].strip().lower()


def otlp_refusal(status: int, message: str, as_protobuf: bool) -> Response:
    """A refused OTLP request: a google.rpc.Status, in the request's encoding, as OTLP/HTTP asks."""
    code = RESOURCE_EXHAUSTED if status == 413 else INVALID_ARGUMENT
    return _encode(status_pb2.Status(code=code, message=message), as_protobuf, status)


def _success(received: Received, as_protobuf: bool) -> Response:
    answer = logs_service_pb2.ExportLogsServiceResponse()
    if received.rejected:
        answer.partial_success.rejected_log_records = received.rejected
        answer.partial_success.error_message = "; ".join(received.reasons)
    return _encode(answer, as_protobuf, 200)


@router.post(
    "/v1/logs",
    summary="OTLP/HTTP logs (Claude Code sessions)",
    openapi_extra=LOGS_BODY,
    responses={200: {"description": "ExportLogsServiceResponse (partialSuccess for rejected records)"},
               400: {"description": "google.rpc.Status: the request cannot be decoded"},
               413: {"description": "google.rpc.Status: over a size limit"},
               415: {"description": "google.rpc.Status: neither JSON nor protobuf"}},
)  # fmt: skip
async def post_logs(
    request: Request, principal: Ingest, store: StoreDep, settings: SettingsDep, metrics: MetricsDep, now: Now
) -> Response:
    content_type = media_type(request.headers.get("content-type"))
    if content_type not in (JSON, PROTOBUF):
        return otlp_refusal(415, f"send {JSON} or {PROTOBUF}, not {content_type!r}", as_protobuf=False)
    as_protobuf = content_type == PROTOBUF
    gzipped = request.headers.get("content-encoding", "").lower() == "gzip"

    def decode(body: bytes) -> DecodedBatch:
        if gzipped:
            body = gunzip_body(body, settings.max_body_bytes)
        return decode_protobuf_body(body) if as_protobuf else decode_json_body(body)

    try:
        batch = await parse_body(request, decode)
    except InflatedTooLarge as exc:
        return otlp_refusal(413, f"{exc}; the limit is the setting REPUTE_MAX_BODY_BYTES", as_protobuf)
    except OTLPDecodeError as exc:
        return otlp_refusal(400, str(exc), as_protobuf)
    try:
        check_request_size(len(batch.records) + batch.rejected, settings.max_events_per_request, "log records")
    except TooLarge as exc:
        return otlp_refusal(413, str(exc), as_protobuf)
    received = await run_in_threadpool(
        receive, store, principal.tenant, batch, now, settings.otlp_identity_attributes, settings.max_events_per_run
    )
    metrics.events_ingested.inc(received.accepted)
    return _success(received, as_protobuf)
