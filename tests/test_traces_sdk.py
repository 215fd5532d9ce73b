"""End to end: a toy agent instrumented with the real OpenTelemetry SDK, exported as the OTLP exporter
encodes it, decoded, grouped, mapped and diagnosed."""

import gzip
import json

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode, Tracer

from service.diagnosis import diagnose
from service.outcome import ExecutionStatus, classify_execution
from service.traces import (
    decode_json_traces,
    decode_protobuf_traces,
    decode_traces_body,
    group_runs,
    map_run,
    root_arrived,
)
from tests.traces_support import FAILED_SEARCHES, SEARCHES, TOKENS_PER_CHAT, otlp_json, recording_tracer, run_toy_agent

exporter = pytest.fixture(name="exporter")(recording_tracer)


def exported(spans: tuple[ReadableSpan, ...] | list[ReadableSpan]) -> bytes:
    """The protobuf body the OTLP/HTTP exporter would send."""
    return encode_spans(spans).SerializeToString()


def test_a_looping_agent_is_diagnosed_from_its_traces(exporter: tuple[Tracer, InMemorySpanExporter]) -> None:
    tracer, finished = exporter
    run_toy_agent(tracer)
    spans = finished.get_finished_spans()
    # Children end, and are exported, before their root: two requests, the root in the second.
    first, second = exported(spans[:4]), exported(spans[4:])
    decoded = decode_protobuf_traces(first)
    assert not root_arrived(decoded.spans)
    decoded.extend(decode_traces_body(gzip.compress(second), protobuf=True, gzipped=True, max_bytes=1 << 20))
    assert decoded.rejected_count == 0 and len(decoded.spans) == 1 + 2 * SEARCHES
    json_twin = decode_json_traces(json.dumps(otlp_json(encode_spans(spans))))
    assert sorted(json_twin.spans, key=lambda s: s.span_id) == sorted(decoded.spans, key=lambda s: s.span_id)

    (run_id, run_spans), *others = group_runs(decoded.spans + json_twin.spans).items()  # twins collapse
    assert not others and root_arrived(run_spans)
    trace_id = format(spans[0].context.trace_id, "032x")
    run = map_run(run_id, run_spans)
    assert (run.run_id, run.identity, run.execution) == (trace_id, "agent-42", None)

    diagnosis = diagnose(run.events)
    loop = next(cause for cause in diagnosis.causes if cause.type == "infinite_tool_loop")
    assert loop.description == f"Tool call repeated {SEARCHES} times with matching arguments."
    assert (loop.severity, loop.impact_score) == ("critical", -min(30, 8 + 4 * SEARCHES))
    tool_span_ids = [format(s.context.span_id, "016x") for s in spans if s.name == "execute_tool search"]
    assert list(loop.evidence) == tool_span_ids
    summary = diagnosis.evidence_summary
    assert summary["tool_calls"] == summary["tool_outputs"] == SEARCHES
    assert summary["state_transitions"] == 1
    # A timed-out search is an ERROR span with an `exception` event: exactly one error_event (SPEC §3.4).
    assert summary["errors"] == FAILED_SEARCHES
    assert diagnosis.cost_analysis["total_tokens"] == SEARCHES * TOKENS_PER_CHAT
    failed_outputs = [e for e in run.events if e["event"] == "tool_output" and e["status"] == "error"]
    assert len(failed_outputs) == FAILED_SEARCHES


def test_a_provider_failure_inside_a_stage_is_an_execution_error(
    exporter: tuple[Tracer, InMemorySpanExporter],
) -> None:
    tracer, finished = exporter
    harness = {"repute.stage": "agent", "repute.suite": "travel", "repute.task_id": "lisbon", "repute.trial": 2}
    with (
        tracer.start_as_current_span("harness agent stage", attributes=harness),
        tracer.start_as_current_span("chat gpt-4o", attributes={"gen_ai.operation.name": "chat"}) as chat,
    ):
        chat.set_attribute("error.type", "provider_error")
        chat.set_status(Status(StatusCode.ERROR, "upstream 503"))
    run = map_run("run-1", decode_protobuf_traces(exported(finished.get_finished_spans())).spans)
    assert (run.suite, run.task_id, run.trial) == ("travel", "lisbon", 2)
    assert run.execution == {
        "status": "execution_error",
        "stage": "agent",
        "reason": "provider_error",
        "message": "upstream 503",
    }
    diagnosis = diagnose(run.events)
    outcome = classify_execution(
        run.execution, run.events, diagnosis.trust_score, readiness=diagnosis.to_dict()["readiness_level"]
    )
    assert (outcome.status, outcome.stage, outcome.reason_code) == (
        ExecutionStatus.EXECUTION_ERROR,
        "agent",
        "provider_error",
    )
