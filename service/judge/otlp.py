"""Flat log records decoded from OTLP, shared by the JSON and the protobuf decoders.

Two kinds of bad input are kept apart, as OTLP/HTTP answers them differently:
- a request that is not an ExportLogsServiceRequest raises `OTLPDecodeError` (HTTP 400);
- inside a readable request, a log record that does not fit the schema (a time or intValue that is
  not an integer or is out of range, a doubleValue that is not a number, a record that is not an
  object...) is dropped and counted in `DecodedBatch.rejected` (HTTP 200 with
  partialSuccess.rejectedLogRecords).
"""

from dataclasses import dataclass, field

import msgspec

from service.otlp.attributes import Attributes, AttributeValue, attribute_text

CLAUDE_CODE_PREFIX = "claude_code."
SESSION_ID = "session.id"


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
    return attribute_text(value)
