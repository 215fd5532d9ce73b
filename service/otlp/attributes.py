"""OTLP attribute values as both receivers read them (logs and traces): the value types, their bounds,
and the one error of a request that cannot be decoded."""

from typing import Any

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# Arrays and kvlists nested deeper than this read as null: no emitter nests so deep, and records must
# stay serialisable (orjson stops at 254 levels) and walkable without reaching recursion limits.
MAX_VALUE_DEPTH = 32

# An attribute value after coercion: str, int, float, bool, None, or lists and dicts of them.
AttributeValue = Any
Attributes = dict[str, AttributeValue]


class OTLPDecodeError(ValueError):
    """The input is not a readable OTLP request; the message says what and where."""


class InflatedTooLarge(OTLPDecodeError):
    """A gzip body inflates past the size limit (HTTP 413, not 400)."""


def attribute_text(value: AttributeValue) -> str | None:
    """A value as text: a non-empty string, or an integer (how ids such as session.id are read)."""
    if type(value) is str:
        return value or None
    return str(value) if type(value) is int else None
