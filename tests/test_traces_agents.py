"""Multi-agent runs (SPEC §3.5): each agent's spans make its own run, the handoffs stay with the agent
that handed work over, and the partition of a trace does not depend on the order spans arrive in."""

import random
from collections import Counter
from hashlib import sha256
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.traces import Span
from service.traces.agents import agent_segments, child_run_id, map_runs
from service.traces.index import TraceIndex
from service.traces.mapping import map_run
from tests.traces_support import MS, T0, make_span


def agent(number: int, name: str, parent: int | None, resource: dict | None = None, **attributes: Any) -> Span:
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name, **attributes}
    return make_span(number, parent=parent, start=T0 + number * MS, attributes=attributes, resource=resource)


def tool(number: int, parent: int, name: str = "search", args: str = '{"q": "x"}') -> Span:
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.arguments": args}
    return make_span(number, parent=parent, start=T0 + number * MS, attributes=attributes)


def chat(number: int, parent: int, tokens: int) -> Span:
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": tokens, "gen_ai.usage.output_tokens": 0}
    return make_span(number, parent=parent, start=T0 + number * MS, attributes=attributes)


def three_agents() -> list[Span]:
    """An orchestrator that asks a researcher (who loops) and a billing agent in another service (A2A)."""
    return [
        agent(1, "orchestrator", None, resource={"service.name": "front"}),
        chat(2, 1, 100),
        agent(3, "researcher", 1),
        *(tool(number, 3) for number in (4, 5, 6, 7)),
        chat(8, 3, 900),
        agent(9, "billing", 1, resource={"service.name": "billing-svc"}),
        tool(10, 9, "refund", '{"order": 42}'),
        chat(11, 1, 50),
    ]


def test_each_agent_gets_its_own_run_and_the_handoffs_stay_with_the_orchestrator() -> None:
    parent, researcher, billing = map_runs("conv-1", three_agents())
    assert [(r.run_id, r.identity, r.parent_run_id) for r in (parent, researcher, billing)] == [
        ("conv-1", "orchestrator", None),
        ("conv-1:researcher", "researcher", "conv-1"),
        ("conv-1:billing", "billing", "conv-1"),
    ]
    assert [(e["event"], e.get("agent"), e.get("total_tokens")) for e in parent.events] == [
        ("state_transition", "orchestrator", None),
        ("token_usage", None, 100),
        ("state_transition", "researcher", None),  # the handoffs, at the agents' starts
        ("state_transition", "billing", None),
        ("token_usage", None, 50),
    ]
    assert [e["event"] for e in researcher.events] == ["state_transition"] + ["tool_call", "tool_output"] * 4 + [
        "token_usage"
    ]
    assert sum(e.get("total_tokens", 0) for e in researcher.events) == 900
    assert [e.get("tool") for e in billing.events if e["event"] == "tool_call"] == ["refund"]
    assert (researcher.started_unix_nano, researcher.ended_unix_nano) == (T0 + 3 * MS, T0 + 9 * MS)


def test_a_single_agent_trace_is_exactly_the_run_it_was() -> None:
    spans = [agent(1, "solo", None), tool(2, 1), chat(3, 1, 10), agent(4, "solo", 1)]
    assert map_runs("r", spans) == [map_run("r", spans)]


