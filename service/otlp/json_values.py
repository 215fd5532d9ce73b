"""OTLP/JSON values as both receivers read them (logs and traces): the message structs of attribute values
and resources, read from their camelCase JSON names by typed msgspec decoders (lax as the proto3 JSON
mapping is: int64 values as numbers or strings, `null` for a default value), the one coercion of an
attribute value to a plain one, and the decoding that rejects a bad item alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

import msgspec

from service.otlp.attributes import INT64_MAX, INT64_MIN, MAX_VALUE_DEPTH, Attributes, AttributeValue

Int64 = Annotated[int, msgspec.Meta(ge=INT64_MIN, le=INT64_MAX)]
# fixed64 in the proto; msgspec bounds only fit int64, which reaches the year 2262.
UnixNanos = Annotated[int, msgspec.Meta(ge=0, le=INT64_MAX)]


class Message(msgspec.Struct, rename="camel", gc=False):
    """Fields named as in the proto, read from their camelCase JSON names."""


class AnyValue(Message):
    string_value: str | None = None
    bool_value: bool | None = None
    int_value: Int64 | None = None
    double_value: float | None = None
    array_value: ArrayValue | None = None
    kvlist_value: KeyValueList | None = None
    bytes_value: str | None = None


class ArrayValue(Message):
    values: list[AnyValue | None] | None = None


class KeyValue(Message):
    key: str
    value: AnyValue | None = None


class KeyValueList(Message):
    values: list[KeyValue] | None = None


class Resource(Message):
    attributes: list[KeyValue] | None = None


Typed = TypeVar("Typed")
Raw = TypeVar("Raw")


# msgspec raises UnicodeDecodeError for invalid UTF-8 inside a string, DecodeError for the rest.
UNDECODABLE = (msgspec.DecodeError, RecursionError, UnicodeDecodeError)
Item = TypeVar("Item")


def decoded_or_none(decoder: msgspec.json.Decoder[Item], raw: msgspec.Raw) -> Item | None:
    """One item of a request (a log record, a span) decoded; None when it does not fit its schema (the
    request's other items are kept, and this one is counted as rejected)."""
    try:
        return decoder.decode(raw)
    except UNDECODABLE:
        return None


def decode_tolerating_items(
    data: bytes | str,
    typed: msgspec.json.Decoder[Typed],
    raw: msgspec.json.Decoder[Raw],
    rebuild: Callable[[Raw], Typed],
    malformed: Callable[[Exception], Exception],
) -> Typed:
    """An OTLP/JSON request decoded as `typed`; when an item inside does not fit the schema, decoded as
    `raw` (items left as msgspec.Raw) and rebuilt item by item, so one bad item rejects itself, not the
    request. A body that is not JSON (invalid UTF-8 included), or nests too deep, raises `malformed(error)`."""
    try:
        return typed.decode(data)
    except msgspec.ValidationError:
        pass
    except UNDECODABLE as error:
        raise malformed(error) from None
    try:
        return rebuild(raw.decode(data))
    except UNDECODABLE as error:
        raise malformed(error) from None


def attributes_of(pairs: list[KeyValue] | None, depth: int = 0) -> Attributes:
    # Most values are strings: they are read inline, without a call.
    return {
        pair.key: (
            text
            if (value := pair.value) is not None and (text := value.string_value) is not None
            else value_of(value, depth)
        )
        for pair in pairs or ()
    }


def value_of(value: AnyValue | None, depth: int = 0) -> AttributeValue:
    if value is None or depth > MAX_VALUE_DEPTH:
        return None
    if value.string_value is not None:
        return value.string_value
    if value.int_value is not None:
        return value.int_value
    if value.bool_value is not None:
        return value.bool_value
    if value.double_value is not None:
        return value.double_value
    if value.array_value is not None:
        return [value_of(item, depth + 1) for item in value.array_value.values or ()]
    if value.kvlist_value is not None:
        return attributes_of(value.kvlist_value.values, depth + 1)
    return value.bytes_value
