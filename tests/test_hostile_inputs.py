"""Inputs built to stall or corrupt (issue #37): a run with more causes than a byte counts, a write that
fails half way, and trace shapes whose mapping once cost quadratic time. Each asserts what a reader sees,
or a count of the work done, never a duration."""

import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from service.store import runs as run_store
from service.store import writer
from service.store.client import Store
from service.traces import Span, index
from service.traces.agents import map_runs
from tests.traces_support import MS, T0, make_span

AS_OF = {"as_of": "2026-11-20"}


def _loops(groups: int, calls_per_group: int = 3) -> list[dict[str, Any]]:
    """`groups` loop groups of `calls_per_group` identical tool calls each: one infinite_tool_loop cause
    per group (SPEC §4)."""
    return [
        {"event": "tool_call", "tool": "search", "args": {"q": group}, "timestamp": "2026-11-20T10:00:00Z"}
        for group in range(groups)
        for _ in range(calls_per_group)
    ]


def test_a_run_with_more_than_255_causes_is_stored_whole(
    client: httpx.Client, embedded_store: Store, tenant: str
) -> None:
    """768 tool calls in 256 loop groups (70 KiB): once a 500 (run_failures.position was a UInt8)."""
    identity = f"looper-{uuid.uuid4().hex[:8]}"
    posted = client.post("/v1/sessions", json={"run_id": "many-causes", "identity": identity, "events": _loops(256)})
    assert posted.status_code == 201, posted.text
    causes = posted.json()["diagnosis"]["failure_causes"]
    assert [cause["type"] for cause in causes] == ["infinite_tool_loop"] * 256 + ["cost_explosion"]
    stored = run_store.causes_of(embedded_store, tenant, ["many-causes"])["many-causes"]
    assert [failure_type for failure_type, _, _ in stored] == [cause["type"] for cause in causes]
    reputation = client.get(f"/v1/identities/{identity}/reputation", params=AS_OF).json()
    assert reputation["failures"] == {"infinite_tool_loop": 1, "cost_explosion": 1}


def test_a_finalize_whose_write_fails_emits_no_reputation(
    make_client: Callable[[str], httpx.Client], tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runs' causes cannot be written: the run is not stored, and its identity has no reputation
    event and no run to explain. Broken on purpose: the reputation written beside the causes (as it
    was), which left the identity scored by a run that does not exist."""
    identity = f"half-written-{uuid.uuid4().hex[:8]}"
    body = {"run_id": "half", "identity": identity, "events": _loops(2)}

    def failing(*_: object) -> None:
        raise RuntimeError("the causes could not be written")

    monkeypatch.setattr(writer, "failures", failing)
    with make_client(tenant) as failed, pytest.raises(httpx.HTTPError):
        failed.post("/v1/sessions", json=body).raise_for_status()  # a 500, or the connection closed after it
    monkeypatch.undo()
    client = make_client(tenant)
    assert client.get("/v1/runs/half").status_code == 404
    reputation = client.get(f"/v1/identities/{identity}/reputation", params=AS_OF)
    assert reputation.status_code == 404 or reputation.json()["events"] == 0, reputation.text
    assert client.post("/v1/sessions", json=body).status_code == 201  # the retry converges
    assert client.get(f"/v1/identities/{identity}/reputation", params=AS_OF).json()["events"] > 0


def _chain(length: int, *, agents: bool, reverse: bool, failing: bool = False) -> list[Span]:
    """A chain of nested spans, each the parent of the next; with `agents` each is its own agent; with
    `reverse` the deeper a span, the earlier it starts; with `failing` each span's status is ERROR."""
    spans = []
    for depth in range(length):
        start = T0 + (length - depth if reverse else depth) * MS
        attributes: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": f"a{depth}"}
        if not agents:
            attributes = {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 1}
        spans.append(make_span(depth + 1, parent=depth or None, start=start, attributes=attributes, error=failing))
    return spans


@pytest.mark.parametrize(
    ("agents", "reverse", "failing"),
    [(True, False, False), (True, True, False), (False, True, False), (True, False, True), (False, True, True)],
)
def test_mapping_a_trace_looks_at_each_span_a_bounded_number_of_times(
    agents: bool, reverse: bool, failing: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chain of 2,000 spans: each span's role is read once and each parent link followed at most a
    few times, whatever the shape (nested agents each a child run, or spans starting before their
    parents), errors on every span included (each agent's is fatal in its own run: whether an agent span
    is its identity's outermost is answered in one walk down the trace, SPEC §3.4). Broken on purpose:
    the owner walk without memoizing the spans it passes (as it was: 2 million parent lookups for 2,000
    reversed spans); the outermost question as a walk up to the root from each failing agent span."""
    length, reads, lookups = 2_000, [0], [0]
    role_of, parent = index.role_of, index.TraceIndex.parent

    def counted_role(span: Span) -> str | None:
        reads[0] += 1
        return role_of(span)

    def counted_parent(self: index.TraceIndex, span: Span) -> Span | None:
        lookups[0] += 1
        return parent(self, span)

    monkeypatch.setattr(index, "role_of", counted_role)
    monkeypatch.setattr(index.TraceIndex, "parent", counted_parent)
    mapped = map_runs("r", _chain(length, agents=agents, reverse=reverse, failing=failing))
    assert len(mapped) == (length if agents else 1)
    fatal = sum(1 for run in mapped for event in run.events if event.get("fatal"))
    assert fatal == ((length if agents else 1) if failing else 0)  # each agent's own span; else the root
    assert reads[0] == length
    assert lookups[0] <= 4 * length


def test_usage_counts_once_across_the_whole_trace() -> None:
    """An orchestrator's agent span carrying its sub-agent's total counts nothing once the sub-agent is a
    child run (SPEC §3.4): 686 spent, never 1,372 across the tree."""
    orchestrator = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "lead"}
    usage = {"gen_ai.usage.input_tokens": 600, "gen_ai.usage.output_tokens": 86}
    sub_agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"}
    chat = {"gen_ai.operation.name": "chat", **usage}
    spans = [
        make_span(1, attributes={**orchestrator, **usage}),
        make_span(2, parent=1, start=T0 + MS, attributes=sub_agent),
        make_span(3, parent=2, start=T0 + 2 * MS, attributes=chat),
    ]
    lead, helper = map_runs("r", spans)
    tokens = [sum(e.get("total_tokens", 0) for e in run.events) for run in (lead, helper)]
    assert tokens == [0, 686]
