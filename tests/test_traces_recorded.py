"""Real instrumentations recorded here (tests/data/recorded, made by scripts/record_traces: one support-desk
application, a triage agent handing a refund to a billing agent, on ten framework/instrumentation pairs).

Each file's runs, child runs, identities, tool calls with their arguments, model calls, tokens and errors
are what a small reader written for the tests (tests/recorded_traces.py) reads in the file under SPEC §3.4
and §3.5; the reader itself is checked against what the fake model served (recordings.json). The service
must give the same, by its mapping, through `repute ingest` and through POST /v1/traces alike."""

import json
import uuid
from typing import Any

import httpx
import msgspec
import orjson
import pytest
from typer.testing import CliRunner

from service.cli import app as cli
from service.traces import group_runs
from service.traces.agents import map_runs
from service.traces.formats import read_document, spans_of
from service.traces.otlp_json import encode_json_traces
from tests.recorded_traces import (
    APP_TOOLS,
    FILES,
    MANIFEST,
    RECORDED,
    RecordedTrace,
    event_key,
    iso_nanos,
    langfuse_export,
)

# What an instrumentation does not record, as its file shows (the reader reads it so; listed so that the
# checks against what the model served say why they differ).
RECORDS_NO_USAGE = {"openai_agents_openllmetry.json": "its `openai.response` spans carry no token counts"}
ONE_AGENT = {
    "langgraph_openinference.json": "its AGENT spans (`agent`) name no agent: not boundaries (SPEC §3.5)",
    "openai_agents_genai.json": "every agent span says gen_ai.agent.id = `agent`, which names it first",
}
TRACES = {name: RecordedTrace(name) for name in FILES}


def served(name: str) -> list[dict[str, Any]]:
    return MANIFEST[name.removesuffix(".json")]["served"]


