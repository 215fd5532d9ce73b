"""OTLP/HTTP traces receiver (SPEC §3.4): spans with the GenAI semantic conventions become runs."""

from datetime import timedelta
from functools import partial

from fastapi import APIRouter, Request, Response
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from service.api import otlp_http
from service.api.deps import Ingest, Writing, WritingDep
from service.api.routing import KeyFirstRoute
from service.services.receivers.otlp_traces import TracesReceived, receive
from service.traces import decode_traces_body

router = APIRouter(tags=["otlp"], route_class=KeyFirstRoute)


@router.post(
    "/v1/traces",
    summary="OTLP/HTTP traces (any agent framework with the OpenTelemetry GenAI conventions)",
    openapi_extra=otlp_http.request_body_schema("resourceSpans"),
    responses={200: {"description": "ExportTraceServiceResponse (partialSuccess for rejected spans)"},
               **otlp_http.REFUSALS},
)  # fmt: skip
async def post_traces(request: Request, principal: Ingest, writing: WritingDep) -> Response:
    job = partial(_receive, writing, principal.tenant)
    body, received = await otlp_http.receive(request, writing.writes, writing.metrics, principal.tenant, job)
    settle_at = writing.now + timedelta(seconds=writing.settings.trace_settle_seconds)
    for run_id in received.rooted_runs:
        request.app.state.settle_timer.at((principal.tenant, run_id), settle_at)
    answer = trace_service_pb2.ExportTraceServiceResponse()
    return otlp_http.partial_success(answer, "rejected_spans", received, body.protobuf)


def _receive(writing: Writing, tenant: str, body: otlp_http.OtlpBody) -> TracesReceived:
    """The write-pool job of a request: decoded (inflated first when gzip), within the request cap, stored."""
    settings = writing.settings
    max_bytes = settings.max_body_bytes
    decoded = decode_traces_body(body.data, protobuf=body.protobuf, gzipped=body.gzipped, max_bytes=max_bytes)
    spans = len(decoded.spans) + decoded.rejected_count
    otlp_http.check_request_items(spans, settings.max_events_per_request, "spans", body.protobuf)
    return receive(writing.store, tenant, decoded, writing.now, settings)
