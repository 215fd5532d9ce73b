"""Promises of the trace readers that the other tests left unguarded (issue #37), each written against a
mutant applied by hand: a Jaeger span flagged an error by its `error` tag alone, an SDK span's lowercase
status code, a trace's stored conversation kept when more of its spans arrive, and a stored trace's
conversation taken from its root span before any other (sql/trace_runs.sql)."""

import hashlib
import uuid

import httpx
import orjson

from service.store import traces as trace_store
from service.store.client import Store
from service.traces.formats import spans_of
from service.traces.spans import SpanEvent
from tests.traces_support import T0, otlp_json, proto_span, request_of

JSON = {"content-type": "application/json"}


def _jaeger(tags: list[dict]) -> dict:
    span = {"traceID": "ab" * 16, "spanID": "cd" * 8, "operationName": "call", "startTime": 1_700_000_000_000_000,
            "duration": 1000, "tags": tags, "processID": "p1"}  # fmt: skip
    return {"data": [{"traceID": "ab" * 16, "spans": [span], "processes": {"p1": {"serviceName": "svc"}}}]}


def test_a_jaeger_span_is_an_error_by_its_error_tag_alone() -> None:
    """Broken on purpose: `tags.get("error") in (True, "true")` → `tags.get("error") is True` (a tag sent as
    text no longer counts), or the `or tags.get("error")...` dropped → this test fails."""
    for tag in ({"key": "error", "type": "bool", "value": True}, {"key": "error", "type": "string", "value": "true"}):
        (span,) = spans_of(_jaeger([tag])).spans
        assert span.status_error and "error" not in span.attributes
    (plain,) = spans_of(_jaeger([{"key": "error", "type": "bool", "value": False}])).spans
    assert not plain.status_error


def _sdk(status_code: str) -> dict:
    return {"name": "call", "context": {"trace_id": "0x" + "ab" * 16, "span_id": "0x" + "cd" * 8},
            "start_time": "2023-11-14T22:13:20.000000Z", "end_time": "2023-11-14T22:13:21.000000Z",
            "status": {"status_code": status_code, "description": "boom"}, "attributes": {}}  # fmt: skip


def test_an_sdk_spans_status_code_is_read_in_any_case() -> None:
    """any-agent writes `error` in lowercase, `to_json()` writes `StatusCode.ERROR`. Broken on purpose:
    `.upper()` dropped from `_read_sdk_span`'s status → this test fails."""
    for code in ("error", "ERROR", "StatusCode.ERROR"):
        (span,) = spans_of([_sdk(code)]).spans
        assert (span.status_error, span.status_message) == (True, "boom"), code
    for code in ("ok", "UNSET", "StatusCode.OK"):
        (span,) = spans_of([_sdk(code)]).spans
        assert not span.status_error, code


def _post(client: httpx.Client, *spans) -> None:
    posted = client.post("/v1/traces", content=orjson.dumps(otlp_json(request_of(*spans))), headers=JSON)
    assert posted.status_code == 200, posted.text


def test_a_traces_stored_conversation_holds_when_more_of_its_spans_arrive(client: httpx.Client) -> None:
    """The root names the conversation in a first export; its child, naming none, comes in a second: the
    child joins the conversation's run, never a run of the trace id (SPEC §3.4), and once that run is
    finalized a late span of the trace is refused as the run's. Broken on purpose: `_run_of` leaving out the
    stored conversation (`if stored is not None and ...` → `if False and ...`: the late span is taken as a
    new run of the trace id's) → this test fails."""
    trace_id, conversation = uuid.uuid4().bytes, f"conv-{uuid.uuid4().hex}"
    root = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "solver",
        "gen_ai.conversation.id": conversation,
    }
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}
    _post(client, proto_span(1, trace_id=trace_id, name="invoke_agent solver", attributes=root))
    _post(client, proto_span(2, trace_id=trace_id, parent=1, start=T0 + 1000, attributes=tool))
    run = client.post(f"/v1/runs/{conversation}/finalize").json()
    assert run["tool_calls"] == 1, run
    late = proto_span(3, trace_id=trace_id, parent=1, start=T0 + 2000, attributes=tool)
    answer = client.post("/v1/traces", content=orjson.dumps(otlp_json(request_of(late))), headers=JSON).json()
    assert answer["partialSuccess"]["rejectedSpans"] == "1", answer
    assert f"run {conversation} is finalized" in answer["partialSuccess"]["errorMessage"]


