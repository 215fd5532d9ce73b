"""The run id of a trace does not depend on how an exporter batched its spans (SPEC §3.4), and a run
settles `trace_settle_seconds` after its last span, not at the sweeper's pace.

The real SDK's BatchSpanProcessor sends a trace's children in one export and its root, the only span
naming the conversation, in a later one (as a 5 s schedule delay does to any agent run longer than
that): the run is the conversation's, never the trace's."""

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer

from service.api.app import create_app
from service.deadlines import Deadlines
from service.settings import Settings
from service.store.client import Store
from service.testing.live import serve_in_thread, wait_until
from tests.traces_support import otlp_json

PROTOBUF = {"content-type": "application/x-protobuf"}


@pytest.fixture(scope="module")
def settling_url(embedded_store: Store, data_dir) -> Iterator[str]:
    """A server whose runs settle after 0.3 s and whose sweeper never comes round in a test's time: a
    run finalized here was finalized by the settle timer."""
    quick = Settings(data_dir=data_dir, trace_settle_seconds=0.3, session_sweep_seconds=3600)
    with serve_in_thread(create_app(quick, store=embedded_store)) as url:
        yield url


def agent_run(tracer: Tracer, conversation: str, provider: TracerProvider | None = None) -> str:
    """An agent turn: two model calls and a tool call under a root that names the conversation. With a
    provider, the children are flushed (exported) before the root ends. Returns the trace id."""
    root = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "Booker",
        "gen_ai.conversation.id": conversation,
    }
    with tracer.start_as_current_span("invoke_agent Booker", attributes=root) as span:
        for model_call in range(2):
            usage = {
                "gen_ai.operation.name": "chat",
                "gen_ai.usage.input_tokens": 100 + model_call,
                "gen_ai.usage.output_tokens": 7,
            }
            tracer.start_span("chat", attributes=usage).end()
        tool = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "book",
            "gen_ai.tool.call.arguments": '{"seat": "4A"}',
        }
        tracer.start_span("execute_tool book", attributes=tool).end()
        if provider is not None:
            provider.force_flush()  # the schedule delay passing while the agent still runs
        return format(span.get_span_context().trace_id, "032x")


def test_a_batch_span_processor_run_is_the_conversations(settling_url: str, make_client, tenant: str) -> None:
    client = make_client(tenant)
    provider = TracerProvider(resource=Resource.create({"service.name": "booking"}))
    exporter = OTLPSpanExporter(
        endpoint=f"{settling_url}/v1/traces", headers={"Authorization": client.headers["Authorization"]}
    )
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=50))
    conversation = f"conv-{uuid.uuid4().hex}"
    trace_id = agent_run(provider.get_tracer("booking.agent"), conversation, provider)
    provider.shutdown()  # exports the root

    run_url = f"{settling_url}/v1/runs/{conversation}"
    # Readable at once, open (SPEC §3.4), then finalized once it settles.
    assert wait_until(lambda: client.get(run_url).json().get("status") == "finalized", attempts=600, interval=0.1)
    run = client.get(run_url).json()
    assert (run["status"], run["identity"], run["tool_calls"], run["total_tokens"]) == ("finalized", "Booker", 1, 215)
    assert client.get(f"{settling_url}/v1/runs/{trace_id}").status_code == 404
    assert [r["run_id"] for r in client.get(f"{settling_url}/v1/runs").json()["runs"]] == [conversation]


def _recorded(conversation: str) -> tuple[ReadableSpan, ...]:
    finished = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "booking"}))
    provider.add_span_processor(SimpleSpanProcessor(finished))
    agent_run(provider.get_tracer("booking.agent"), conversation)
    provider.shutdown()
    return finished.get_finished_spans()


@settings(max_examples=8, suppress_health_check=list(HealthCheck))
@given(order=st.permutations(range(4)), cuts=st.sets(st.integers(1, 3)), protobuf=st.booleans())
def test_any_batching_gives_the_same_run(make_client, order: list[int], cuts: set[int], protobuf: bool) -> None:
    client = make_client(f"t_{uuid.uuid4().hex[:12]}")
    conversation = f"conv-{uuid.uuid4().hex}"
    recorded = _recorded(conversation)
    spans = [recorded[index] for index in order]
    bounds = [0, *sorted(cuts), len(spans)]
    for start, end in pairwise(bounds):
        batch = encode_spans(spans[start:end])
        body, headers = (batch.SerializeToString(), PROTOBUF) if protobuf else (orjson.dumps(otlp_json(batch)), {})
        assert (
            client.post("/v1/traces", content=body, headers={"content-type": "application/json", **headers}).status_code
            == 200
        )
    run = client.post(f"/v1/runs/{conversation}/finalize").json()
    assert (run["run_id"], run["event_count"], run["total_tokens"]) == (conversation, 5, 215)  # agent, 2 chats, tool x2
    assert client.get(f"/v1/runs/{format(spans[0].context.trace_id, '032x')}").status_code == 404


# --- the deadlines behind the settle timer --------------------------------------------------------------


def test_a_key_is_called_once_its_latest_deadline_has_passed() -> None:
    calls: list[tuple[str, int]] = []
    again = {"b": 1}

    def due(key: str, now: datetime) -> datetime | None:
        calls.append((key, len(calls)))
        if again.get(key):
            again[key] -= 1
            return now  # look again at once
        return None

    deadlines: Deadlines[str] = Deadlines("test", due, resolution=0.01).start()
    try:
        now = datetime.now(UTC)
        deadlines.at("a", now + timedelta(hours=1))
        deadlines.at("a", now)  # moved earlier: the later entry is dropped
        deadlines.at("b", now)
        deadlines.at("c", now + timedelta(hours=1))
        assert wait_until(lambda: len(calls) == 3 and deadlines.pending() == 1, interval=0.01)
        assert sorted(key for key, _ in calls) == ["a", "b", "b"] and deadlines.pending() == 1  # c waits
    finally:
        deadlines.stop()


def test_a_failing_call_is_dropped_and_the_others_go_on() -> None:
    called: list[str] = []

    def due(key: str, now: datetime) -> datetime | None:
        called.append(key)
        if key == "bad":
            raise RuntimeError("store down")
        return None

    deadlines: Deadlines[str] = Deadlines("test", due, resolution=0.01).start()
    try:
        deadlines.at("bad", datetime.now(UTC))
        deadlines.at("good", datetime.now(UTC) + timedelta(milliseconds=20))
        assert wait_until(lambda: called == ["bad", "good"], interval=0.01)
        assert deadlines.pending() == 0
    finally:
        deadlines.stop()
