"""The two ways traces arrive: an OTLP/HTTP request body, and the Collector file exporter's JSONL."""

from collections.abc import Iterable, Iterator

from service.traces.inflate import gunzip_members
from service.traces.otlp_json import decode_json_traces
from service.traces.otlp_proto import decode_protobuf_traces
from service.traces.spans import DecodedSpans, TraceDecodeError


def decode_traces_body(body: bytes, *, protobuf: bool, gzipped: bool, max_bytes: int) -> DecodedSpans:
    """A POST /v1/traces body: protobuf or JSON (by Content-Type), gzip or not (by Content-Encoding).
    Raises TraceDecodeError (HTTP 400) or, for a gzip body inflating past `max_bytes`, InflatedTooLarge
    (HTTP 413)."""
    if gzipped:
        body = gunzip_members(body, max_bytes)
    return decode_protobuf_traces(body) if protobuf else decode_json_traces(body)


def decode_trace_lines(lines: Iterable[bytes | str]) -> Iterator[DecodedSpans]:
    """Each line's spans, one ExportTraceServiceRequest JSON per line (blank lines skipped), read as
    they come: pass an open file to stream it. Raises TraceDecodeError naming the first bad line."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            decoded = decode_json_traces(line)
        except TraceDecodeError as error:
            raise TraceDecodeError(f"line {number}: {error}") from None
        yield decoded
