"""OpenAPI request bodies of the routes that read their body themselves (several encodings)."""

from typing import Any

from pydantic import BaseModel

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
