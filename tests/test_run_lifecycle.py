"""What the run pipeline (service/services/finalize.py, assembly.py, receivers/) promises beyond the
posted-run paths of test_api_sessions.py: a trace-born run's names and execution error from its spans, an
OTLP session's events numbered from 0, an open run's event total, and the failure rows of a quality verdict
only. Each test below was written against a mutant of `make mutants` that the suite let live; its docstring
says which change makes it fail (each seen red)."""

import uuid
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanProto

from service.errors import Conflict, FieldError
from service.model import RunHeader
from service.services import assembly
from service.services.receivers import stream, whole
from service.store import runs as run_store
from service.store import writer
from service.store.client import Store
from service.vocab import RunKind
from tests.conftest import FIXTURES
from tests.traces_support import T0, otlp_json, proto_span, request_of

JSON = {"content-type": "application/json"}
TOOL_CALL = {"event": "tool_call", "tool": "search", "args": {"q": "x"}}


def _post_spans(client: httpx.Client, *spans: SpanProto) -> None:
    posted = client.post("/v1/traces", content=orjson.dumps(otlp_json(request_of(*spans))), headers=JSON)
    assert posted.status_code == 200, posted.text


def _post_lead_and_helper(client: httpx.Client, trace_id: bytes) -> None:
    """A trace of two agents: `lead`, and `helper` under it (SPEC §3.5: two runs)."""
    lead = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "lead"}
    helper = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"}
    _post_spans(
        client,
        proto_span(1, trace_id=trace_id, name="invoke_agent lead", attributes=lead),
        proto_span(2, trace_id=trace_id, parent=1, name="invoke_agent helper", start=T0 + 1000, attributes=helper),
    )


def _post_trace(client: httpx.Client, root_attributes: dict[str, Any], trace_id: bytes | None = None) -> str:
    """An agent's trace: its root span (with `root_attributes`) and a tool span that fails with a known
    reason code inside the agent stage. Returns the trace id, the trace-born run's id."""
    trace_id = trace_id or uuid.uuid4().bytes
    root = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "solver", "repute.stage": "agent"}
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search", "error.type": "provider_error"}
    _post_spans(
        client,
        proto_span(1, trace_id=trace_id, name="invoke_agent solver", attributes={**root, **root_attributes}),
        proto_span(2, trace_id=trace_id, parent=1, start=T0 + 1000, attributes=tool, error=True, message="503"),
    )
    return trace_id.hex()


def test_a_trace_born_run_takes_its_trial_and_its_execution_error_from_its_spans(client: httpx.Client) -> None:
    """Its events are numbered from 0, as a posted run's. Broken on purpose: `(execution if mapped is parent
    else None) or mapped.execution` → `and` (the spans' execution error is dropped); the trace's event rows
    written from position 1."""
    run_id = _post_trace(client, {"repute.trial": 3, "repute.task_id": "task-7"})
    run = client.post(f"/v1/runs/{run_id}/finalize").json()
    assert (run["trial"], run["task_id"]) == (3, "task-7")
    assert (run["execution_status"], run["failure_stage"], run["failure_reason_code"], run["failure_message"]) == (
        "execution_error",
        "agent",
        "provider_error",
        "503",
    )
    page = client.get(f"/v1/runs/{run_id}/events").json()
    assert page["total"] >= 2 and [event["seq"] for event in page["events"]] == list(range(page["total"]))


def test_the_callers_execution_object_overrides_the_one_its_spans_show(client: httpx.Client) -> None:
    """Broken on purpose: `execution if mapped is parent` → `is not parent` (the caller's object is ignored)."""
    run_id = _post_trace(client, {})
    execution = {"status": "execution_error", "stage": "setup", "reason": "toolchain_missing", "message": "no go"}
    run = client.post(f"/v1/runs/{run_id}/finalize", json={"execution": execution}).json()
    assert (run["failure_stage"], run["failure_reason_code"], run["failure_message"]) == (
        "setup",
        "toolchain_missing",
        "no go",
    )
    assert run["trial"] is None  # no repute.trial: none, not 0


