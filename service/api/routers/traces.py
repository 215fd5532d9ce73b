"""OTLP/HTTP traces receiver (SPEC §3.4): spans with the GenAI semantic conventions become runs."""

from datetime import timedelta

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from service.api import otlp_http
from service.api.deps import Ingest, MetricsDep, Now, SettingsDep, StoreDep
from service.api.routing import KeyFirstRoute, parse_off_loop
from service.services.traces import receive
from service.traces import DecodedSpans, InflatedTooLarge, TraceDecodeError, decode_traces_body

router = APIRouter(tags=["otlp"], route_class=KeyFirstRoute)


@router.post(
    "/v1/traces",
    summary="OTLP/HTTP traces (any agent framework with the OpenTelemetry GenAI conventions)",
    openapi_extra=otlp_http.request_body_schema("resourceSpans"),
    responses={200: {"description": "ExportTraceServiceResponse (partialSuccess for rejected spans)"},
               **otlp_http.REFUSALS},
)  # fmt: skip
async def post_traces(
    request: Request, principal: Ingest, store: StoreDep, settings: SettingsDep, metrics: MetricsDep, now: Now
) -> Response:
    body = await otlp_http.read_body(request)

    def decode(data: bytes) -> DecodedSpans:
        return decode_traces_body(data, protobuf=body.protobuf, gzipped=body.gzipped, max_bytes=settings.max_body_bytes)

    try:
        decoded = await parse_off_loop(body.data, decode)
    except InflatedTooLarge as exc:
        raise otlp_http.inflated_too_large(exc, body.protobuf) from exc
    except TraceDecodeError as exc:
        return otlp_http.bad_request(str(exc), body.protobuf)
    spans = len(decoded.spans) + decoded.rejected_count
    otlp_http.check_request_items(spans, settings.max_events_per_request, "spans", body.protobuf)
    received = await run_in_threadpool(receive, store, principal.tenant, decoded, now, settings)
    metrics.events_ingested.inc(received.accepted)
    settle_at = now + timedelta(seconds=settings.trace_settle_seconds)
    for run_id in received.rooted_runs:
        request.app.state.settle_timer.at((principal.tenant, run_id), settle_at)
    answer = trace_service_pb2.ExportTraceServiceResponse()
    return otlp_http.partial_success(answer, "rejected_spans", received, body.protobuf)
