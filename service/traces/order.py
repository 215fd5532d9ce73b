"""The order spans are read in (SPEC §3.4), whatever order they arrived in."""

from collections.abc import Iterable

from service.traces.spans import Span, span_content_id


def span_order(span: Span) -> tuple[int, int, str, str]:
    """Start time; ties: end time, then span id (then trace id, for spans of several traces)."""
    return span.start_unix_nano, span.end_unix_nano, span.span_id, span.trace_id


SpanKey = tuple[str, str]


def span_key(span: Span) -> SpanKey:
    return span.trace_id, span.span_id


def kept_copies(spans: Iterable[Span]) -> dict[SpanKey, Span]:
    """One span per (trace id, span id). Resends and JSON/protobuf twins are one span; should two
    copies differ, the one with the smaller content id is kept, so the choice does not depend on
    arrival order."""
    kept: dict[SpanKey, Span] = {}
    for span in spans:
        key = span_key(span)
        other = kept.get(key)
        if other is None or (other != span and span_content_id(span) < span_content_id(other)):
            kept[key] = span
    return kept


def in_run_order(spans: Iterable[Span]) -> list[Span]:
    """The run's spans, one per (trace id, span id) (`kept_copies`), in `span_order`."""
    return sorted(kept_copies(spans).values(), key=span_order)


def roots_first(ordered: Iterable[Span]) -> list[Span]:
    """The root spans, then the others, each part keeping its order."""
    spans = list(ordered)
    return [span for span in spans if span.is_root] + [span for span in spans if not span.is_root]
