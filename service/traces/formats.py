"""Trace exports that are not OTLP, as spans (SPEC §3.4 "Other trace formats"), for `repute ingest`.

- a Jaeger query-API export: `{"data": [{"traceID", "spans": [...], "processes": {...}}]}`, times in
  microseconds, tags and logs as `{key, type, value}` lists, the status in the `otel.status_code` /
  `otel.status_description` / `error` tags;
- OTel SDK spans as frameworks save them: a JSON list of `ReadableSpan.to_json()` objects (`0x` hex
  ids, ISO 8601 times), or an object whose `spans` is such a list, as any-agent's traces are (decimal
  integer ids, integer nanoseconds, lowercase status codes); also one such span per line (JSONL);
- a Langfuse trace export, as its UI downloads a trace: `{"trace": {...}, "observations": [...]}`, each
  observation a span whose attributes and resource are its `metadata.attributes` and
  `metadata.resourceAttributes` (values as the export gives them: Langfuse writes numbers as text), an
  observation of `level` ERROR a span with status ERROR and `statusMessage` its message. Ids that are hex
  of a span's size (OpenTelemetry's, as Langfuse keeps them) are read as they are; other ids (Langfuse's
  own UUIDs) become the first bytes of their sha256, the same for an id and every reference to it.

Each is read losslessly into the same `Span` the OTLP decoders give (ids, times to the nanosecond,
attributes, events, status, resource), so one mapping serves every format. A span that does not fit is
rejected and counted, as in OTLP. `describe` names what a JSON document looks like, for the 400 that
/v1/traces and /v1/logs answer to a body of another format.
"""

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from functools import partial
from typing import Any

from service.otlp.shapes import JAEGER, LANGFUSE, SDK_SPAN, SDK_SPANS, TRACE_OBJECT, describe
from service.traces.spans import DecodedSpans, Span, SpanEvent, SpanRejected, build_span

_ISO = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)?")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
NANOS_PER_MICRO = 1000
_STATUS_TAGS = ("otel.status_code", "otel.status_description", "error")


def spans_of(document: Any) -> DecodedSpans:
    """The spans of a Jaeger export or of SDK spans (`shapes.describe` tells which); others hold none."""
    kind = describe(document)
    if kind == JAEGER:
        return _decoded(_jaeger_spans(document))
    if kind == LANGFUSE:
        trace_id = document["trace"].get("id")
        return _decoded(partial(_langfuse_span, item, trace_id) for item in document["observations"])
    items = {SDK_SPANS: lambda: document, TRACE_OBJECT: lambda: document["spans"], SDK_SPAN: lambda: [document]}
    return _decoded(map(_sdk_span, items[kind]())) if kind in items else DecodedSpans()


def read_document(data: bytes | str) -> Any:
    """A JSON document with its integers exact: any-agent writes 128-bit ids as JSON numbers, which a
    parser reading large integers as floats (orjson) would round."""
    return json.loads(data)


def spans_of_lines(lines: Iterable[bytes]) -> DecodedSpans:
    """SDK spans one per line (JSONL), as span exporters that append to a file write them."""
    decoded = DecodedSpans()
    for line in lines:
        if line.strip():
            decoded.extend(spans_of(read_document(line)))
    return decoded


def _decoded(spans: Iterable[Callable[[], Span]]) -> DecodedSpans:
    """Each span built, the ones that do not fit counted by reason."""
    decoded = DecodedSpans()
    for build in spans:
        try:
            decoded.spans.append(build())
        except SpanRejected as rejection:
            decoded.rejected[str(rejection)] += 1
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            decoded.rejected[f"span does not fit its format ({type(error).__name__}: {error})"] += 1
    return decoded


# --- Jaeger ----------------------------------------------------------------------------------------


def _jaeger_spans(document: Mapping[str, Any]) -> Iterable[Callable[[], Span]]:
    for trace in document["data"]:
        processes = trace.get("processes") or {}
        for span in trace.get("spans") or ():
            yield partial(_jaeger_span, span, processes)


def _jaeger_span(span: Mapping[str, Any], processes: Mapping[str, Any]) -> Span:
    tags = _jaeger_fields(span.get("tags"))
    process = processes.get(str(span.get("processID"))) or {}
    resource = {"service.name": process.get("serviceName"), **_jaeger_fields(process.get("tags"))}
    parent = next((ref["spanID"] for ref in span.get("references") or () if ref.get("refType") == "CHILD_OF"), None)
    start = int(span["startTime"]) * NANOS_PER_MICRO
    return build_span(
        trace_id=_hex_id(span["traceID"], 16),
        span_id=_hex_id(span["spanID"], 8),
        parent_span_id=_hex_id(parent or span.get("parentSpanID") or "", 8),
        name=str(span.get("operationName") or ""),
        start_unix_nano=start,
        end_unix_nano=start + int(span.get("duration") or 0) * NANOS_PER_MICRO,
        status_error=tags.get("otel.status_code") == "ERROR" or tags.get("error") in (True, "true"),
        status_message=str(tags.get("otel.status_description") or ""),
        attributes={key: value for key, value in tags.items() if key not in _STATUS_TAGS},
        resource_attributes={key: value for key, value in resource.items() if value is not None},
        events=tuple(_jaeger_event(log) for log in span.get("logs") or ()),
    )


