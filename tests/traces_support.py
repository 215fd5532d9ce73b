"""Shared helpers of the traces tests: OTLP trace requests built with the opentelemetry-proto classes,
their OTLP/JSON form, and `Span` records built directly."""

import base64
import json
from collections.abc import Iterator
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Status
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanProto
from opentelemetry.sdk.resources import Resource as SdkResource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer

from service.traces import Span, SpanEvent

T0 = 1_700_000_000_000_000_000  # 2023-11-14T22:13:20Z in unix nanoseconds
MS = 1_000_000
TRACE_A = bytes.fromhex("0af7651916cd43dd8448eb211c80319c")
TRACE_B = bytes.fromhex("4bf92f3577b34da6a3ce929d0e0e4736")
IDS_IN_JSON = ("traceId", "spanId", "parentSpanId")


def span_id(number: int) -> bytes:
    return number.to_bytes(8, "big")


def any_value(value: Any) -> AnyValue:
    """The AnyValue of a Python value (bool before int: bool is an int)."""
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, bytes):
        return AnyValue(bytes_value=value)
    if isinstance(value, list):
        return AnyValue(array_value=ArrayValue(values=[any_value(item) for item in value]))
    if isinstance(value, dict):
        return AnyValue(kvlist_value=KeyValueList(values=key_values(value)))
    return AnyValue(string_value=value)


def key_values(attributes: dict[str, Any]) -> list[KeyValue]:
    return [KeyValue(key=key, value=any_value(value)) for key, value in attributes.items()]


def proto_span(
    number: int,
    *,
    trace_id: bytes = TRACE_A,
    parent: int | None = None,
    name: str = "span",
    start: int = T0,
    end: int | None = None,
    attributes: dict[str, Any] | None = None,
    error: bool = False,
    message: str = "",
    events: tuple[tuple[str, dict[str, Any]], ...] = (),
) -> SpanProto:
    """Span `number` (its span id) of a trace; `end` defaults to `start` + 1 ms."""
    return SpanProto(
        trace_id=trace_id,
        span_id=span_id(number),
        parent_span_id=span_id(parent) if parent is not None else b"",
        name=name,
        start_time_unix_nano=start,
        end_time_unix_nano=start + MS if end is None else end,
        attributes=key_values(attributes or {}),
        status=Status(code=Status.STATUS_CODE_ERROR if error else Status.STATUS_CODE_UNSET, message=message),
        events=[SpanProto.Event(name=event, attributes=key_values(fields)) for event, fields in events],
    )


def request_of(*spans: SpanProto, resource: dict[str, Any] | None = None) -> ExportTraceServiceRequest:
    resource_spans = ResourceSpans(
        resource=Resource(attributes=key_values(resource or {"service.name": "svc"})),
        scope_spans=[ScopeSpans(spans=list(spans))],
    )
    return ExportTraceServiceRequest(resource_spans=[resource_spans])


def otlp_json(request: ExportTraceServiceRequest) -> dict[str, Any]:
    """The OTLP/JSON form: protobuf's JSON mapping (camelCase, int64 as strings, enums by name), with
    ids in hex as OTLP/JSON requires instead of base64."""
    document = MessageToDict(request)
    for resource_spans in document.get("resourceSpans", ()):
        for scope_spans in resource_spans.get("scopeSpans", ()):
            for span in scope_spans.get("spans", ()):
                for key in IDS_IN_JSON:
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return document


def make_span(
    number: int,
    *,
    trace_id: bytes = TRACE_A,
    parent: int | None = None,
    name: str | None = None,
    start: int = T0,
    end: int | None = None,
    attributes: dict[str, Any] | None = None,
    resource: dict[str, Any] | None = None,
    error: bool = False,
    message: str = "",
    events: tuple[SpanEvent, ...] = (),
) -> Span:
    """A decoded span built directly, for the grouping and mapping tests (named `span <number>` unless
    `name` is given)."""
    return Span(
        trace_id=trace_id.hex(),
        span_id=span_id(number).hex(),
        parent_span_id=span_id(parent).hex() if parent is not None else None,
        name=f"span {number}" if name is None else name,
        start_unix_nano=start,
        end_unix_nano=start + MS if end is None else end,
        status_error=error,
        status_message=message,
        attributes=attributes or {},
        resource_attributes=resource or {},
        events=events,
    )


SEARCHES = 5
FAILED_SEARCHES = 3  # attempts 0, 2 and 4
TOKENS_PER_CHAT = 1000 + 200


def run_toy_agent(tracer: Tracer) -> None:
    """An agent that keeps searching with the same arguments: each turn a chat, then the search tool,
    which times out every other time (the SDK records the exception and sets status ERROR)."""
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Planner", "gen_ai.agent.id": "agent-42"}
    with tracer.start_as_current_span("invoke_agent Planner", attributes=agent):
        for attempt in range(SEARCHES):
            usage = {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 1000}
            with tracer.start_as_current_span("chat gpt-4o", attributes=usage) as chat:
                chat.set_attribute("gen_ai.usage.output_tokens", 200)
            tool = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search",
                "gen_ai.tool.call.arguments": json.dumps({"query": "flights to Lisbon", "limit": 5}),
            }
            try:
                with tracer.start_as_current_span("execute_tool search", attributes=tool):
                    if attempt % 2 == 0:
                        raise TimeoutError("search timed out")
            except TimeoutError:
                pass


def recording_tracer() -> Iterator[tuple[Tracer, InMemorySpanExporter]]:
    """A tracer of a `toy-agent` service whose finished spans are kept in memory (a fixture's body)."""
    finished = InMemorySpanExporter()
    provider = TracerProvider(resource=SdkResource.create({"service.name": "toy-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(finished))
    yield provider.get_tracer("toy.agent"), finished
    provider.shutdown()
