"""A run's spans as a run (SPEC §3.4, §6): identity and context, events, execution errors, determinism."""

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.diagnosis import normalize_events
from service.traces import Span, SpanEvent, group_runs, map_run
from tests.traces_support import MS, T0, TRACE_A, TRACE_B, make_span

TOOL = "execute_tool"


def tool_span(number: int, tool: str = "search", arguments: Any = '{"q": "x"}', **fields: Any) -> Span:
    attributes = {"gen_ai.operation.name": TOOL, "gen_ai.tool.name": tool, "gen_ai.tool.call.arguments": arguments}
    return make_span(number, attributes=attributes | fields.pop("attributes", {}), **fields)


def hex_id(number: int) -> str:
    return number.to_bytes(8, "big").hex()


# --- identity and context -----------------------------------------------------------------------

AGENT = {"gen_ai.operation.name": "invoke_agent"}


def test_identity_is_the_root_agent_id_then_name_then_the_earliest_agent_span_then_service_name() -> None:
    service = {"service.name": "svc"}
    root = make_span(1, resource=service)
    named_agent = make_span(2, parent=1, start=T0 + MS, attributes={**AGENT, "gen_ai.agent.name": "Planner"})
    later_agent = make_span(3, parent=1, start=T0 + 2 * MS, attributes={**AGENT, "gen_ai.agent.id": "agent-9"})
    not_an_agent = make_span(4, parent=1, attributes={"gen_ai.agent.name": "Tool-ish"})
    assert map_run("r", [root, named_agent, later_agent]).identity == "Planner"
    assert map_run("r", [root, later_agent]).identity == "agent-9"
    assert map_run("r", [root, not_an_agent]).identity == "svc"
    root_named = make_span(1, resource=service, attributes={"gen_ai.agent.name": "Root", "gen_ai.agent.id": "root-1"})
    assert map_run("r", [root_named, named_agent]).identity == "root-1"
    assert map_run("r", [make_span(1)]).identity is None


def test_without_a_parentless_span_the_earliest_span_is_the_root() -> None:
    orphan = make_span(2, parent=9, start=T0, resource={"service.name": "first"})
    later = make_span(3, parent=9, start=T0 + MS, resource={"service.name": "second"})
    assert map_run("r", [later, orphan]).identity == "first"


def test_suite_task_and_trial_come_from_span_or_resource_attributes() -> None:
    root = make_span(1, attributes={"repute.task_id": "task-3"}, resource={"repute.suite": "swe", "repute.trial": "2"})
    run = map_run("r", [root])
    assert (run.suite, run.task_id, run.trial) == ("swe", "task-3", 2)
    assert map_run("r", [make_span(1, attributes={"repute.trial": 0})]).trial == 0
    unreadable = map_run("r", [make_span(1, attributes={"repute.trial": "second", "repute.suite": ["x"]})])
    assert (unreadable.suite, unreadable.task_id, unreadable.trial) == (None, None, None)


def test_the_root_span_names_the_context_before_an_earlier_span_below_it() -> None:
    """A span that starts before the root (its clock ahead) names another suite: the root's is the run's,
    from its attributes and then from its resource. Broken on purpose: the spans read in run order, not
    roots first → the earlier span's."""
    early = make_span(
        2, parent=1, start=T0 - MS, attributes={"repute.suite": "child"}, resource={"repute.task_id": "c"}
    )
    root = make_span(1, start=T0, attributes={"repute.suite": "root"}, resource={"repute.task_id": "r"})
    run = map_run("r", [early, root])
    assert (run.suite, run.task_id) == ("root", "r")


def test_the_run_spans_from_the_earliest_start_to_the_latest_end() -> None:
    long_root = make_span(1, start=T0, end=T0 + 9 * MS)
    last_start = make_span(2, parent=1, start=T0 + 5 * MS, end=T0 + 6 * MS)
    run = map_run("r", [last_start, long_root])
    assert (run.started_unix_nano, run.ended_unix_nano) == (T0, T0 + 9 * MS)


# --- events -------------------------------------------------------------------------------------


