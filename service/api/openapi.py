"""The OpenAPI document: the request bodies of the routes that read their body themselves (several
encodings), and the errors of every route (problem+json)."""

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel

from service.api.otlp_http import OTLP_PATHS

NDJSON = "application/x-ndjson"


def array_or_wrapped(key: str, item: dict[str, Any]) -> dict[str, Any]:
    """A JSON array of `item`, or an object holding that array under `key`."""
    array = {"type": "array", "items": item}
    return {"oneOf": [array, {"type": "object", "required": [key], "properties": {key: array}}]}


def request_body(schema: dict[str, Any], example: Any = None, ndjson: bool = False) -> dict[str, Any]:
    """`openapi_extra` for a JSON body (and, with `ndjson`, its one-item-per-line form)."""
    json_content: dict[str, Any] = {"schema": schema}
    if example is not None:
        json_content["example"] = example
    content = {"application/json": json_content}
    if ndjson:
        content[NDJSON] = {"schema": {"type": "string"}}
    return {"requestBody": {"required": True, "content": content}}


def inline_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of `model` with its definitions written in place (a request body given through
    `openapi_extra` cannot reference the document's components)."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return resolve(definitions[node["$ref"].rsplit("/", 1)[-1]])
            return {key: resolve(value) for key, value in node.items()}
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    return resolve(schema)


# The errors every route documents (RFC 9457 problem+json, service.api.errors), derived from what the route
# is: a key and scope (401, 403, and 503 since the key is checked in the store), input (422), a body (400
# not JSON, 408 too slow, 413 over a limit, 415 an encoding other than gzip, 429 the tenant's bodies in
# flight). What a route finds or stores says itself, on the route: NOT_FOUND, CONFLICT.
PROBLEM_SCHEMA: dict[str, Any] = {
    "title": "Problem",
    "type": "object",
    "description": "RFC 9457 problem details; `errors` names each offending field",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string", "example": "about:blank"},
        "title": {"type": "string", "example": "Unprocessable Content"},
        "status": {"type": "integer", "example": 422},
        "detail": {"type": "string", "example": "events[3].timestamp: not a time"},
        "instance": {"type": "string", "example": "/v1/sessions"},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["field", "message"],
                "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
            },
        },
    },
}
PROBLEM_CONTENT = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}


def problem(description: str) -> dict[str, Any]:
    """An error response of the OpenAPI document: problem+json, with what it means."""
    return {"description": description, "content": PROBLEM_CONTENT}


NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: problem("no such thing for this key's tenant (another tenant's answers the same)")
}
CONFLICT: dict[int | str, dict[str, Any]] = {
    409: problem("contradicts what is stored: a run_id stored with other content (the fields that differ are named)")
}
_KEYED = {
    401: problem("no key, or a key that is unknown or revoked (`WWW-Authenticate: Bearer`)"),
    403: problem("the key lacks the scope this route needs"),
    503: problem("ClickHouse is unreachable: nothing was stored; retry after `Retry-After` seconds"),
}
_INPUT = {422: problem("a parameter or a field of the body is invalid: `errors` names each one")}
_BODY = {
    400: problem("the body is not JSON (or not the form this route reads)"),
    413: problem("over a limit (the body's bytes, a run's events, a batch's runs): the limit and its setting named"),
    415: problem("a Content-Encoding other than gzip"),
    408: problem("the body did not arrive whole in time: the setting REPUTE_BODY_READ_TIMEOUT_SECONDS"),
    429: problem(
        "the tenant's request bodies in flight are at their limit (REPUTE_MAX_TENANT_BYTES_IN_FLIGHT): retry after"
        " `Retry-After` seconds"
    ),
}
# FastAPI's own schema of a 422, which this API never answers (its 422s are problems).
_UNUSED_SCHEMAS = ("HTTPValidationError", "ValidationError")


def _errors_of(path: str, operation: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """The errors of an operation, from what the document says of it: a key (`security`), input
    (parameters or a body), a body."""
    errors: dict[int, dict[str, Any]] = {}
    if operation.get("security"):
        errors |= _KEYED
    if path in OTLP_PATHS:  # their refusals of input are google.rpc.Status (otlp_http.REFUSALS)
        return errors
    if operation.get("parameters") or "requestBody" in operation:
        errors |= _INPUT
    if "requestBody" in operation:
        errors |= _BODY
    return errors


def with_documented_errors(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """`app.openapi` that adds each operation's errors (`_errors_of`) to FastAPI's document, with the
    problem schema they answer with in place of FastAPI's validation error, and keeps what a route says
    itself (NOT_FOUND, CONFLICT; the OTLP receivers' google.rpc.Status)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = generate()
        for path, operations in document["paths"].items():
            for operation in operations.values():
                responses = operation.setdefault("responses", {})
                for status, response in _errors_of(path, operation).items():
                    if str(status) not in responses or status == 422:
                        responses[str(status)] = response
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        for name in _UNUSED_SCHEMAS:
            schemas.pop(name, None)
        schemas["Problem"] = PROBLEM_SCHEMA
        app.openapi_schema = document
        return document

    return openapi
