"""Flat log records decoded from OTLP, shared by the JSON and the protobuf decoders.

Two kinds of bad input are kept apart, as OTLP/HTTP answers them differently:
- a request that is not an ExportLogsServiceRequest raises `OTLPDecodeError` (HTTP 400);
- inside a readable request, a log record that does not fit the schema (a time or intValue that is
  not an integer or is out of range, a doubleValue that is not a number, a record that is not an
  object...) is dropped and counted in `DecodedBatch.rejected` (HTTP 200 with
  partialSuccess.rejectedLogRecords).
"""

import zlib
from dataclasses import dataclass, field
from typing import Any

import msgspec

CLAUDE_CODE_PREFIX = "claude_code."
SESSION_ID = "session.id"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# Arrays and kvlists nested deeper than this read as null: no emitter nests so deep, and records must
# stay serialisable (orjson stops at 254 levels) and walkable without reaching recursion limits.
MAX_VALUE_DEPTH = 32
GZIP_WBITS = 16 + zlib.MAX_WBITS
FIRST_CHUNK_BYTES = 64
LARGEST_CHUNK_BYTES = 1 << 20

# An attribute value after coercion: str, int, float, bool, None, or lists and dicts of them.
AttributeValue = Any
Attributes = dict[str, AttributeValue]


class OTLPDecodeError(ValueError):
    """The input is not a readable OTLP logs request; the message says what and where."""


class InflatedTooLarge(OTLPDecodeError):
    """A gzip body inflates past the size limit (HTTP 413, not 400)."""


# A msgspec Struct is created several times faster than a NamedTuple or a dataclass; it holds plain
# data only, so it needs no cycle tracking (gc=False).
class LogRecord(msgspec.Struct, frozen=True, gc=False):
    """One OTLP log record, flattened. `event_name` has no `claude_code.` prefix; `session_id` is
    the `session.id` attribute as text (None when absent or empty)."""

    time_unix_nano: int | None
    event_name: str | None
    session_id: str | None
    attributes: Attributes
    resource_attributes: Attributes


@dataclass
class DecodedBatch:
    """The records of one request, and how many of its records were rejected."""

    records: list[LogRecord] = field(default_factory=list)
    rejected: int = 0


def make_record(
    time_unix_nano: int | None,
    observed_time_unix_nano: int | None,
    event_name: str | None,
    body: str | None,
    attributes: Attributes,
    resource_attributes: Attributes,
) -> LogRecord:
    """The name comes from eventName, else a string body, else the `event.name` attribute."""
    name = event_name or body or attributes.get("event.name")
    if type(name) is not str or not name:
        name = None
    elif name.startswith(CLAUDE_CODE_PREFIX):
        name = name[len(CLAUDE_CODE_PREFIX) :]
    return LogRecord(
        record_time(time_unix_nano, observed_time_unix_nano),
        name,
        session_id_text(attributes.get(SESSION_ID)),
        attributes,
        resource_attributes,
    )


def record_time(time_unix_nano: int | None, observed_time_unix_nano: int | None) -> int | None:
    """timeUnixNano, else observedTimeUnixNano; 0 means unset (the proto3 default)."""
    return time_unix_nano or observed_time_unix_nano or None


def session_id_text(value: AttributeValue) -> str | None:
    """A session.id value as text: a non-empty string, or an integer."""
    if type(value) is str:
        return value or None
    return str(value) if type(value) is int else None


def gunzip_body(body: bytes, max_bytes: int) -> bytes:
    """Inflate a `Content-Encoding: gzip` body: every member, concatenated (a gzip stream may be several
    members back to back, as `cat a.gz b.gz` or a compressor that flushes in pieces writes). Raises
    InflatedTooLarge once the output would pass `max_bytes` (bounded while inflating, so a small bomb
    never takes the memory); OTLPDecodeError when the body is not gzip, is truncated, or has bytes after
    a member that do not start another."""
    data = memoryview(body)
    parts: list[bytes] = []
    offset, room = 0, max_bytes
    while True:
        inflated, offset = _inflate_member(data, offset, room, max_bytes)
        parts.append(inflated)
        room -= len(inflated)
        if offset == len(data):
            return b"".join(parts)


def _inflate_member(data: memoryview, offset: int, room: int, max_bytes: int) -> tuple[bytes, int]:
    """The member that starts at `offset`, inflated, and the offset after it. zlib copies the input left
    over after a member's end, so the input is fed in chunks that start small and double: those copies
    stay proportional to the members' own sizes, and a body of many tiny members costs linear time."""
    inflater = zlib.decompressobj(wbits=GZIP_WBITS)
    pieces: list[bytes] = []
    chunk_bytes = FIRST_CHUNK_BYTES
    while not inflater.eof:
        chunk = data[offset : offset + chunk_bytes]
        if not chunk:
            raise OTLPDecodeError("gzip body is truncated")
        try:
            piece = inflater.decompress(chunk, room + 1)
        except zlib.error as error:
            raise OTLPDecodeError(f"body is not valid gzip: {error}") from None
        room -= len(piece)
        if room < 0:
            raise InflatedTooLarge(f"gzip body inflates past {max_bytes} bytes")
        pieces.append(piece)
        offset += len(chunk) - len(inflater.unused_data)
        chunk_bytes = min(2 * chunk_bytes, LARGEST_CHUNK_BYTES)
    return b"".join(pieces), offset
