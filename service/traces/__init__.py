"""OpenTelemetry traces with the GenAI semantic conventions, as runs (SPEC §3.4). Pure: no I/O, no
clock, no store, no API.

Decoding: `decode_traces_body` reads a POST /v1/traces body (JSON or protobuf, gzip of one member or
several, inflated size bounded) into `DecodedSpans`: flat, immutable `Span`s plus the rejected spans
counted by reason (partialSuccess). A body that cannot be read raises `TraceDecodeError` (400), one
that inflates too far `InflatedTooLarge` (413). `decode_trace_lines` streams the Collector file
exporter's JSONL.
Storage: `span_content_id` (a resent span, or the JSON and protobuf twins of one, get one id),
`encode_span` / `decode_span`.
Runs: `group_runs` (by conversation id, else trace id; `run_key` + `trace_conversations` for one
span), `root_arrived` (settle-time finalization), `map_run` (a `TraceRun`: identity, suite, task_id,
trial, the §3.1 events to diagnose, and the §6 execution object).
"""

from service.otlp.attributes import InflatedTooLarge
from service.traces.decoding import decode_trace_lines, decode_traces_body
from service.traces.grouping import conversation_id, group_runs, root_arrived, run_key, trace_conversations
from service.traces.inflate import gunzip_members
from service.traces.mapping import TraceRun, map_run
from service.traces.otlp_json import decode_json_traces
from service.traces.otlp_proto import decode_protobuf_traces
from service.traces.spans import (
    DecodedSpans,
    Span,
    SpanEvent,
    TraceDecodeError,
    decode_span,
    encode_span,
    span_content_id,
)

__all__ = [
    "DecodedSpans",
    "InflatedTooLarge",
    "Span",
    "SpanEvent",
    "TraceDecodeError",
    "TraceRun",
    "conversation_id",
    "decode_json_traces",
    "decode_protobuf_traces",
    "decode_span",
    "decode_trace_lines",
    "decode_traces_body",
    "encode_span",
    "group_runs",
    "gunzip_members",
    "map_run",
    "root_arrived",
    "run_key",
    "span_content_id",
    "trace_conversations",
]
