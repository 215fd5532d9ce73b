"""OTLP/protobuf attribute values as both receivers read them (logs and traces): the one coercion of an
AnyValue to a plain value, as the JSON decoders give it (bytes as base64 text)."""

import base64
from collections.abc import Iterable

from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from service.otlp.attributes import MAX_VALUE_DEPTH, Attributes, AttributeValue


def attributes_of(pairs: Iterable[KeyValue], depth: int = 0) -> Attributes:
    """OTLP key-values as plain values: the one reading of attribute values, for logs and traces."""
    return {pair.key: _value(pair.value, depth) for pair in pairs}


def _value(value: AnyValue, depth: int = 0) -> AttributeValue:
    if depth > MAX_VALUE_DEPTH:
        return None
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item, depth + 1) for item in value.array_value.values]
    if kind == "kvlist_value":
        return attributes_of(value.kvlist_value.values, depth + 1)
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    return getattr(value, kind) if kind else None
