"""Real telemetry recorded by other projects (tests/data/real, sources in its SOURCES.md), mapped as
SPEC §3.4 says, checked against the facts read from each file by a reader that is not Repute's
(tests/data/real/facts.json): spans, runs, tool calls with their arguments, each LLM request's tokens
counted once, errors (and handled exceptions that are none), and the times the spans cover."""

from pathlib import Path
from typing import Any

import orjson
import pytest

from service.traces import DecodedSpans, Span, decode_json_traces, group_runs, map_run
from service.traces.formats import read_document, spans_of, spans_of_lines

REAL = Path(__file__).parent / "data" / "real"
FACTS: dict[str, dict[str, Any]] = orjson.loads((REAL / "facts.json").read_bytes())["files"]


def real_spans(name: str) -> DecodedSpans:
    """A recorded file's spans, read by its format: OTLP/JSON (Tempo's pre-1.0 names included), a Jaeger
    export, SDK spans (a list, an object holding one, or one per line)."""
    data = (REAL / name).read_bytes()
    if name.endswith(".jsonl"):
        return spans_of_lines(data.splitlines())
    document = read_document(data)
    if "resourceSpans" in document or "batches" in document:
        return decode_json_traces(data)
    return spans_of(document)


def the_run(name: str) -> tuple[str, list[Span]]:
    (run,) = group_runs(real_spans(name).spans).items()
    return run


FILES = sorted(FACTS)


def test_the_real_data_is_what_sources_md_lists() -> None:
    listed = (REAL / "SOURCES.md").read_text()
    files = sorted(path.name for path in REAL.iterdir() if path.name not in ("SOURCES.md", "facts.json"))
    assert files == FILES and all(f"`{name}`" in listed for name in files)
    assert len({name.split("__")[0] for name in files}) >= 3 and len(files) >= 8


@pytest.mark.parametrize("name", FILES)
def test_every_span_is_read(name: str) -> None:
    decoded = real_spans(name)
    assert (len(decoded.spans), decoded.rejected_count) == (FACTS[name]["spans"], 0)
    assert sorted({span.trace_id for span in decoded.spans}) == sorted(FACTS[name]["traces"])


@pytest.mark.parametrize("name", FILES)
def test_one_run_under_the_conversation_id_else_the_trace_id(name: str) -> None:
    facts = FACTS[name]
    conversations = [conversation["value"] for conversation in facts["conversation_ids"]]
    run_id, _ = the_run(name)
    assert run_id == (conversations[0] if conversations else facts["traces"][0])


def _arguments(call: dict[str, Any]) -> dict[str, Any]:
    """The arguments the file holds when they are JSON text (SPEC §3.4 reads only JSON objects: LangChain's
    Python-literal arguments are unknown ones, which never match), as the file writes them; a wrapper of
    positional and keyword arguments (smolagents' `{"args": [], "sanitize_inputs_outputs", "kwargs"}`) is
    its `kwargs`."""
    if call["arguments_encoding"] != "json":
        return {"span": call["span_id"]}
    arguments = orjson.loads(call["arguments_raw"])
    wrapper = arguments.get("args") == [] and set(arguments) <= {"args", "kwargs", "sanitize_inputs_outputs"}
    return arguments["kwargs"] if wrapper and isinstance(arguments.get("kwargs"), dict) else arguments


def _error_name(error: dict[str, Any]) -> str:
    """error.type, else the exception's type, else http_<status>, else "error" (SPEC §3.4 "Errors")."""
    return error["error_type"] or (f"http_{error['http_status_code']}" if error["http_status_code"] else "error")


@pytest.mark.parametrize("name", FILES)
def test_tool_calls_with_their_arguments(name: str) -> None:
    run_id, spans = the_run(name)
    events = map_run(run_id, spans).events
    calls = [(e["span_id"], e["tool"], e["args"]) for e in events if e["event"] == "tool_call"]
    outputs = [(e["span_id"], e["status"]) for e in events if e["event"] == "tool_output"]
    assert calls == [(call["span_id"], call["tool_name"], _arguments(call)) for call in FACTS[name]["tool_calls"]]
    assert outputs == [(call["span_id"], "error" if call["is_error"] else "ok") for call in FACTS[name]["tool_calls"]]


@pytest.mark.parametrize("name", FILES)
def test_each_llm_request_counts_once(name: str) -> None:
    run_id, spans = the_run(name)
    usage = [e for e in map_run(run_id, spans).events if e["event"] == "token_usage"]
    requests = FACTS[name]["llm_requests"]
    assert [(e["span_id"], e["total_tokens"]) for e in usage] == [(r["span_id"], r["total"]) for r in requests]
    assert sum(e["total_tokens"] for e in usage) == FACTS[name]["total_tokens"]


@pytest.mark.parametrize("name", FILES)
def test_errors_are_the_failed_spans_and_handled_exceptions_are_none(name: str) -> None:
    run_id, spans = the_run(name)
    errors = [(e["span_id"], e["error"]) for e in map_run(run_id, spans).events if e["event"] == "error_event"]
    assert sorted(errors) == sorted((error["span_id"], _error_name(error)) for error in FACTS[name]["error_spans"])
    handled = {span["span_id"] for span in FACTS[name]["handled_exception_spans"]}
    assert handled.isdisjoint(span_id for span_id, _ in errors)


@pytest.mark.parametrize("name", FILES)
def test_the_run_covers_its_spans_to_the_nanosecond(name: str) -> None:
    run_id, spans = the_run(name)
    run = map_run(run_id, spans)
    assert (str(run.started_unix_nano), str(run.ended_unix_nano)) == (
        FACTS[name]["started_at_ns"],
        FACTS[name]["ended_at_ns"],
    )
