"""OTLP/HTTP logs receiver (SPEC §3.2): JSON or protobuf, optionally gzip; answers per the OTLP spec."""

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2

from service.api import otlp_http
from service.api.deps import Ingest, MetricsDep, Now, SettingsDep, StoreDep
from service.api.routing import KeyFirstRoute, parse_off_loop
from service.judge import DecodedBatch, OTLPDecodeError, decode_json_body, decode_protobuf_body, gunzip_body
from service.judge.otlp import InflatedTooLarge
from service.services.sessions import receive

router = APIRouter(tags=["otlp"], route_class=KeyFirstRoute)


@router.post(
    "/v1/logs",
    summary="OTLP/HTTP logs (Claude Code sessions)",
    openapi_extra=otlp_http.request_body_schema("resourceLogs"),
    responses={200: {"description": "ExportLogsServiceResponse (partialSuccess for rejected records)"},
               **otlp_http.REFUSALS},
)  # fmt: skip
async def post_logs(
    request: Request, principal: Ingest, store: StoreDep, settings: SettingsDep, metrics: MetricsDep, now: Now
) -> Response:
    body = await otlp_http.read_body(request)

    def decode(data: bytes) -> DecodedBatch:
        data = gunzip_body(data, settings.max_body_bytes) if body.gzipped else data
        return decode_protobuf_body(data) if body.protobuf else decode_json_body(data)

    try:
        batch = await parse_off_loop(body.data, decode)
    except InflatedTooLarge as exc:
        raise otlp_http.inflated_too_large(exc, body.protobuf) from exc
    except OTLPDecodeError as exc:
        return otlp_http.bad_request(str(exc), body.protobuf)
    records = len(batch.records) + batch.rejected
    otlp_http.check_request_items(records, settings.max_events_per_request, "log records", body.protobuf)
    received = await run_in_threadpool(receive, store, principal.tenant, batch, now, settings)
    metrics.events_ingested.inc(received.accepted)
    answer = logs_service_pb2.ExportLogsServiceResponse()
    return otlp_http.partial_success(answer, "rejected_log_records", received, body.protobuf)
