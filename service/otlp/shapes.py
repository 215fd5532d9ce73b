"""What a JSON body looks like, so a receiver can refuse a body of another format by name (SPEC §3.4:
a JSON body at /v1/traces or /v1/logs with no `resourceSpans` / `resourceLogs` but other top-level keys
is a 400 naming what it looks like and pointing at `repute ingest`; `{}` is a valid, empty request)."""

from typing import Any

import orjson

JAEGER = "a Jaeger query-API export"
SDK_SPANS = "a list of OpenTelemetry SDK spans (ReadableSpan.to_json)"
SDK_SPAN = "one OpenTelemetry SDK span (ReadableSpan.to_json)"
TRACE_OBJECT = "an object holding a list of OpenTelemetry SDK spans under `spans`"
LANGFUSE = "a Langfuse trace export (`trace` and `observations`)"
SPAN_EXPORTS = (JAEGER, SDK_SPANS, SDK_SPAN, TRACE_OBJECT, LANGFUSE)  # what `repute ingest` converts
OTLP_LOGS = "an OTLP logs request"
OTLP_TRACES = "an OTLP traces request"
RUN = "a Repute run (POST it to /v1/sessions)"
OTLP_KEYS = {OTLP_LOGS: ("resourceLogs",), OTLP_TRACES: ("resourceSpans", "batches")}


def describe(document: Any) -> str:
    """What a parsed JSON document looks like, in words ("a Jaeger query-API export")."""
    if isinstance(document, list):
        return SDK_SPANS if document and is_sdk_span(document[0]) else "a JSON array"
    if not isinstance(document, dict):
        return "a JSON " + {str: "string", int: "number", float: "number", bool: "boolean"}.get(type(document), "null")
    for kind, keys in OTLP_KEYS.items():
        if any(key in document for key in keys):
            return kind
    data = document.get("data")
    if isinstance(data, list) and data and isinstance(data[0], dict) and "traceID" in data[0]:
        return JAEGER
    spans = document.get("spans")
    if isinstance(spans, list) and spans and is_sdk_span(spans[0]):
        return TRACE_OBJECT
    if is_sdk_span(document):
        return SDK_SPAN
    if isinstance(document.get("trace"), dict) and isinstance(document.get("observations"), list):
        return LANGFUSE
    if "events" in document:
        return RUN
    named = ", ".join(repr(key) for key in sorted(document)[:5])
    return f"a JSON object with the keys {named}" if document else "an empty JSON object"


def is_sdk_span(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("context"), dict) and "start_time" in item


def foreign_body(data: bytes | str, expected: str) -> str | None:
    """Why a JSON body that holds no `expected` request (OTLP_LOGS or OTLP_TRACES) is another format, or
    None when it is an empty request of the expected kind (or not JSON at all: the decoder says why)."""
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        if not isinstance(data, bytes):
            return None
        try:  # its shape, whatever bytes its strings hold (the decoder skips what it does not read)
            document = orjson.loads(data.decode("utf-8", "replace"))
        except orjson.JSONDecodeError:
            return None
    if isinstance(document, dict) and (not document or any(key in document for key in OTLP_KEYS[expected])):
        return None
    kind = describe(document)
    keys = " or ".join(f"`{key}`" for key in OTLP_KEYS[expected])
    hint = "; `repute ingest FILE` reads it" if kind in SPAN_EXPORTS else ""
    return f"not {expected}: no {keys}; the body looks like {kind}{hint}"