def scripted_app_calls(name: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls of the application's own tools the fake model asked for, in order."""
    return [
        (tool, arguments)
        for answer in served(name)
        if answer["kind"] == "tools"
        for tool, arguments in answer["content"]
        if tool in APP_TOOLS
    ]


def app_calls(events: list[tuple[Any, ...]]) -> list[tuple[str, dict[str, Any]]]:
    return [(key[2], json.loads(key[3])) for key in events if key[0] == "tool_call" and key[2] in APP_TOOLS]


def expected_events(trace: RecordedTrace) -> list[tuple[Any, ...]]:
    return [key for run in trace.runs.values() for key in run.events]


def test_the_recordings_are_what_sources_md_lists() -> None:
    listed = (RECORDED / "SOURCES.md").read_text()
    files = sorted(path.name for path in RECORDED.iterdir() if path.name not in ("SOURCES.md", "recordings.json"))
    assert files == FILES and all(f"`{name}`" in listed for name in files)
    assert len(files) >= 8


# --- the reader against what the fake model served -------------------------------------------------------


@pytest.mark.parametrize("name", FILES)
def test_the_reader_finds_the_calls_the_model_asked_for(name: str) -> None:
    """Every recording holds billing's three calls with the model's arguments: a reader that lost a call
    or misread its arguments fails here first."""
    assert scripted_app_calls(name) == [
        ("lookup_order", {"order_id": 42}),
        ("check_policy", {"order_id": 42}),
        ("issue_refund", {"order_id": 42, "amount": 30}),
    ]
    assert app_calls(expected_events(TRACES[name])) == scripted_app_calls(name)


@pytest.mark.parametrize("name", FILES)
def test_the_reader_finds_each_model_call_once_with_its_tokens(name: str) -> None:
    usage = [key for key in expected_events(TRACES[name]) if key[0] == "token_usage"]
    assert len(usage) == len(served(name))
    served_total = sum(answer["usage"]["total_tokens"] for answer in served(name))
    assert sum(key[2] for key in usage) == (0 if name in RECORDS_NO_USAGE else served_total)


@pytest.mark.parametrize("name", FILES)
def test_the_reader_finds_both_agents_and_one_error_per_failed_span(name: str) -> None:
    trace = TRACES[name]
    identities = set(trace.runs)
    assert identities == ({"triage", "billing"} if name not in ONE_AGENT else {trace.root_identity})
    errors = [key[1] for key in expected_events(trace) if key[0] == "error_event"]
    assert sorted(errors) == sorted(trace.error_spans()) and errors
    assert trace.handled_exception_spans() == [] or set(errors).isdisjoint(trace.handled_exception_spans())


def test_the_recordings_hold_handled_exceptions() -> None:
    """check_policy records a caught exception on its span in most instrumentations: none is an error."""
    assert sum(bool(trace.handled_exception_spans()) for trace in TRACES.values()) >= 6


# --- the service's mapping ---------------------------------------------------------------------------


def mapped(name: str) -> dict[str, Any]:
    """The service's runs of a file, by run id: identity, parent, event keys."""
    spans = spans_of(read_document((RECORDED / name).read_bytes())).spans
    ((run_id, run_spans),) = group_runs(spans).items()
    return {
        run.run_id: (run.identity, run.parent_run_id, [event_key(event) for event in run.events])
        for run in map_runs(run_id, run_spans)
    }


def expected(name: str) -> dict[str, Any]:
    trace = TRACES[name]
    run_ids = trace.run_ids()
    root = run_ids[trace.root_identity]
    return {
        run_ids[identity]: (identity, None if identity == trace.root_identity else root, run.events)
        for identity, run in trace.runs.items()
    }


@pytest.mark.parametrize("name", FILES)
def test_the_runs_are_what_the_file_shows(name: str) -> None:
    """Runs, child runs, identities, tool calls with arguments, model calls with tokens and model, state
    transitions and errors, event by event."""
    assert mapped(name) == expected(name)


def test_one_application_gives_the_same_tool_calls_under_every_instrumentation() -> None:
    calls = {name: app_calls([key for _, _, events in mapped(name).values() for key in events]) for name in FILES}
    assert all(found == calls[FILES[0]] for found in calls.values()), calls
    assert len(calls[FILES[0]]) == 3


@pytest.mark.parametrize("name", FILES)
def test_the_runs_cover_their_spans(name: str) -> None:
    spans = spans_of(read_document((RECORDED / name).read_bytes())).spans
    ((run_id, run_spans),) = group_runs(spans).items()
    runs = map_runs(run_id, run_spans)
    trace = TRACES[name]
    assert min(run.started_unix_nano or 0 for run in runs) == min(iso_nanos(span.start) for span in trace.spans)
    assert max(run.ended_unix_nano or 0 for run in runs) == max(iso_nanos(span.end) for span in trace.spans)


# --- through `repute ingest` and POST /v1/traces ------------------------------------------------------


def stored(client: httpx.Client, run_id: str) -> dict[str, Any]:
    """The run and its children as stored: identity, parent, event keys, tokens, tool calls."""
    runs = [client.get(f"/v1/runs/{run_id}").json()]
    runs += [client.get(f"/v1/runs/{child['run_id']}").json() for child in runs[0]["child_runs"]]
    found = {}
    for run in runs:
        events = client.get(f"/v1/runs/{run['run_id']}/events", params={"limit": 10_000}).json()["events"]
        keys = [event_key({"event": event["type"], **event["data"]}) for event in events]
        found[run["run_id"]] = (run["identity"], run["parent_run_id"], keys)
        assert run["status"] == "finalized"
        assert run["total_tokens"] == sum(key[2] for key in keys if key[0] == "token_usage")
        assert run["tool_calls"] == sum(key[0] == "tool_call" for key in keys)
    return found


@pytest.mark.parametrize("name", FILES)
def test_repute_ingest_stores_what_the_file_shows(cli_as, make_client, tenant: str, name: str) -> None:
    cli_as(tenant)
    ingested = CliRunner().invoke(cli, ["ingest", str(RECORDED / name)])
    assert ingested.exit_code == 0, ingested.output
    root = TRACES[name].run_ids()[TRACES[name].root_identity]
    assert stored(make_client(tenant), root) == expected(name)


@pytest.mark.parametrize("name", FILES)
def test_otlp_traces_store_what_the_file_shows(make_client, name: str) -> None:
    client = make_client(f"t-{uuid.uuid4().hex[:12]}")
    spans = spans_of(read_document((RECORDED / name).read_bytes())).spans
    body = orjson.dumps(encode_json_traces(spans))
    answer = client.post("/v1/traces", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 200, answer.text
    root = TRACES[name].run_ids()[TRACES[name].root_identity]
    assert client.post(f"/v1/runs/{root}/finalize").status_code == 200
    assert stored(client, root) == expected(name)


@pytest.mark.parametrize("name", ["pydantic_ai.json", "openai_agents_openinference.json", "traceloop_sdk.json"])
def test_a_langfuse_export_of_a_recording_stores_what_the_file_shows(
    cli_as, make_client, tenant: str, tmp_path, name: str
) -> None:
    """SPEC §3.4: `repute ingest` reads a Langfuse trace export (token counts as text) as the spans it holds."""
    export = tmp_path / f"langfuse-{name}"
    export.write_bytes(orjson.dumps(langfuse_export(name)))
    cli_as(tenant)
    ingested = CliRunner().invoke(cli, ["ingest", str(export)])
    assert ingested.exit_code == 0, ingested.output
    assert "1 run stored" in ingested.stderr, ingested.output
    root = TRACES[name].run_ids()[TRACES[name].root_identity]
    assert stored(make_client(tenant), root) == expected(name)


def test_a_running_agent_is_readable_open_and_finalized_once_under_its_conversation(make_client) -> None:
    """SPEC §3.4: a trace-born run is readable at once, `open`, with its events and agent tree so far, under
    the run id it has so far; once its root arrives naming a conversation, the run is that conversation's,
    and it is finalized once, under it, never under the trace id. Fails when a run without a row is a 404,
    or when the open run's children or events are left out."""
    client = make_client(f"t-{uuid.uuid4().hex[:12]}")
    name = "strands.json"
    spans = spans_of(read_document((RECORDED / name).read_bytes())).spans
    root = next(span for span in spans if span.is_root)
    conversation = f"conv-{uuid.uuid4().hex}"
    root = msgspec.structs.replace(root, attributes={**root.attributes, "gen_ai.conversation.id": conversation})
    running = [span for span in spans if not span.is_root]

    def post(batch: list) -> None:
        body = orjson.dumps(encode_json_traces(batch))
        assert client.post("/v1/traces", content=body, headers={"content-type": "application/json"}).status_code == 200

    post(running)
    trace_id = TRACES[name].trace_id
    run = client.get(f"/v1/runs/{trace_id}").json()
    tree = [run["run_id"], *(child["run_id"] for child in run["child_runs"])]
    assert {client.get(f"/v1/runs/{run_id}").json()["status"] for run_id in tree} == {"open"}
    calls = [
        event["data"]["tool"]
        for run_id in tree
        for event in client.get(f"/v1/runs/{run_id}/events").json()["events"]
        if event["type"] == "tool_call"
    ]
    assert set(APP_TOOLS) <= set(calls)  # the root, not here yet, is the triage agent: its agent tree so far

    post([root])
    assert client.get(f"/v1/runs/{trace_id}").status_code == 404
    assert client.get(f"/v1/runs/{conversation}").json()["status"] in ("open", "finalized")
    assert client.post(f"/v1/runs/{conversation}/finalize").status_code == 200
    finalized = client.get(f"/v1/runs/{conversation}").json()
    assert (finalized["status"], [c["run_id"] for c in finalized["child_runs"]]) == (
        "finalized",
        [f"{conversation}:billing"],
    )
    listed = {run["run_id"] for run in client.get("/v1/runs").json()["runs"]}
    assert listed == {conversation, f"{conversation}:billing"}
