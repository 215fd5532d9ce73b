"""GET /v1/runs lists the trace-born runs still running (SPEC §3.4 "A running agent is visible", issue #40):
a trace-born run has no `runs` row until its finalize, so the list reads its spans (sql/open_trace_runs.sql)
and merges each run of its tree, status open, under the run id it has so far, into the page by run time;
the filters that apply to a run without a verdict hold for them; once finalized it is listed once."""

import uuid
from typing import Any

import httpx
import pytest

from service.services import runs as runs_service
from service.store.traces import OpenRun
from tests.traces_support import MS, T0, otlp_json, proto_span, request_of

PLANNER = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"}
BOOKER = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "booker"}
CHAT = {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 40, "gen_ai.usage.output_tokens": 2,
        "gen_ai.usage.cost": "0.003"}  # fmt: skip
# T0 is 2023-11-14T22:13:20Z: one posted run ended before the trace started, one after.
BEFORE, AFTER = "2023-11-14T22:00:00Z", "2023-11-14T23:00:00Z"


def _two_agents(trace_id: bytes, conversation: str | None = None) -> dict[str, Any]:
    """planner (0-10 ms) hands work to booker (5-8 ms), who asks a model (6-7 ms); the root names
    `conversation` when given."""
    root = {**PLANNER, "gen_ai.conversation.id": conversation} if conversation else PLANNER
    return otlp_json(
        request_of(
            proto_span(1, trace_id=trace_id, name="invoke_agent planner", end=T0 + 10 * MS, attributes=root),
            proto_span(2, trace_id=trace_id, parent=1, name="invoke_agent booker", start=T0 + 5 * MS,
                       end=T0 + 8 * MS, attributes=BOOKER),
            proto_span(3, trace_id=trace_id, parent=2, name="chat", start=T0 + 6 * MS, attributes=CHAT),
        )
    )  # fmt: skip


def _session(run_id: str, identity: str, at: str) -> dict[str, Any]:
    return {"run_id": run_id, "identity": identity, "events": [{"event": "decision", "timestamp": at}]}


def _listed(client: httpx.Client, **params: Any) -> list[tuple[str, str]]:
    runs = client.get("/v1/runs", params=params).json()["runs"]
    return [(run["run_id"], run["status"]) for run in runs]


@pytest.fixture
def tree(client: httpx.Client) -> str:
    """Two posted runs around an open two-agent trace; returns the trace's run id."""
    sessions = [_session("run-before", "planner", BEFORE), _session("run-after", "clerk", AFTER)]
    assert client.post("/v1/sessions/batch", json=sessions).status_code == 201
    trace_id = uuid.uuid4().bytes
    assert client.post("/v1/traces", json=_two_agents(trace_id)).status_code == 200
    return trace_id.hex()


def test_open_runs_are_merged_into_the_list_by_run_time(client: httpx.Client, tree: str) -> None:
    """Fails when the list leaves out trace-born runs without a row (as before issue #40), or appends them
    out of run-time order."""
    child = f"{tree}:booker"
    assert _listed(client) == [("run-after", "finalized"), (child, "open"), (tree, "open"), ("run-before", "finalized")]
    runs = {run["run_id"]: run for run in client.get("/v1/runs").json()["runs"]}
    assert (runs[tree]["identity"], runs[child]["identity"], runs[child]["parent_run_id"]) == (
        "planner",
        "booker",
        tree,
    )
    assert runs[child]["started_at"] == "2023-11-14T22:13:20.005000Z" and runs[child]["duration_seconds"] == 0.003
    assert (runs[child]["total_tokens"], runs[child]["cost_usd"], runs[child]["trust_score"]) == (42, 0.003, None)

    assert client.post(f"/v1/runs/{tree}/finalize").status_code == 200
    finalized = _listed(client)  # each once, now by its end: planner's spans end after booker's
    assert [run_id for run_id, _ in finalized] == ["run-after", tree, child, "run-before"]
    assert {status for _, status in finalized} == {"finalized"}


