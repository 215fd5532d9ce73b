"""OTLP/HTTP as both receivers speak it (/v1/logs, /v1/traces): JSON or protobuf, optionally gzip;
answers in the request's encoding. A request refused whole (400 undecodable, 413 over a limit, 415
neither JSON nor protobuf, or encoded otherwise than with gzip; 503 with Retry-After while the store is
unavailable) gets a google.rpc.Status, as OTLP/HTTP clients expect, not problem+json."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import orjson
from fastapi import FastAPI, Request, Response
from google.protobuf.json_format import MessageToDict
from google.rpc import status_pb2

from service.api.encoding import GZIP, UnsupportedEncoding, body_encoding
from service.api.metrics import Metrics
from service.api.writes import Writes
from service.errors import TooLarge
from service.otlp.attributes import InflatedTooLarge, OTLPDecodeError
from service.services.inputs import Received, check_request_size

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
OTLP_PATHS = frozenset({"/v1/logs", "/v1/traces"})
INVALID_ARGUMENT, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, UNAVAILABLE = 3, 4, 8, 14  # google.rpc.Code
_CODES = {408: DEADLINE_EXCEEDED, 413: RESOURCE_EXHAUSTED, 429: RESOURCE_EXHAUSTED}


def request_body_schema(resource_key: str) -> dict[str, Any]:
    """OpenAPI for a receiver's body: `{resource_key: [...]}` in JSON (null, as protobuf's JSON mapping reads
    it, is the empty list: `{}` is a valid empty request), or the protobuf message."""
    resources = {"type": ["array", "null"]}
    return {
        "requestBody": {
            "required": True,
            "content": {
                JSON: {"schema": {"type": "object", "properties": {resource_key: resources}}},
                PROTOBUF: {"schema": {"type": "string", "format": "binary"}},
            },
        }
    }


REFUSALS: dict[int | str, dict[str, Any]] = {
    400: {"description": "google.rpc.Status: the request cannot be decoded"},
    408: {"description": "google.rpc.Status: the body did not arrive in time (REPUTE_BODY_READ_TIMEOUT_SECONDS)"},
    413: {"description": "google.rpc.Status: over a size limit, named with its setting"},
    415: {"description": "google.rpc.Status: neither JSON nor protobuf, or a Content-Encoding other than gzip"},
    429: {
        "description": "google.rpc.Status with Retry-After: the tenant's bodies in flight are at their limit"
        " (REPUTE_MAX_TENANT_BYTES_IN_FLIGHT)"
    },
}


class Refused(Exception):
    """A request refused whole; answered as a google.rpc.Status (see `install`)."""

    def __init__(self, status: int, message: str, protobuf: bool, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.protobuf, self.headers = status, message, protobuf, headers


@dataclass(frozen=True)
class OtlpBody:
    data: bytes
    protobuf: bool
    gzipped: bool


def media_type(content_type: str | None) -> str:
    return (content_type or JSON).split(";")[0].strip().lower()


def sends_protobuf(request: Request) -> bool:
    return media_type(request.headers.get("content-type")) == PROTOBUF


async def read_body(request: Request) -> OtlpBody:
    content_type = media_type(request.headers.get("content-type"))
    if content_type not in (JSON, PROTOBUF):
        raise Refused(415, f"send {JSON} or {PROTOBUF}, not {content_type!r}", protobuf=False)
    try:
        gzipped = body_encoding(request) == GZIP
    except UnsupportedEncoding as exc:
        raise Refused(415, str(exc), content_type == PROTOBUF) from exc
    return OtlpBody(await request.body(), content_type == PROTOBUF, gzipped)


def inflated_too_large(error: Exception, protobuf: bool) -> Refused:
    return Refused(413, f"{error}; the limit is the setting REPUTE_MAX_BODY_BYTES", protobuf)


def check_request_items(count: int, max_items: int, unit: str, protobuf: bool) -> None:
    """The items of one request (log records, spans) within REPUTE_MAX_EVENTS_PER_REQUEST."""
    try:
        check_request_size(count, max_items, unit)
    except TooLarge as exc:
        raise Refused(413, str(exc), protobuf) from exc


def encode(message: Any, protobuf: bool, status: int, headers: Mapping[str, str] | None = None) -> Response:
    if protobuf:
        return Response(message.SerializeToString(), status_code=status, media_type=PROTOBUF, headers=headers)
    return Response(orjson.dumps(MessageToDict(message)), status_code=status, media_type=JSON, headers=headers)


def refusal(status: int, message: str, protobuf: bool, headers: Mapping[str, str] | None = None) -> Response:
    code = _CODES.get(status, INVALID_ARGUMENT)
    return encode(status_pb2.Status(code=code, message=message), protobuf, status, headers)


def unavailable(message: str, protobuf: bool, headers: Mapping[str, str]) -> Response:
    """503 UNAVAILABLE: an exporter retries it, after `Retry-After` (in `headers`)."""
    return encode(status_pb2.Status(code=UNAVAILABLE, message=message), protobuf, 503, headers)


ReceivedT = TypeVar("ReceivedT", bound=Received)


async def receive(
    request: Request, writes: Writes, metrics: Metrics, tenant: str, job: Callable[[OtlpBody], ReceivedT]
) -> tuple[OtlpBody, ReceivedT]:
    """A receiver's request: its body read, then `job(body)` (decode, check the caps, store) in the
    tenant's turn of the write pool. A body that cannot be decoded is a 400, one that inflates past the
    body limit a 413 (both raised as `Refused`)."""
    body = await read_body(request)
    try:
        received = await writes.run(tenant, partial(job, body))
    except InflatedTooLarge as exc:
        raise inflated_too_large(exc, body.protobuf) from exc
    except OTLPDecodeError as exc:
        raise Refused(400, str(exc), body.protobuf) from exc
    metrics.events_ingested.inc(received.accepted)
    return body, received


def partial_success(answer: Any, rejected_field: str, received: Received, protobuf: bool) -> Response:
    """The Export…ServiceResponse, with partialSuccess naming the rejected items and why, and warning
    about accepted ones (OTLP: rejected 0 and a message is a warning)."""
    if received.rejected or received.warnings:
        setattr(answer.partial_success, rejected_field, received.rejected)
        answer.partial_success.error_message = received.message
    return encode(answer, protobuf, 200)


def install(app: FastAPI) -> None:
    @app.exception_handler(Refused)
    async def _refused(request: Request, exc: Refused) -> Response:
        return refusal(exc.status, exc.message, exc.protobuf, exc.headers)