def test_spans_are_ordered_by_start_then_end_then_span_id() -> None:
    spans = [
        tool_span(9, start=T0 + 2 * MS),
        tool_span(5, start=T0, end=T0 + 3 * MS),
        tool_span(7, start=T0, end=T0 + MS),
        tool_span(3, start=T0, end=T0 + 3 * MS),
    ]
    span_ids = [event["span_id"] for event in map_run("r", spans).events if event["event"] == "tool_call"]
    assert span_ids == [hex_id(7), hex_id(3), hex_id(5), hex_id(9)]


def test_a_tool_span_gives_a_call_then_its_output_and_a_failed_one_its_error() -> None:
    ok, failed = tool_span(1), tool_span(2, start=T0 + MS, error=True, message="no network")
    events = map_run("r", [failed, ok]).events
    common = {"event_id": hex_id(1), "span_id": hex_id(1), "timestamp": "2023-11-14T22:13:20.000Z"}
    assert events[:2] == [
        {"event": "tool_call", **common, "tool": "search", "args": {"q": "x"}},
        {"event": "tool_output", **common, "tool": "search", "status": "ok"},
    ]
    assert [(e["event"], e.get("status"), e.get("error"), e.get("message")) for e in events[2:]] == [
        ("tool_call", None, None, None),
        ("tool_output", "error", None, None),
        ("error_event", None, "error", "no network"),
    ]