def test_finalizing_a_multi_agent_trace_answers_the_run_of_the_trace(client: httpx.Client) -> None:
    """A trace of two agents is two runs (SPEC §3.5), finalized in one batch: the answer is the run asked
    for, the trace's, never its child's. Broken on purpose: `finalize_batch(...)[0]` → `[-1]`."""
    trace_id = uuid.uuid4().bytes
    _post_lead_and_helper(client, trace_id)
    answered = client.post(f"/v1/runs/{trace_id.hex()}/finalize").json()
    children = client.get(f"/v1/runs/{trace_id.hex()}").json()["child_runs"]
    assert answered["run_id"] == trace_id.hex() and answered["parent_run_id"] is None
    assert len(children) == 1 and children[0]["identity"] != answered["identity"]


def test_a_batch_of_one_names_its_fields_as_a_single_run_does(client: httpx.Client) -> None:
    """`sessions[i].` prefixes a field only when a batch holds several runs, for the checks against the
    store as for those of the body. Broken on purpose: `_prefix`'s `len(sessions) > 1` → `> 0`."""
    run = {"run_id": f"run-{uuid.uuid4().hex}", "identity": "agent-lifecycle", "events": [TOOL_CALL]}
    for body, field in (({**run, "profile": "no-such-profile"}, "profile"), ({**run, "identity": ""}, "identity")):
        refused = client.post("/v1/sessions/batch", json={"sessions": [body]})
        assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == field, refused.text


def test_a_trace_born_run_an_earlier_release_opened_takes_the_names_its_spans_give(
    client: httpx.Client, embedded_store: Store, tenant: str
) -> None:
    """Releases before issue #25 stored an open row for a trace-born run when its first spans came; such a
    run is finalized from that row, with the names its spans give and the row's for the others.
    Broken on purpose: the `trial`, `identity` and `task_id` choices of `trace_requests` inverted (`not`,
    `or` → `and`), and `suite=spec.suite or base.suite` → `and`."""
    trace_id = uuid.uuid4().bytes
    opened = RunHeader("agent-before", trace_id.hex(), suite="suite-before", task_id="task-before", trial=1)
    record = assembly.new_record(tenant, replace(opened, kind=RunKind.TRACE), trace_id.hex(), datetime.now(UTC))
    writer.runs(embedded_store, [record])
    run_id = _post_trace(client, {"repute.trial": 3, "repute.task_id": "task-7"}, trace_id)

    run = client.post(f"/v1/runs/{run_id}/finalize").json()
    fresh = client.post(f"/v1/runs/{_post_trace(client, {})}/finalize").json()
    assert (run["identity"], run["suite"], run["task_id"], run["trial"]) == (
        fresh["identity"],
        "suite-before",
        "task-7",
        3,
    )
    assert fresh["identity"] != "agent-before"


def test_a_trace_born_runs_times_are_its_spans_cut_to_the_millisecond_in_every_answer(client: httpx.Client) -> None:
    """Span times are integer nanoseconds and a run's times are milliseconds: the finalize's answer shows
    what later reads show (the store keeps milliseconds), never a float's sub-millisecond fraction.
    Broken on purpose: `unix_nano // 1_000_000` → `/` (the answer shows microseconds the reads do not)."""
    trace_id = uuid.uuid4().bytes
    root = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "solver"}
    _post_spans(
        client,
        proto_span(1, trace_id=trace_id, start=T0 + 1_234_567, end=T0 + 9_876_543, attributes=root),
        proto_span(2, trace_id=trace_id, parent=1, start=T0 + 2_000_001, attributes={"gen_ai.operation.name": "chat"}),
    )

    answered = client.post(f"/v1/runs/{trace_id.hex()}/finalize").json()
    read = client.get(f"/v1/runs/{trace_id.hex()}").json()
    assert (answered["started_at"], answered["ended_at"]) == (read["started_at"], read["ended_at"])
    started, ended = (datetime.fromisoformat(read[name]) for name in ("started_at", "ended_at"))
    assert (started.microsecond, ended.microsecond) == (1000, 9000)  # T0 is a whole second


