"""OTLP/HTTP logs receiver (SPEC §3.2): JSON or protobuf, optionally gzip; answers per the OTLP spec."""

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2

from service.api import otlp_http
from service.api.deps import Ingest, MetricsDep, Now, SettingsDep, StoreDep
from service.api.errors import Problem
from service.judge import OTLPDecodeError, decode_json_body, decode_protobuf_body, gunzip_body
from service.judge.otlp import InflatedTooLarge
from service.services.sessions import receive

router = APIRouter(tags=["otlp"])


@router.post(
    "/v1/logs",
    summary="OTLP/HTTP logs (Claude Code sessions)",
    openapi_extra=otlp_http.request_body_schema("resourceLogs"),
    responses={200: {"description": "ExportLogsServiceResponse (partialSuccess for rejected records)"},
               400: {"description": "google.rpc.Status: the request cannot be decoded"}},
)  # fmt: skip
async def post_logs(
    request: Request, principal: Ingest, store: StoreDep, settings: SettingsDep, metrics: MetricsDep, now: Now
) -> Response:
    body = await otlp_http.read_body(request)
    try:
        data = gunzip_body(body.data, settings.max_body_bytes) if body.gzipped else body.data
        batch = decode_protobuf_body(data) if body.protobuf else decode_json_body(data)
    except InflatedTooLarge as exc:
        raise Problem(413, "Content Too Large", str(exc)) from exc
    except OTLPDecodeError as exc:
        return otlp_http.bad_request(str(exc), body.protobuf)
    received = await run_in_threadpool(receive, store, principal.tenant, batch, now, settings.otlp_identity_attributes)
    metrics.events_ingested.inc(received.accepted)
    answer = logs_service_pb2.ExportLogsServiceResponse()
    return otlp_http.partial_success(answer, "rejected_log_records", received, body.protobuf)
