"""OTLP/protobuf attribute values as both receivers read them (logs and traces): the one coercion of an
AnyValue to a plain value, as the JSON decoders give it (bytes as base64 text)."""

import base64
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from service.otlp.attributes import MAX_VALUE_DEPTH, Attributes, AttributeValue, OTLPDecodeError

Request = TypeVar("Request", bound=Message)


def parse_request(request: Request, data: bytes, refused: Callable[[str], OTLPDecodeError]) -> Request:
    """`request` (an empty Export…ServiceRequest) read from binary protobuf; `refused(reason)` is raised
    when the body is not one."""
    try:
        request.ParseFromString(data)
    except (DecodeError, RecursionError) as error:
        raise refused(str(error)) from None
    return request


def resource_items(resources: Iterable[Any], scopes: str, items: str) -> Iterator[tuple[Attributes, Any]]:
    """Each item of a request (a log record, a span) with its resource's attributes, read once per resource:
    `resources` are the request's resource_logs or resource_spans, `scopes` and `items` the field names
    below them."""
    for resource in resources:
        attributes = attributes_of(resource.resource.attributes)
        for scope in getattr(resource, scopes):
            for item in getattr(scope, items):
                yield attributes, item


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