def _caller_score(store: Store, tenant: str, run_id: str) -> float | None:
    result = store.client.query(
        "SELECT caller_score FROM runs FINAL WHERE tenant = {tenant:String} AND run_id = {run_id:String}",
        parameters={"tenant": tenant, "run_id": run_id},
    )
    return result.result_rows[0][0]


def test_the_callers_score_is_kept_only_where_it_decided_the_outcome(
    client: httpx.Client, embedded_store: Store, tenant: str
) -> None:
    """A re-diagnosis classifies a run again by the score its caller gave (service.services.rebuild): kept for
    a quality outcome the caller scored, none for a run the trust score decided or an execution error.
    Broken on purpose: `from_caller = ... != EXECUTION_ERROR and ...` → `or`."""
    executions = {
        "scored": {"score": 0.25},
        "unscored": None,
        "errored": {"status": "execution_error", "stage": "agent", "reason": "provider_error", "score": 0.25},
    }
    for name, execution in executions.items():
        body = {"run_id": f"{tenant}-{name}", "identity": "agent-lifecycle", "events": [TOOL_CALL]}
        client.post("/v1/sessions", json={**body, "execution": execution} if execution else body).raise_for_status()
    kept = {name: _caller_score(embedded_store, tenant, f"{tenant}-{name}") for name in executions}
    assert kept == {"scored": 0.25, "unscored": None, "errored": None}


def test_an_otlp_sessions_events_are_numbered_from_zero_and_its_score_counts_its_records(
    client: httpx.Client,
) -> None:
    """Broken on purpose: the session's event rows written from position 1 instead of 0; its records never
    added to its score (`for record in []`); its score stored only when there is none (`if not performance`)."""
    session_id = _session_posted(
        client, ["claude_code.user_prompt", "claude_code.tool_result", "claude_code.tool_result"]
    )
    client.post(f"/v1/runs/{session_id}/finalize").raise_for_status()
    page = client.get(f"/v1/runs/{session_id}/events").json()
    assert page["events"] and [event["seq"] for event in page["events"]] == list(range(page["total"]))
    performance = client.get(f"/v1/runs/{session_id}").json()["session_performance"]
    assert performance["stats"]["tools_ok"] == 2


def test_a_posted_runs_times_are_its_events_and_it_has_no_session_score(client: httpx.Client) -> None:
    """Broken on purpose: `request.started_at or started_at` → `and` (a posted run, which has no span times,
    loses its start); `if performance` → `if not performance` (a posted run gets a session score of null)."""
    run_id = f"run-{uuid.uuid4().hex}"
    stamps = ["2026-11-20T10:00:00.250Z", "2026-11-20T10:00:03Z", "2026-11-20T10:00:01Z"]
    events = [{**TOOL_CALL, "args": {"q": str(n)}, "timestamp": stamp} for n, stamp in enumerate(stamps)]
    run = client.post("/v1/sessions", json={"run_id": run_id, "identity": "agent-lifecycle", "events": events})
    assert run.status_code == 201, run.text
    stored = client.get(f"/v1/runs/{run_id}").json()
    started, ended = (datetime.fromisoformat(stored[name]) for name in ("started_at", "ended_at"))
    assert (started, ended) == (
        datetime(2026, 11, 20, 10, 0, 0, 250_000, UTC),
        datetime(2026, 11, 20, 10, 0, 3, 0, UTC),
    )
    assert stored["session_performance"] is None


def test_an_open_runs_event_total_counts_what_was_appended(client: httpx.Client) -> None:
    """Broken on purpose: `run.event_count if run.finalized else ...` → `if not run.finalized` (an open run's
    total reads 0, its stored count until the finalize)."""
    run_id = f"run-{uuid.uuid4().hex}"
    client.post("/v1/runs", json={"run_id": run_id, "identity": "agent-lifecycle"}).raise_for_status()
    for batch in ([TOOL_CALL, TOOL_CALL], [TOOL_CALL]):
        client.post(f"/v1/runs/{run_id}/events", json=batch).raise_for_status()
    assert client.get(f"/v1/runs/{run_id}/events", params={"limit": 1}).json()["total"] == 3
    client.post(f"/v1/runs/{run_id}/finalize").raise_for_status()
    assert client.get(f"/v1/runs/{run_id}/events").json()["total"] == 3


