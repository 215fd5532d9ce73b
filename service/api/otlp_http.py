"""OTLP/HTTP as both receivers speak it (/v1/logs, /v1/traces): JSON or protobuf, optionally gzip;
answers in the request's encoding; a body that cannot be decoded is a 400 google.rpc.Status."""

from dataclasses import dataclass
from typing import Any

import orjson
from fastapi import Request, Response
from google.protobuf.json_format import MessageToDict
from google.rpc import status_pb2

from service.api.errors import Problem
from service.services.inputs import Received

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
INVALID_ARGUMENT = 3


def request_body_schema(resource_key: str) -> dict[str, Any]:
    """OpenAPI for a receiver's body: `{resource_key: [...]}` in JSON, or the protobuf message."""
    return {
        "requestBody": {
            "required": True,
            "content": {
                JSON: {"schema": {"type": "object", "properties": {resource_key: {"type": "array"}}}},
                PROTOBUF: {"schema": {"type": "string", "format": "binary"}},
            },
        }
    }


@dataclass(frozen=True)
class OtlpBody:
    data: bytes
    protobuf: bool
    gzipped: bool


async def read_body(request: Request) -> OtlpBody:
    content_type = request.headers.get("content-type", JSON).split(";")[0].strip().lower()
    if content_type not in (JSON, PROTOBUF):
        raise Problem(415, "Unsupported Media Type", f"send {JSON} or {PROTOBUF}, not {content_type!r}")
    gzipped = request.headers.get("content-encoding", "").lower() == "gzip"
    return OtlpBody(await request.body(), content_type == PROTOBUF, gzipped)


def encode(message: Any, protobuf: bool, status: int) -> Response:
    if protobuf:
        return Response(message.SerializeToString(), status_code=status, media_type=PROTOBUF)
    return Response(orjson.dumps(MessageToDict(message)), status_code=status, media_type=JSON)


def bad_request(message: str, protobuf: bool) -> Response:
    return encode(status_pb2.Status(code=INVALID_ARGUMENT, message=message), protobuf, 400)


def partial_success(answer: Any, rejected_field: str, received: Received, protobuf: bool) -> Response:
    """The Export…ServiceResponse, with partialSuccess naming the rejected items and why."""
    if received.rejected:
        setattr(answer.partial_success, rejected_field, received.rejected)
        answer.partial_success.error_message = "; ".join(received.reasons)
    return encode(answer, protobuf, 200)
