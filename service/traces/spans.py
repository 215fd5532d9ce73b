"""Spans decoded from OTLP traces (SPEC §3.4), shared by the JSON and the protobuf decoders.

Two kinds of bad input are kept apart, as OTLP/HTTP answers them differently:
- a body that is not an ExportTraceServiceRequest raises `TraceDecodeError` (HTTP 400 with a
  google.rpc.Status);
- inside a readable request, a span that does not fit (an id missing or of the wrong length, a time
  outside the storable range, a value of the wrong type...) is left out and counted, with its reason,
  in `DecodedSpans.rejected` (HTTP 200 with partialSuccess.rejectedSpans).
"""

import hashlib
from collections import Counter
from dataclasses import dataclass, field

import msgspec
import orjson

from service.otlp.attributes import Attributes, OTLPDecodeError
from service.vocab import EARLIEST_MS, LATEST_MS, TIME_RULE

TRACE_ID_BYTES = 16
SPAN_ID_BYTES = 8
NANOS_PER_MS = 1_000_000
CONTENT_ID_CHARS = 32


class TraceDecodeError(OTLPDecodeError):
    """The body is not a readable OTLP traces request; the message says what and where. A subclass of
    the logs' error, so one handler answers both receivers."""


class SpanRejected(ValueError):
    """One span does not fit; the message is the reason, shared by every span rejected for it."""


class SpanEvent(msgspec.Struct, frozen=True, gc=False):
    """An event recorded on a span (e.g. `exception`, with `exception.type` among its attributes)."""

    name: str
    attributes: Attributes


class Span(msgspec.Struct, frozen=True, gc=False):
    """One span, flattened: ids in lowercase hex, times in unix nanoseconds, attribute values coerced
    (see service.otlp). `status_error` is whether the status code is ERROR. The attribute dicts
    may be shared between spans of one resource: treat them as read-only."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start_unix_nano: int
    end_unix_nano: int
    status_error: bool
    status_message: str
    attributes: Attributes
    resource_attributes: Attributes
    events: tuple[SpanEvent, ...]

    @property
    def is_root(self) -> bool:
        """A span without a parent: the one that opened its trace."""
        return self.parent_span_id is None


@dataclass
class DecodedSpans:
    """The spans of one request, and how many spans were rejected for each reason."""

    spans: list[Span] = field(default_factory=list)
    rejected: Counter[str] = field(default_factory=Counter)

    @property
    def rejected_count(self) -> int:
        return self.rejected.total()

    def rejection_message(self) -> str:
        """partialSuccess.errorMessage: each reason with its count, most frequent first."""
        return "; ".join(f"{count} spans: {reason}" for reason, count in self.rejected.most_common())

    def extend(self, other: "DecodedSpans") -> None:
        self.spans.extend(other.spans)
        self.rejected.update(other.rejected)


def build_span(
    *,
    trace_id: bytes,
    span_id: bytes,
    parent_span_id: bytes,
    name: str,
    start_unix_nano: int,
    end_unix_nano: int,
    status_error: bool,
    status_message: str,
    attributes: Attributes,
    resource_attributes: Attributes,
    events: tuple[SpanEvent, ...],
) -> Span:
    """A validated span; raises SpanRejected. Empty `parent_span_id` means no parent (proto3 default)."""
    return Span(
        trace_id=_id_hex(trace_id, TRACE_ID_BYTES, "traceId"),
        span_id=_id_hex(span_id, SPAN_ID_BYTES, "spanId"),
        parent_span_id=_id_hex(parent_span_id, SPAN_ID_BYTES, "parentSpanId") if parent_span_id else None,
        name=name,
        start_unix_nano=_storable_time(start_unix_nano, "startTimeUnixNano"),
        end_unix_nano=_storable_time(end_unix_nano, "endTimeUnixNano"),
        status_error=status_error,
        status_message=status_message,
        attributes=attributes,
        resource_attributes=resource_attributes,
        events=events,
    )


def _id_hex(value: bytes, size: int, name: str) -> str:
    if len(value) != size or not any(value):
        raise SpanRejected(f"{name} must be {size} bytes, not all zero")
    return value.hex()


def _storable_time(unix_nano: int, name: str) -> int:
    if not EARLIEST_MS <= unix_nano // NANOS_PER_MS < LATEST_MS:
        raise SpanRejected(f"{name} must lie {TIME_RULE}")
    return unix_nano


def span_content_id(span: Span) -> str:
    """A digest of everything the span says (attribute order ignored): a resent span, or the JSON and
    the protobuf twin of one, gets the same id, so the store can keep one copy."""
    canonical = orjson.dumps(msgspec.to_builtins(span), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()[:CONTENT_ID_CHARS]


_span_decoder = msgspec.json.Decoder(Span)


def encode_span(span: Span) -> str:
    """The span as stored text (JSON); `decode_span` reads it back equal."""
    return msgspec.json.encode(span).decode()


def decode_span(payload: bytes | str) -> Span:
    return _span_decoder.decode(payload)