def test_the_filters_that_fit_a_running_agent_hold_for_open_runs(client: httpx.Client, tree: str) -> None:
    child = f"{tree}:booker"
    assert _listed(client, identity="booker") == [(child, "open")]
    assert _listed(client, identity="planner") == [(tree, "open"), ("run-before", "finalized")]
    assert _listed(client, parent=tree) == [(child, "open")]
    assert _listed(client, q=tree[5:20].upper()) == [(child, "open"), (tree, "open")]  # part of the id, any case
    assert _listed(client, q="BOOK") == [(child, "open")]  # part of the identity
    assert _listed(client, status="open") == [(child, "open"), (tree, "open")]
    assert _listed(client, status="finalized") == [("run-after", "finalized"), ("run-before", "finalized")]
    assert _listed(client, readiness="ready_for_runtime") == [("run-after", "finalized"), ("run-before", "finalized")]
    assert _listed(client, since="2023-11-14T22:13:20.003Z") == [("run-after", "finalized"), (child, "open")]
    assert _listed(client, until="2023-11-14T22:13:20.003Z") == [(tree, "open"), ("run-before", "finalized")]


def test_pages_walk_through_open_and_stored_runs_alike(client: httpx.Client, tree: str) -> None:
    """One run a page: each page's cursor carries on past open runs as past stored ones, with no repeat
    and no gap. Fails when the open runs are merged into every page, or into none after the first."""
    seen, params = [], {"limit": 1}
    while True:
        page = client.get("/v1/runs", params=params).json()
        seen += [run["run_id"] for run in page["runs"]]
        if page["next_cursor"] is None:
            break
        params = {"limit": 1, "cursor": page["next_cursor"]}
    assert seen == ["run-after", f"{tree}:booker", tree, "run-before"]


def test_an_open_run_is_listed_under_the_run_id_it_has_so_far(client: httpx.Client, make_client) -> None:
    """The trace first comes without the span naming its conversation: listed under the trace id; once the
    root naming it arrives, under the conversation only. Another tenant never sees it."""
    trace_id = uuid.uuid4().bytes
    conversation = f"conv-{uuid.uuid4().hex[:12]}"
    spans = otlp_json(request_of(proto_span(3, trace_id=trace_id, parent=1, name="chat", attributes=CHAT)))
    assert client.post("/v1/traces", json=spans).status_code == 200
    assert _listed(client) == [(trace_id.hex(), "open")]
    assert client.post("/v1/traces", json=_two_agents(trace_id, conversation)).status_code == 200
    assert _listed(client) == [(f"{conversation}:booker", "open"), (conversation, "open")]
    assert _listed(make_client(f"t-{uuid.uuid4().hex[:12]}")) == []


def test_a_full_page_finds_the_open_runs_over_its_floor_past_those_under_it(
    client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full page merges only the open runs whose spans reach its floor (its last stored run's time), and a
    list reads a limited number of open runs. With room for one: the trace started last (planner, 80-90 ms) lies
    under the floor (100 ms), the one started before it reaches over it (its booker starts at 150 ms), and its
    booker still takes the page. Fails when the runs under the floor keep the read's places."""
    monkeypatch.setattr(runs_service, "OPEN_RUNS_AT_MOST", 1)
    stored = _session("run-at-floor", "clerk", "2023-11-14T22:13:20.100Z")
    assert client.post("/v1/sessions", json=stored).status_code == 201
    under, over = uuid.uuid4().bytes, uuid.uuid4().bytes
    spans = request_of(
        proto_span(1, trace_id=under, name="invoke_agent planner", start=T0 + 80 * MS, end=T0 + 90 * MS,
                   attributes=PLANNER),
        proto_span(1, trace_id=over, name="invoke_agent planner", start=T0 + 50 * MS, end=T0 + 300 * MS,
                   attributes=PLANNER),
        proto_span(2, trace_id=over, parent=1, name="invoke_agent booker", start=T0 + 150 * MS, end=T0 + 200 * MS,
                   attributes=BOOKER),
    )  # fmt: skip
    assert client.post("/v1/traces", json=otlp_json(spans)).status_code == 200
    assert _listed(client, limit=1) == [(f"{over.hex()}:booker", "open")]


def test_a_run_finalized_while_the_list_reads_is_listed_once(
    client: httpx.Client, tree: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page and the open runs are read side by side: a run finalized meanwhile can be found open by one
    and finalized by the other (the open runs' read made to find it still open, as it would have an instant
    before). Fails when the page shows it, or its child run, twice."""
    assert client.post(f"/v1/runs/{tree}/finalize").status_code == 200
    still_open = [OpenRun(tree, T0 + 6 * MS)]
    monkeypatch.setattr(runs_service.trace_store, "open_trace_runs", lambda *_: still_open)
    listed = _listed(client)
    assert sorted(listed) == sorted(set(listed)) and {status for _, status in listed} == {"finalized"}
    assert len(listed) == 4  # the two posted runs, the trace's run and its child run