@pytest.mark.parametrize(
    ("attributes", "name", "tool", "args"),
    [
        ({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t", "gen_ai.tool.args": '{"a": 1}'},
         "span", "t", {"a": 1}),
        ({"openinference.span.kind": "TOOL", "tool.name": "t", "input.value": '{"a": 1}',
          "tool.parameters": '{"type": "object"}'}, "span", "t", {"a": 1}),  # tool.parameters: a schema
        ({"traceloop.span.kind": "tool", "traceloop.entity.name": "t", "traceloop.entity.input": '{"a": 1}'},
         "span", "t", {"a": 1}),
        ({"gen_ai.operation.name": "execute_tool", "gcp.vertex.agent.tool_call_args": '{"a": 1}'},
         "execute_tool t", "execute_tool t", {"a": 1}),  # no name attribute: the span's name
        ({"openinference.span.kind": "TOOL", "input.value": "{'a': 1}"}, "t", "t", {"span": hex_id(1)}),
    ],
)  # fmt: skip
def test_tool_spans_of_every_convention(attributes: dict, name: str, tool: str, args: dict) -> None:
    call, output = map_run("r", [make_span(1, name=name, attributes=attributes)]).events
    assert (call["event"], call["tool"], call["args"], output["event"], output["tool"]) == (
        "tool_call", tool, args, "tool_output", tool
    )  # fmt: skip


@pytest.mark.parametrize(
    "arguments",
    ["[1, 2]", "not json", "", 7, None, '{"a": ' * 40 + "1" + "}" * 40],  # the last nests too deep
)
def test_unknown_tool_arguments_name_the_span_so_they_never_match(arguments: Any) -> None:
    spans = [tool_span(1, arguments=arguments), tool_span(2, start=T0 + MS, arguments=arguments)]
    calls = [event["args"] for event in map_run("r", spans).events if event["event"] == "tool_call"]
    assert calls == [{"span": hex_id(1)}, {"span": hex_id(2)}]


def test_a_kvlist_argument_value_is_an_object() -> None:
    assert map_run("r", [tool_span(1, arguments={"path": "/tmp"})]).events[0]["args"] == {"path": "/tmp"}


def test_the_tool_call_id_is_kept() -> None:
    span = tool_span(1, attributes={"gen_ai.tool.call.id": "call_42"})
    assert map_run("r", [span]).events[0]["call_id"] == "call_42"


@pytest.mark.parametrize(
    ("usage", "total", "split"),
    [
        ({"gen_ai.usage.input_tokens": 1200, "gen_ai.usage.output_tokens": "300"}, 1500, (1200, 300)),
        ({"gen_ai.usage.prompt_tokens": 70, "gen_ai.usage.completion_tokens": 30}, 100, (70, 30)),
        ({"llm.usage.prompt_tokens": 7, "llm.usage.completion_tokens": 3, "llm.usage.total_tokens": 99}, 10, (7, 3)),
        ({"llm.usage.total_tokens": 99}, 99, (None, None)),
        ({"llm.token_count.prompt": 40, "llm.token_count.completion": 2}, 42, (40, 2)),
        ({"llm.token_count.total": 12}, 12, (None, None)),
        ({"gen_ai.usage.input_tokens": 5, "gen_ai.usage.prompt_tokens": 9, "gen_ai.usage.output_tokens": 1}, 6, (5, 1)),
        ({"gen_ai.usage.output_tokens": 9.0}, 9, (0, 9)),
        ({"gen_ai.usage.input_tokens": 10**13}, 0, (0, 0)),  # beyond any real count: unreadable
    ],
)  # fmt: skip
def test_token_usage_comes_from_the_first_family_present(usage: dict, total: int, split: tuple) -> None:
    (event,) = map_run("r", [make_span(1, attributes=usage)]).events
    assert (event["event"], event["total_tokens"]) == ("token_usage", total)
    assert (event.get("input_tokens"), event.get("output_tokens")) == split


def test_a_usage_event_keeps_the_model_provider_and_finish_reasons() -> None:
    attributes = {
        "gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 3, "gen_ai.usage.output_tokens": 4,
        "gen_ai.request.model": "gpt-4", "gen_ai.response.model": "gpt-4-0613", "gen_ai.system": "openai",
        "gen_ai.response.finish_reasons": ["stop"],
    }  # fmt: skip
    (event,) = map_run("r", [make_span(1, attributes=attributes)]).events
    assert (event["model"], event["provider"], event["finish_reasons"]) == ("gpt-4-0613", "openai", ["stop"])


def test_nested_spans_carrying_the_same_request_count_it_once() -> None:
    usage = {"gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 20}
    agent = make_span(1, attributes={**AGENT, "gen_ai.agent.name": "a", "llm.token_count.total": 240})
    framework = make_span(2, parent=1, attributes={"gen_ai.operation.name": "call_llm", **usage})
    sdk = make_span(3, parent=2, name="openai.chat", attributes={"llm.request.type": "chat", **usage})
    second = make_span(4, parent=1, start=T0 + MS, attributes={"gen_ai.operation.name": "chat", **usage})
    events = map_run("r", [agent, framework, sdk, second]).events
    assert [(e["span_id"], e["event"]) for e in events] == [
        (hex_id(1), "state_transition"), (hex_id(3), "token_usage"), (hex_id(4), "token_usage"),
    ]  # fmt: skip
    assert sum(e["total_tokens"] for e in events if e["event"] == "token_usage") == 240
    assert [e["event"] for e in map_run("r", [agent]).events] == ["state_transition", "token_usage"]


@pytest.mark.parametrize(
    "attributes",
    [{"gen_ai.operation.name": "chat"}, {"openinference.span.kind": "LLM"}, {"llm.request.type": "chat"}],
)
def test_every_model_call_is_visible_without_usage_once(attributes: dict) -> None:
    """SPEC §3.4: a model call that records no usage (Koog, BeeAI) gives a token_usage of 0 with its model;
    one wrapping another model call gives nothing (the inner one is the call). Dropping the silent calls,
    or giving the wrapper one too, fails."""
    call = make_span(1, attributes={**attributes, "llm.model_name": "m-1"})
    (event,) = map_run("r", [call]).events
    assert (event["event"], event["total_tokens"], event["model"]) == ("token_usage", 0, "m-1")
    inner = make_span(2, parent=1, attributes={"gen_ai.operation.name": "chat"})
    assert [(e["span_id"], e["total_tokens"]) for e in map_run("r", [call, inner]).events] == [(hex_id(2), 0)]


@pytest.mark.parametrize(
    "attributes",
    [
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Planner"},
        {"gen_ai.operation.name": "create_agent", "gen_ai.agent.name": "Planner"},
        {"openinference.span.kind": "AGENT", "gen_ai.agent.name": "Planner"},
        {"traceloop.span.kind": "agent", "gen_ai.agent.name": "Planner"},
    ],
)
def test_agent_spans_give_a_state_transition_naming_the_agent(attributes: dict) -> None:
    (event,) = map_run("r", [make_span(1, attributes=attributes)]).events
    assert (event["event"], event["agent"]) == ("state_transition", "Planner")


@pytest.mark.parametrize(
    "attributes",
    [{}, {"gen_ai.operation.name": "embeddings"}, {"gen_ai.operation.name": ["chat"]}, {"gen_ai.system": "openai"},
     {"openinference.span.kind": "CHAIN"}],
)  # fmt: skip
def test_spans_that_are_not_agent_evidence_map_to_nothing(attributes: dict[str, Any]) -> None:
    assert map_run("r", [make_span(1, attributes=attributes)]).events == []


def test_an_error_span_gives_exactly_one_error_event() -> None:
    exception = SpanEvent("exception", {"exception.type": "TimeoutError", "exception.message": "slow"})
    last = SpanEvent("exception", {"exception.type": "ValueError", "exception.message": "bad value"})
    spans = [
        make_span(
            1, error=True, message="rate limited", attributes={"error.type": "RateLimitError"}, events=(exception,)
        ),
        make_span(2, start=T0 + MS, error=True, events=(exception, SpanEvent("retry", {}), last)),
        make_span(3, start=T0 + 2 * MS, error=True, attributes={"http.response.status_code": 503}),
        make_span(4, start=T0 + 3 * MS, error=True, attributes={"http.status_code": "404"}, message="x" * 2000),
        make_span(5, start=T0 + 4 * MS, error=True),
    ]
    events = map_run("r", spans).events
    assert [(e["event"], e["error"], e.get("message")) for e in events] == [
        ("error_event", "RateLimitError", "rate limited"),
        ("error_event", "ValueError", "bad value"),
        ("error_event", "http_503", None),
        ("error_event", "http_404", "x" * 1000),
        ("error_event", "error", None),
    ]


def test_a_handled_exception_is_no_error() -> None:
    cancelled = SpanEvent("exception", {"exception.type": "asyncio.CancelledError"})
    span = make_span(1, name="dequeue_event", events=(cancelled, cancelled))
    assert map_run("r", [span]).events == []


def test_events_are_valid_run_events_with_the_span_start_as_timestamp() -> None:
    span = tool_span(1, start=T0 + 1_234_567_891)
    events = map_run("r", [span]).events
    assert [event.timestamp_ms for event in normalize_events(events)] == [(T0 + 1_234_567_891) // MS] * 2
    assert events[0]["timestamp"] == "2023-11-14T22:13:21.234Z"


def test_resends_and_twins_collapse_to_one_span() -> None:
    span = tool_span(1)
    assert map_run("r", [span, span, tool_span(1)]).events == map_run("r", [span]).events


def test_differing_copies_of_a_span_collapse_the_same_way_whatever_their_order() -> None:
    first, second = tool_span(1, tool="a"), tool_span(1, tool="b")
    assert map_run("r", [first, second]) == map_run("r", [second, first])
    assert len(map_run("r", [first, second]).events) == 2


# --- execution errors (SPEC §6) -----------------------------------------------------------------


def staged_run(*spans: Span) -> dict[str, str] | None:
    return map_run("r", list(spans)).execution


def provider_failure(number: int, parent: int | None, **attributes: Any) -> Span:
    attributes = {"error.type": "provider_error", **attributes}
    return make_span(number, parent=parent, start=T0 + number * MS, error=True, message="503", attributes=attributes)


def test_a_known_reason_inside_a_staged_span_is_an_execution_error() -> None:
    stage = make_span(1, attributes={"repute.stage": "agent"})
    middle = make_span(2, parent=1)
    assert staged_run(stage, middle, provider_failure(3, parent=2)) == {
        "status": "execution_error",
        "stage": "agent",
        "reason": "provider_error",
        "message": "503",
    }


def test_the_error_span_may_carry_the_stage_itself_and_the_nearest_stage_wins() -> None:
    outer = make_span(1, attributes={"repute.stage": "setup"})
    inner = make_span(2, parent=1, attributes={"repute.stage": "evaluator"})
    assert staged_run(outer, provider_failure(3, parent=1, **{"repute.stage": "teardown"}))["stage"] == "teardown"
    assert staged_run(outer, inner, provider_failure(3, parent=2))["stage"] == "evaluator"
    unknown = make_span(2, parent=1, attributes={"repute.stage": "warmup"})
    assert staged_run(outer, unknown, provider_failure(3, parent=2))["stage"] == "setup"


def test_the_first_failing_span_names_the_execution_error() -> None:
    stage = make_span(1, attributes={"repute.stage": "repo_setup"})
    clone = make_span(2, parent=1, start=T0 + MS, error=True, attributes={"error.type": "clone_error"})
    later = provider_failure(3, parent=1)
    execution = staged_run(later, clone, stage)
    assert execution == {
        "status": "execution_error",
        "stage": "repo_setup",
        "reason": "clone_error",
        "message": "clone_error",
    }


@pytest.mark.parametrize(
    "spans",
    [
        [provider_failure(2, parent=1)],  # no stage anywhere (the parent has not arrived)
        [make_span(1, attributes={"repute.stage": "warmup"}), provider_failure(2, parent=1)],  # unknown stage
        [make_span(1, attributes={"repute.stage": "agent"}), provider_failure(2, parent=1, **{"error.type": "Boom"})],
        [make_span(1, attributes={"repute.stage": "agent", "error.type": "provider_error"})],  # not an ERROR span
        [make_span(1, resource={"repute.stage": "agent"}), provider_failure(2, parent=1)],  # a resource is no span
    ],
)
def test_other_errors_are_not_execution_errors(spans: list[Span]) -> None:
    assert staged_run(*spans) is None


def test_a_parent_cycle_ends_the_stage_search() -> None:
    loop_a = make_span(1, parent=2, error=True, attributes={"error.type": "provider_error"})
    loop_b = make_span(2, parent=1)
    assert staged_run(loop_a, loop_b) is None


# --- determinism --------------------------------------------------------------------------------

NUMBERS = st.integers(1, 6)
SPANS = st.builds(
    make_span,
    NUMBERS,
    trace_id=st.sampled_from([TRACE_A, TRACE_B]),
    parent=st.none() | NUMBERS,
    start=st.integers(T0, T0 + 3 * MS),
    end=st.none() | st.integers(T0, T0 + 3 * MS),
    attributes=st.fixed_dictionaries(
        {},
        optional={
            "gen_ai.operation.name": st.sampled_from(["execute_tool", "chat", "invoke_agent", "embeddings"]),
            "gen_ai.tool.name": st.sampled_from(["a", "b"]),
            "gen_ai.agent.name": st.sampled_from(["p", "q"]),
            "gen_ai.usage.input_tokens": st.integers(0, 10),
            "gen_ai.conversation.id": st.sampled_from(["c1", "c2"]),
            "error.type": st.sampled_from(["provider_error", "Boom"]),
            "repute.stage": st.sampled_from(["agent", "nope"]),
        },
    ),
    error=st.booleans(),
    events=st.lists(st.builds(SpanEvent, st.sampled_from(["exception", "log"]), st.just({}))).map(tuple),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SPANS, max_size=12), st.randoms(use_true_random=False))
def test_runs_do_not_depend_on_span_arrival_order(spans: list[Span], shuffler: random.Random) -> None:
    shuffled = spans[:]
    shuffler.shuffle(shuffled)
    runs = {run_id: map_run(run_id, group) for run_id, group in group_runs(spans).items()}
    assert runs == {run_id: map_run(run_id, group) for run_id, group in group_runs(shuffled).items()}
    for run in runs.values():
        normalize_events(run.events)
