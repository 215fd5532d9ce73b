"""Personal data in telemetry (SPEC §3.2): the attributes named in REPUTE_REDACT_ATTRIBUTES (default
`user.email`) are stored as `sha256:` + the first 16 hex digits of sha256(tenant + "/" + value), so the
sessions of one person still group and nobody reads the value back; another tenant's pseudonym of the
same value differs."""

import hashlib
from collections.abc import Collection

import orjson

from service.otlp.attributes import Attributes, AttributeValue

PREFIX = "sha256:"
DIGITS = 16


def pseudonym(tenant: str, value: AttributeValue) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return PREFIX + hashlib.sha256(f"{tenant}/{text}".encode()).hexdigest()[:DIGITS]


def redacted(attributes: Attributes, names: Collection[str], tenant: str) -> Attributes:
    """`attributes` with the values of `names` replaced by their pseudonyms (the same dict when none is
    there); null values stay null."""
    if not any(name in attributes for name in names):
        return attributes
    return {
        key: pseudonym(tenant, value) if key in names and value is not None else value
        for key, value in attributes.items()
    }


def redacted_attributes(
    attributes: Attributes, resource_attributes: Attributes, names: Collection[str], tenant: str
) -> dict[str, Attributes]:
    """A log record's or a span's own and resource attributes redacted, as the struct's fields to replace."""
    return {
        "attributes": redacted(attributes, names, tenant),
        "resource_attributes": redacted(resource_attributes, names, tenant),
    }
