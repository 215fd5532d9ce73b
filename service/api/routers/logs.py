"""OTLP/HTTP logs receiver (SPEC §3.2): JSON or protobuf, optionally gzip; answers per the OTLP spec."""

from functools import partial

from fastapi import APIRouter, Request, Response
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2

from service.api import otlp_http
from service.api.deps import Ingest, Writing, WritingDep
from service.api.routing import KeyFirstRoute
from service.judge import decode_json_body, decode_protobuf_body
from service.otlp.gzip import gunzip_body
from service.services.inputs import Received
from service.services.receivers.otlp_logs import receive

router = APIRouter(tags=["otlp"], route_class=KeyFirstRoute)


@router.post(
    "/v1/logs",
    summary="OTLP/HTTP logs (Claude Code sessions)",
    openapi_extra=otlp_http.request_body_schema("resourceLogs"),
    responses={200: {"description": "ExportLogsServiceResponse (partialSuccess for rejected records)"},
               **otlp_http.REFUSALS},
)  # fmt: skip
async def post_logs(request: Request, principal: Ingest, writing: WritingDep) -> Response:
    job = partial(_receive, writing, principal.tenant)
    body, received = await otlp_http.receive(request, writing.writes, writing.metrics, principal.tenant, job)
    answer = logs_service_pb2.ExportLogsServiceResponse()
    return otlp_http.partial_success(answer, "rejected_log_records", received, body.protobuf)


def _receive(writing: Writing, tenant: str, body: otlp_http.OtlpBody) -> Received:
    """The write-pool job of a request: decoded (inflated first when gzip), within the request cap, stored."""
    settings = writing.settings
    data = gunzip_body(body.data, settings.max_body_bytes) if body.gzipped else body.data
    batch = decode_protobuf_body(data) if body.protobuf else decode_json_body(data)
    records = len(batch.records) + batch.rejected
    otlp_http.check_request_items(records, settings.max_events_per_request, "log records", body.protobuf)
    return receive(writing.store, tenant, batch, writing.now, settings)