def test_a_stored_traces_conversation_is_its_root_spans_before_an_earlier_spans(
    client: httpx.Client, embedded_store: Store, tenant: str
) -> None:
    """Stored in one export, an earlier child naming one conversation and the root naming another: the
    store ranks the root's first (sql/trace_runs.sql). Broken on purpose: `tuple(NOT is_root, ...)` →
    `tuple(is_root, ...)` in trace_runs.sql → this test fails."""
    trace_id = uuid.uuid4().bytes
    child = {"gen_ai.operation.name": "chat", "gen_ai.conversation.id": "conv-child"}
    root = {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "conv-root"}
    _post(
        client,
        proto_span(2, trace_id=trace_id, parent=1, start=T0, attributes=child),
        proto_span(1, trace_id=trace_id, start=T0 + 5000, attributes=root),
    )
    (stored,) = trace_store.stored_traces(embedded_store, tenant, [trace_id.hex()])
    assert (stored.conversation, stored.run_id) == ("conv-root", "conv-root")


def test_jaeger_ids_without_their_leading_zeros_are_padded_to_their_size() -> None:
    """Jaeger drops an id's leading zeros; the parent is the CHILD_OF reference, else `parentSpanID`. Broken
    on purpose: `_hex_id(span["traceID"], 16)` → 15, the span's or its parent's `_hex_id(..., 8)` → 7, or
    `span.get("parentSpanID") or ""` → `and ""` → this test fails."""
    document = _jaeger([])
    span = document["data"][0]["spans"][0]
    span.update(traceID="abc", spanID="de", references=[{"refType": "CHILD_OF", "traceID": "abc", "spanID": "f"}])
    (read,) = spans_of(document).spans
    assert (read.trace_id, read.span_id, read.parent_span_id) == ("0" * 29 + "abc", "0" * 14 + "de", "0" * 15 + "f")
    del span["references"]
    span["parentSpanID"] = "ef" * 8
    (read,) = spans_of(document).spans
    assert read.parent_span_id == "ef" * 8


def test_an_sdk_spans_integer_id_must_fit_its_bytes_and_each_misfit_counts_once() -> None:
    """any-agent writes ids as decimal integers: from 1 to 2**64 - 1 for a span id (0 is refused as all
    zero, as in OTLP; a negative one as out of range). Broken on purpose: `value < 1 << (8 * size)` → `<=`
    (an id of 2**64 read as 9 bytes), `0 <= value` → `0 < value` (0 refused for its range) or `-1 <= value`
    (-1 fails the whole file), or `rejected[...] += 1` → `+= 2` in `_decoded` → this test fails."""

    def with_span_id(value: int) -> dict:
        return {**_sdk("ok"), "context": {"trace_id": 1, "span_id": value}}

    (largest,) = spans_of([with_span_id(2**64 - 1)]).spans
    assert largest.span_id == "ff" * 8
    too_large = spans_of([with_span_id(2**64), with_span_id(7)])
    assert len(too_large.spans) == 1 and too_large.rejected_count == 1
    assert "an id must fit 8 bytes" in too_large.rejection_message()
    for value, reason in ((0, "spanId must be 8 bytes, not all zero"), (-1, "an id must fit 8 bytes")):
        refused = spans_of([with_span_id(value)])
        assert (refused.spans, refused.rejection_message()) == ([], f"1 spans: {reason}"), value


def _langfuse_id(text: str, size: int) -> str:
    return hashlib.sha256(text.encode()).digest()[:size].hex()


def test_a_langfuse_export_is_read_as_the_spans_it_holds() -> None:
    """SPEC §3.4: each observation a span; ids that are hex of a span's size (a UUID's dashes dropped) as
    they are, others the first bytes of their sha256, for an id and every reference to it; metadata as an
    object or as JSON text (text that is no JSON: no attributes, the span kept); level ERROR an error with
    its message; no end time: the span ends as it starts. Broken on purpose: in `_langfuse_span`, `not`
    added to either `isinstance(..., dict)` of the attributes or the resource, or to `isinstance(metadata,
    str)`, `except ValueError` narrowed, the trace's id or a name taken with `and` for `or`, `level ==
    "ERROR"` → `!=`; in `_langfuse_id`, `value is None` → `is not None`, `len(plain) == 2 * size` → `!=`,
    its `except ValueError` narrowed (a span-sized id that is no hex) → this test fails."""
    trace = "0123abcd-4567-89ab-cdef-0123456789ab"
    root = {"id": "obs-root", "name": "agent", "startTime": "2023-11-14T22:13:20.5Z",
            "endTime": "2023-11-14T22:13:21Z", "level": "ERROR", "statusMessage": "boom",
            "metadata": {"attributes": {"gen_ai.operation.name": "invoke_agent"},
                         "resourceAttributes": {"service.name": "svc"}}}  # fmt: skip
    child = {"id": "ab" * 8, "traceId": trace, "parentObservationId": "obs-root", "name": "search",
             "startTime": "2023-11-14T22:13:20.6Z", "level": "DEFAULT",
             "metadata": orjson.dumps({"attributes": {"tokens": "12"}}).decode()}  # fmt: skip
    odd = {"id": "z" * 16, "parentObservationId": "", "startTime": "2023-11-14T22:13:20.7Z", "metadata": "{not json"}
    decoded = spans_of({"trace": {"id": trace}, "observations": [root, child, odd]})
    assert decoded.rejected_count == 0, decoded.rejection_message()
    first, second, third = decoded.spans
    assert {span.trace_id for span in decoded.spans} == {trace.replace("-", "")}
    assert (first.span_id, first.parent_span_id, first.name) == (_langfuse_id("obs-root", 8), None, "agent")
    assert (first.status_error, first.status_message) == (True, "boom")
    assert first.end_unix_nano - first.start_unix_nano == 500_000_000
    assert (first.attributes, first.resource_attributes) == (
        {"gen_ai.operation.name": "invoke_agent"},
        {"service.name": "svc"},
    )
    assert (second.span_id, second.parent_span_id, second.name) == ("ab" * 8, first.span_id, "search")
    assert (second.status_error, second.end_unix_nano, second.attributes) == (
        False,
        second.start_unix_nano,
        {"tokens": "12"},
    )
    assert (third.span_id, third.parent_span_id, third.attributes) == (_langfuse_id("z" * 16, 8), None, {})


