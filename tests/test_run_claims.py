"""Which run ids a run may take, and which parent it may name (issue #37): a run is never its own parent
nor part of a cycle (422 naming parent_run_id); an id an open trace-born run holds is refused to posted and
streamed runs (409); and a run posted under a child run's id `<trace>:<agent>` before the trace is
finalized leaves that agent's child run under `<trace>:<agent>+2`, never lost."""

import uuid

import httpx

from tests.test_run_lifecycle import TOOL_CALL, _post_lead_and_helper, _post_spans
from tests.traces_support import proto_span


def _run(run_id: str, parent: str | None = None) -> dict:
    return {"run_id": run_id, "identity": "agent-claims", "parent_run_id": parent, "events": [TOOL_CALL]}


def _refused_field(response: httpx.Response, status: int, field: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["errors"][0]["field"] == field, response.text


def test_a_run_is_never_its_own_parent_nor_part_of_a_cycle(client: httpx.Client) -> None:
    """Broken on purpose: `parent_cycle` answering [] (a run naming itself, or two runs of a batch naming
    each other, are stored), or walking from the first run's parent each step (`chain[0]` for `chain[-1]`:
    the cycle of three is stored), or the self-parent check of `open_run` removed → this test fails."""
    own = f"self-{uuid.uuid4().hex}"
    _refused_field(client.post("/v1/sessions", json=_run(own, own)), 422, "parent_run_id")
    assert "cycle" in client.post("/v1/sessions", json=_run(own, own)).json()["detail"]
    first, second, third = (f"cycle-{n}-{uuid.uuid4().hex}" for n in range(3))
    batch = [_run(first, second), _run(second, third), _run(third, first)]
    _refused_field(client.post("/v1/sessions/batch", json=batch), 422, "sessions[0].parent_run_id")
    _refused_field(
        client.post("/v1/runs", json={"run_id": own, "identity": "a", "parent_run_id": own}), 422, "parent_run_id"
    )
    for run_id in (own, first, second, third):
        assert client.get(f"/v1/runs/{run_id}").status_code == 404  # a refused request writes nothing
    chain = [_run(first), _run(second, first), _run(third, second)]  # a chain is no cycle
    assert client.post("/v1/sessions/batch", json=chain).status_code == 201


def test_an_id_an_open_trace_born_run_holds_is_refused_to_posted_and_streamed_runs(client: httpx.Client) -> None:
    """The trace's spans are stored and it is not finalized: its run id (the trace id, or its conversation
    id) is the trace's. Broken on purpose: `trace_held` answering an empty set, or the `elif run_id in held`
    of `_refusals` removed → this test fails."""
    trace_id = uuid.uuid4().bytes
    conversation = f"conv-{uuid.uuid4().hex}"
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "solver"}
    _post_spans(client, proto_span(1, trace_id=trace_id, name="invoke_agent solver", attributes=agent))
    named = {**agent, "gen_ai.conversation.id": conversation}
    _post_spans(client, proto_span(1, trace_id=uuid.uuid4().bytes, name="invoke_agent solver", attributes=named))
    for run_id in (trace_id.hex(), conversation):
        posted = client.post("/v1/sessions", json=_run(run_id))
        assert posted.status_code == 409 and "trace-born" in posted.json()["detail"], posted.text
        assert (
            client.post("/v1/sessions/batch", json=[_run(run_id), _run(f"other-{uuid.uuid4().hex}")]).status_code == 409
        )
        assert client.post("/v1/runs", json={"run_id": run_id, "identity": "agent-claims"}).status_code == 409
    finalized = client.post(f"/v1/runs/{trace_id.hex()}/finalize").json()
    assert (finalized["kind"], finalized["identity"]) == ("trace", "solver")  # the spans were diagnosed


def test_a_child_run_id_taken_before_the_trace_is_finalized_moves_the_child_not_the_run(client: httpx.Client) -> None:
    """A child run's id is `<trace run id>:<agent>` (SPEC §3.5); a run stored under that id before the trace
    is finalized keeps its own verdict, and the agent's child run takes `<trace run id>:<agent>+2`. Broken
    on purpose: `free_child_ids` answering the children as they are (the child's finalize overwrites the
    stored run), or leaving out the taken ones (the agent's run is lost) → this test fails."""
    trace_id = uuid.uuid4().bytes
    taken = f"{trace_id.hex()}:helper"
    client.post(
        "/v1/sessions", json={"run_id": taken, "identity": "agent-first", "events": [TOOL_CALL]}
    ).raise_for_status()
    client.post(
        "/v1/sessions", json={"run_id": f"{taken}+2", "identity": "agent-second", "events": [TOOL_CALL]}
    ).raise_for_status()
    _post_lead_and_helper(client, trace_id)
    client.post(f"/v1/runs/{trace_id.hex()}/finalize").raise_for_status()
    stored = client.get(f"/v1/runs/{taken}").json()
    assert (stored["identity"], stored["kind"], stored["parent_run_id"]) == ("agent-first", "run", None)
    children = client.get(f"/v1/runs/{trace_id.hex()}").json()["child_runs"]
    assert [(child["run_id"], child["identity"]) for child in children] == [(f"{taken}+3", "helper")]
    assert client.get(f"/v1/runs/{taken}+2").json()["identity"] == "agent-second"