def _failure_types(store: Store, tenant: str, run_id: str) -> list[str]:
    result = store.client.query(
        "SELECT failure_type FROM run_failures FINAL WHERE tenant = {tenant:String} AND run_id = {run_id:String}"
        " ORDER BY position",
        parameters={"tenant": tenant, "run_id": run_id},
    )
    return [failure_type for (failure_type,) in result.result_rows]


def test_failure_rows_are_written_for_a_quality_verdict_only(
    client: httpx.Client, embedded_store: Store, tenant: str
) -> None:
    """The same looping run, judged on its quality and as an execution error: the alerts and the rebuild
    read run_failures, which must hold the quality failures of the one and nothing of the other.
    Broken on purpose: `record.execution_status == EXECUTION_ERROR` → `!=`, or `not ... ==`."""
    looping = orjson.loads((FIXTURES / "session_loop.json").read_bytes())
    judged, errored = f"run-{uuid.uuid4().hex}", f"run-{uuid.uuid4().hex}"
    outage = {"status": "execution_error", "stage": "agent", "reason": "provider_error"}
    client.post("/v1/sessions", json={**looping, "run_id": judged}).raise_for_status()
    client.post("/v1/sessions", json={**looping, "run_id": errored, "execution": outage}).raise_for_status()

    primary = client.get(f"/v1/runs/{judged}").json()["primary_failure"]
    assert primary and _failure_types(embedded_store, tenant, judged)[0] == primary
    assert _failure_types(embedded_store, tenant, errored) == []


def test_single_runs_written_together_are_each_answered_as_if_alone(embedded_store: Store, tenant: str) -> None:
    """The write pool groups the single runs of separate requests (`ingest_posted`): one refused against the
    store (an unknown profile, a run open for streaming) fails alone. Broken on purpose: `ingest_each`'s
    `whole` → True (the refusal is raised for the whole group); in `_refusals`, the profile loop run over
    nothing, its `except ClientError` not catching, or its `continue` → `break` (the open run is not seen);
    in `_ingest`, `continue` → `break` after a refused run (the runs after it are lost)."""
    run = {"identity": "agent-lifecycle", "events": [TOOL_CALL]}
    good, refused, streaming, last = (f"run-{uuid.uuid4().hex}" for _ in range(4))
    stream.open_run(embedded_store, tenant, RunHeader("agent-lifecycle", streaming), datetime.now(UTC))
    bodies = [
        orjson.dumps({**run, "run_id": good}),
        orjson.dumps({**run, "run_id": refused, "profile": "nope"}),
        orjson.dumps({**run, "run_id": streaming}),  # open: append its events and finalize it instead
        orjson.dumps({**run, "run_id": last}),
    ]
    answers = whole.ingest_posted(embedded_store, tenant, bodies, embedded_store.settings, datetime.now(UTC))
    assert [type(answer) for answer in answers] == [whole.Ingested, FieldError, Conflict, whole.Ingested]
    assert [answer.record.run_id for answer in answers if isinstance(answer, whole.Ingested)] == [good, last]
    assert isinstance(answers[1], FieldError) and answers[1].field == "profile"
    assert run_store.get_run(embedded_store, tenant, refused) is None
    assert run_store.get_run(embedded_store, tenant, streaming).status == "open"


def _session_posted(client: httpx.Client, names: list[str]) -> str:
    """A Claude Code session of log records named `names`, a second apart (each a successful Read when it
    is a tool result), posted to /v1/logs; returns its session id."""
    session_id = f"s-{uuid.uuid4().hex}"
    fields = {"session.id": session_id, "tool_name": "Read", "success": "true"}
    attributes = [{"key": key, "value": {"stringValue": value}} for key, value in fields.items()]
    records = [
        {"timeUnixNano": str(T0 + n * 1_000_000_000), "eventName": name, "attributes": attributes}
        for n, name in enumerate(names)
    ]
    body = {"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]}
    assert client.post("/v1/logs", content=orjson.dumps(body), headers=JSON).status_code == 200
    return session_id