def test_an_id_that_is_no_hex_is_refused_by_name() -> None:
    """Broken on purpose: `_hex_id`'s `except ValueError` narrowed (the misfit then counted as a span that
    does not fit its format, not by its reason) → this test fails."""
    document = _jaeger([])
    document["data"][0]["spans"][0]["spanID"] = "not hex"
    decoded = spans_of(document)
    assert (decoded.spans, decoded.rejection_message()) == ([], "1 spans: an id must be hex digits")


def test_a_jaeger_span_is_read_whole() -> None:
    """SPEC §3.4: the status description is the span's status message, tags typed as text are read by
    their type, the process is the resource, a span without duration ends as it starts. Broken on purpose:
    in `_jaeger_span`, `tags.get("otel.status_description") or ""` or `span.get("operationName") or ""` →
    `and ""`, or a span without duration given one (`or 0` → `or ±1`) → this test fails."""
    tags = [{"key": "otel.status_code", "type": "string", "value": "ERROR"},
            {"key": "otel.status_description", "type": "string", "value": "tool crashed"},
            {"key": "retries", "type": "int64", "value": "3"},
            {"key": "cached", "type": "bool", "value": "true"}]  # fmt: skip
    document = _jaeger(tags)
    del document["data"][0]["spans"][0]["duration"]
    (span,) = spans_of(document).spans
    assert span.end_unix_nano == span.start_unix_nano
    assert (span.name, span.status_error, span.status_message) == ("call", True, "tool crashed")
    assert span.attributes == {"retries": 3, "cached": True}
    assert span.resource_attributes == {"service.name": "svc"}


def test_each_span_that_does_not_fit_its_format_is_counted_by_reason_and_the_rest_read() -> None:
    """A missing field, a field of the wrong type, a value that is no number and a tag that is no object
    each refuse their span alone. Broken on purpose: `_decoded`'s `except (KeyError, TypeError,
    ValueError, AttributeError)` without any one of them (that misfit then fails the whole file) → this
    test fails."""
    good = _jaeger([])["data"][0]["spans"][0]
    misfits = [{key: value for key, value in good.items() if key != "startTime"}, {**good, "startTime": None},
               {**good, "startTime": "soon"}, {**good, "tags": ["retries=3"]}]  # fmt: skip
    document = _jaeger([])
    document["data"][0]["spans"] += misfits
    decoded = spans_of(document)
    assert [span.span_id for span in decoded.spans] == ["cd" * 8]
    assert decoded.rejected_count == 4
    reasons = " ".join(decoded.rejected)
    assert all(f"({name}:" in reasons for name in ("KeyError", "TypeError", "ValueError", "AttributeError")), reasons


def test_an_sdk_span_is_read_whole() -> None:
    """Its name, its parent, its events, and times with a zone's offset or none (UTC). Broken on purpose:
    `_read_sdk_span`'s `item.get("name") or ""` → `and ""`, or `_sdk_time`'s `zone or "Z"` → `and` (an
    offset ignored, a time without zone refused) → this test fails."""
    event = {"name": "exception", "attributes": {"exception.type": "Timeout"}}
    item = {**_sdk("ok"), "name": "search", "parent_id": "0x" + "ef" * 8, "events": [event],
            "start_time": "2023-11-14T23:13:20.25+01:00", "end_time": "2023-11-14T22:13:21"}  # fmt: skip
    decoded = spans_of([item])
    assert decoded.rejected_count == 0, decoded.rejection_message()
    (span,) = decoded.spans
    assert (span.name, span.parent_span_id) == ("search", "ef" * 8)
    assert span.events == (SpanEvent("exception", {"exception.type": "Timeout"}),)
    assert (span.start_unix_nano, span.end_unix_nano) == (1_700_000_000_250_000_000, 1_700_000_001_000_000_000)