def test_a_span_whose_parent_never_arrived_is_found_through_the_ancestors_that_did() -> None:
    lost = make_span(
        20, parent=99, start=T0 + 20 * MS, attributes={"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 5}
    )
    beneath = tool(21, 20)
    runs = map_runs("r", [*three_agents(), lost, beneath])
    assert {span_id for r in runs[:1] for span_id in _span_ids(r)} >= {"0000000000000014", "0000000000000015"}


def test_an_identity_that_makes_no_run_id_becomes_a_digest() -> None:
    assert child_run_id("conv", "researcher") == "conv:researcher"
    assert child_run_id("conv", "kagent/helm-agent") == "conv:" + sha256(b"kagent/helm-agent").hexdigest()[:32]
    assert child_run_id("c" * 250, "agent-x") == "c" * 250 + ":" + sha256(b"agent-x").hexdigest()[:32]


def _span_ids(run) -> set[str]:
    return {
        e["span_id"] for e in run.events if not (e["event"] == "state_transition" and e.get("agent") != run.identity)
    }


# --- property: a partition, whatever the arrival order -------------------------------------------------

NAMES = st.sampled_from(["a", "b", "c"])


@st.composite
def span_trees(draw: st.DrawFn) -> list[Span]:
    """A random tree of up to 12 spans, some of them agent spans of a few names, some parents lost."""
    count = draw(st.integers(1, 12))
    spans = []
    for number in range(1, count + 1):
        parent = None if number == 1 else draw(st.integers(1, number - 1) | st.just(99))
        kind = draw(st.sampled_from(["agent", "tool", "chat", "plain"]))
        start = T0 + draw(st.integers(0, 5)) * MS
        attributes: dict[str, Any] = {
            "agent": {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": draw(NAMES)},
            "tool": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"},
            "chat": {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": draw(st.integers(0, 9))},
            "plain": {},
        }[kind]
        spans.append(make_span(number, parent=parent, start=start, attributes=attributes, error=draw(st.booleans())))
    return spans


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(span_trees(), st.randoms(use_true_random=False))
def test_every_span_lands_in_exactly_one_run_whatever_the_order(spans: list[Span], shuffler: random.Random) -> None:
    segments = agent_segments(TraceIndex(spans))
    owned = Counter(span.span_id for segment in segments for span in segment.spans)
    assert owned == Counter(span.span_id for span in spans)  # a partition of the spans
    assert len({segment.identity for segment in segments}) == len(segments)
    shuffled = spans[:]
    shuffler.shuffle(shuffled)
    halves = shuffled[: len(shuffled) // 2] + shuffled[len(shuffled) // 2 :]
    assert map_runs("r", halves) == map_runs("r", spans)
    runs = map_runs("r", spans)
    event_spans = Counter(span_id for run in runs for span_id in _span_ids(run))
    assert set(event_spans.values()) <= {1}  # a span's own events are in one run only
    for run in runs:
        assert _span_ids(run) <= {
            span.span_id for segment in segments for span in segment.spans if segment.identity == run.identity
        }


def test_agent_names_that_are_not_identities_are_made_identities_and_stay_distinct() -> None:
    """SPEC §3.5: each run of characters an identity does not hold becomes `-`, cut to 256 characters, the
    root agent's name, a child's and a resource's service.name alike (an agent span with no name is no
    boundary: its spans stay its named ancestor's). Broken on purpose: `valid_identity` answering its text
    as it is (the names reach the run unchanged, and `safe_identity` makes
    each of them `unknown`) → this test fails."""
    spans = [
        agent(1, "Lead Agent", None),
        agent(2, "Research Agent!", 1),
        agent(3, "研究员 two", 1),
        make_span(4, parent=1, start=T0 + 4 * MS, attributes={"gen_ai.operation.name": "invoke_agent"},
                  resource={"service.name": "billing service"}),
        agent(5, "x" * 300 + " tail", 1),
    ]  # fmt: skip
    lead, *children = map_runs("r", spans)
    assert lead.identity == "Lead-Agent"
    assert [child.identity for child in children] == ["Research-Agent-", "-two", "x" * 256]
    handoffs = [event["agent"] for event in lead.events if event["event"] == "state_transition"]
    assert handoffs == ["Lead-Agent", "Research-Agent-", "-two", "x" * 256]
    assert children[0].run_id == "r:Research-Agent-"
    unnamed_root = make_span(1, start=T0, resource={"service.name": "billing service"})
    assert [run.identity for run in map_runs("r", [unnamed_root])] == ["billing-service"]


def test_a_handoff_belongs_to_the_agent_that_handed_over_however_deep() -> None:
    """lead → researcher → helper: the helper's handoff is in the researcher's run, not the lead's. Broken
    on purpose: `parent_owner`'s `if parent is None` → `if not parent is None` → this test fails."""
    lead, researcher, helper = map_runs("r", [agent(1, "lead", None), agent(2, "researcher", 1), agent(3, "helper", 2)])
    handed = {
        run.identity: [e["agent"] for e in run.events if e["event"] == "state_transition"]
        for run in (lead, researcher, helper)
    }
    assert handed == {"lead": ["lead", "researcher"], "researcher": ["researcher", "helper"], "helper": ["helper"]}


def test_a_child_takes_the_harness_context_from_the_traces_resources_last() -> None:
    """SPEC §3.4 context: a run's own spans, else the trace's spans, else its own resources, else the
    trace's resources. Broken on purpose: the last fallback's `resources=True` → `False` → this test fails."""
    lead = agent(1, "lead", None, resource={"repute.suite": "suite-of-the-lead"})
    _, helper = map_runs("r", [lead, agent(2, "helper", 1)])
    assert helper.suite == "suite-of-the-lead"


def _fatal_errors(spans: list[Span]) -> dict[str, list[bool]]:
    """Each run's error events, by identity: whether each is fatal (SPEC §3.4 "Errors")."""
    return {
        run.identity: [e.get("fatal", False) for e in run.events if e["event"] == "error_event"]
        for run in map_runs("r", spans)
        if any(e["event"] == "error_event" for e in run.events)
    }


def _failing_agent(number: int, name: str, parent: int) -> Span:
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
    return make_span(number, parent=parent, start=T0 + number * MS, attributes=attributes, error=True)


def test_each_invocation_of_an_agent_is_outermost_and_a_nested_one_is_not() -> None:
    """SPEC §3.4 "Errors": an agent invoked twice has one outermost span per invocation (the second one's
    error ends its run, fatal, though the first invocation handed work to another agent), and an agent
    nested in itself has one (the inner span's error is not fatal). Broken on purpose: in
    `_outermost_agents`, `open_agents[identity] -= 1` → `-= 0` (or `+= 1` → `+= 2`), the `continue` after
    it → `break`, the leaving mark `(span, identity, True)` → `False`, or the children pushed as `(child,
    None, True)` → this test fails."""
    twice = [agent(1, "lead", None), agent(2, "helper", 1), agent(3, "checker", 2), _failing_agent(4, "helper", 1)]
    assert _fatal_errors(twice) == {"helper": [True]}
    nested = [agent(1, "lead", None), agent(2, "helper", 1), _failing_agent(3, "helper", 2)]
    assert _fatal_errors(nested) == {"helper": [False]}


def test_a_childs_harness_context_takes_the_traces_spans_before_its_own_resources() -> None:
    """SPEC §3.4 context: the trace's spans' attributes come before the run's own resources. Broken on
    purpose: the second fallback's `resources=False` → `True`, or `_trace_first` reading the attributes
    for the resources and the resources for the attributes (`not` added) → this test fails."""
    lead = agent(1, "lead", None, **{"repute.suite": "suite-of-the-trace"})
    helper = agent(2, "helper", 1, resource={"repute.suite": "suite-of-the-helpers-service"})
    _, child = map_runs("r", [lead, helper])
    assert child.suite == "suite-of-the-trace"


def test_a_childs_harness_context_from_the_trace_is_its_roots_before_an_earlier_agents() -> None:
    """A child run naming no suite takes the trace's root's, though another agent's span starts earlier and
    names its own. Broken on purpose: the trace's spans read in run order, not roots first → the helper's."""
    helper = agent(2, "helper", 5, **{"repute.suite": "suite-of-the-helper"})
    lead = agent(5, "lead", None, **{"repute.suite": "suite-of-the-lead"})
    reviewer = agent(7, "reviewer", 5)
    runs = {run.identity: run for run in map_runs("r", [helper, lead, reviewer])}
    assert (runs["reviewer"].suite, runs["helper"].suite) == ("suite-of-the-lead", "suite-of-the-helper")


def test_an_agent_on_a_cycle_of_parent_ids_is_outermost_after_another_cycle_was_walked() -> None:
    """Each cycle of parent ids is entered at its first span, as if its link to its parent were lost; the
    walk around one cycle leaves nothing open for the next. Broken on purpose: `_outermost_agents`'s `if
    key in visited: continue` → `break` (the walk that closes a cycle drops the agents it left open, and
    agent a's second invocation is no longer outermost) → this test fails."""
    cycles = [agent(1, "lead", None), agent(2, "a", 3), agent(3, "b", 2), _failing_agent(6, "a", 7), agent(7, "c", 6)]
    assert _fatal_errors(cycles) == {"a": [True]}