def _jaeger_event(log: Mapping[str, Any]) -> SpanEvent:
    fields = _jaeger_fields(log.get("fields"))
    name = fields.pop("event", "")
    return SpanEvent(str(name), fields)


def _jaeger_fields(pairs: Iterable[Mapping[str, Any]] | None) -> dict[str, Any]:
    """Jaeger's `{key, type, value}` list as attributes, each value read by its type."""
    fields: dict[str, Any] = {}
    for pair in pairs or ():
        value, kind = pair.get("value"), pair.get("type")
        if kind == "int64" and isinstance(value, str):
            value = int(value)
        elif kind == "float64" and isinstance(value, str):
            value = float(value)
        elif kind == "bool" and isinstance(value, str):
            value = value.lower() == "true"
        fields[str(pair["key"])] = value
    return fields


def _hex_id(text: str, size: int) -> bytes:
    """A hex id padded to `size` bytes (Jaeger drops leading zeros); "" is b"" (no parent)."""
    if not text:
        return b""
    try:
        return bytes.fromhex(text.removeprefix("0x").rjust(2 * size, "0"))
    except ValueError:
        raise SpanRejected("an id must be hex digits") from None


# --- OTel SDK spans ----------------------------------------------------------------------------------


def _sdk_span(item: Mapping[str, Any]) -> Callable[[], Span]:
    return partial(_read_sdk_span, item)


def _read_sdk_span(item: Mapping[str, Any]) -> Span:
    context = item["context"]
    parent = item.get("parent")
    parent_id = parent.get("span_id") if isinstance(parent, dict) else item.get("parent_id")
    status = item.get("status") or {}
    resource = item.get("resource") or {}
    return build_span(
        trace_id=_sdk_id(context["trace_id"], 16),
        span_id=_sdk_id(context["span_id"], 8),
        parent_span_id=_sdk_id(parent_id, 8),
        name=str(item.get("name") or ""),
        start_unix_nano=_sdk_time(item["start_time"]),
        end_unix_nano=_sdk_time(item.get("end_time") or item["start_time"]),
        status_error=str(status.get("status_code", "")).upper().endswith("ERROR"),
        status_message=str(status.get("description") or ""),
        attributes=dict(item.get("attributes") or {}),
        resource_attributes=dict(resource.get("attributes") or {}),
        events=tuple(
            SpanEvent(str(e.get("name") or ""), dict(e.get("attributes") or {})) for e in item.get("events") or ()
        ),
    )


def _sdk_id(value: Any, size: int) -> bytes:
    """An id written as `0x` hex text (to_json), hex, or a decimal integer (any-agent); None is b""."""
    if value is None or value == "":
        return b""
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value < 1 << (8 * size):
            raise SpanRejected(f"an id must fit {size} bytes")
        return value.to_bytes(size, "big")
    if isinstance(value, str):
        return _hex_id(value, size)
    raise SpanRejected("an id must be hex text or an integer")


def _sdk_time(value: Any) -> int:
    """Unix nanoseconds from an integer, or from ISO 8601 text read exactly (up to nanoseconds)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    match = _ISO.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise SpanRejected("a time must be unix nanoseconds or ISO 8601")
    whole, fraction, zone = match.groups()
    since_epoch = datetime.fromisoformat(whole + (zone or "Z").replace("Z", "+00:00")) - _EPOCH
    seconds = since_epoch.days * 86_400 + since_epoch.seconds  # whole seconds: the fraction is read apart
    return seconds * 1_000_000_000 + int((fraction or "0").ljust(9, "0"))


# --- Langfuse ----------------------------------------------------------------------------------------


def _langfuse_span(observation: Mapping[str, Any], trace_id: Any) -> Span:
    metadata = observation.get("metadata")
    if isinstance(metadata, str):  # the API writes it as JSON text, the UI's download as an object
        try:
            metadata = json.loads(metadata)
        except ValueError:
            metadata = None
    metadata = metadata if isinstance(metadata, dict) else {}
    attributes, resource = metadata.get("attributes"), metadata.get("resourceAttributes")
    start = observation["startTime"]
    return build_span(
        trace_id=_langfuse_id(observation.get("traceId") or trace_id, 16),
        span_id=_langfuse_id(observation["id"], 8),
        parent_span_id=_langfuse_id(observation.get("parentObservationId"), 8),
        name=str(observation.get("name") or ""),
        start_unix_nano=_sdk_time(start),
        end_unix_nano=_sdk_time(observation.get("endTime") or start),
        status_error=observation.get("level") == "ERROR",
        status_message=str(observation.get("statusMessage") or ""),
        attributes=dict(attributes) if isinstance(attributes, dict) else {},
        resource_attributes=dict(resource) if isinstance(resource, dict) else {},
        events=(),
    )


def _langfuse_id(value: Any, size: int) -> bytes:
    """Hex of `size` bytes as it is (a UUID's dashes dropped); any other text the first `size` bytes of
    its sha256; None or "" is b"" (no parent)."""
    if value is None or value == "":
        return b""
    text = str(value)
    plain = text.replace("-", "")
    if len(plain) == 2 * size:
        try:
            return bytes.fromhex(plain)
        except ValueError:
            pass
    return hashlib.sha256(text.encode()).digest()[:size]
